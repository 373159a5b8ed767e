package flame

import (
	"math"
	"testing"
)

// tree is a profile's call tree of main calling find_server and the rest
// of the work, each side's counts per transaction times txns.
func tree(find, rest, txns int64) *node {
	root := &node{name: "all"}
	m := root.child("main", "pgbouncer")
	f := m.child("find_server", "pgbouncer")
	r := m.child("other_work", "pgbouncer")
	f.value, f.self = find*txns, find*txns
	r.value, r.self = rest*txns, rest*txns
	m.value = f.value + r.value
	root.value = m.value
	return root
}

// frameNamed is the frame of a function in a differential graph.
func frameNamed(t *testing.T, d Diff, name string) DiffFrame {
	t.Helper()
	for _, f := range d.Frames {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no frame %s in %+v", name, d.Frames)
	return DiffFrame{}
}

// Issue 44's finding 4: a function that gained 4 instructions a
// transaction (62 → 66) while the rest grew more drew smaller in a graph
// of shares (8.60 % → 8.56 %). By counts per transaction it is drawn as
// grown, and, counted under Valgrind, as changed because the comparison's
// per-function tests named it; the rest, which no test named, is pale.
func TestFlameDiffPerTransaction(t *testing.T) {
	d := Diff{Unit: "instructions", BaseTxns: 1000, CandTxns: 1200,
		named: map[string]bool{frameKey("find_server", "pgbouncer"): true}}
	d.layout(tree(66, 705, 1200), tree(62, 659, 1000))
	f := frameNamed(t, d, "find_server")
	if !(f.CandShare < f.BaseShare) {
		t.Fatalf("the fixture's shares %v → %v: find_server should have shrunk as a share", f.BaseShare, f.CandShare)
	}
	if f.BasePerTxn != 62 || f.CandPerTxn != 66 || math.Abs(f.Change-4.0/62) > 1e-6 || !f.Significant {
		t.Errorf("find_server: %v → %v a transaction, change %v, drawn as changed %v; want 62 → 66, +6.5%%, changed", f.BasePerTxn, f.CandPerTxn, f.Change, f.Significant)
	}
	if o := frameNamed(t, d, "other_work"); o.Significant || !(o.Change > 0) {
		t.Errorf("other_work, named by no test: change %v, drawn as changed %v", o.Change, o.Significant)
	}
	if m := frameNamed(t, d, "main"); !m.Significant {
		t.Errorf("main, which holds find_server, is not drawn as changed")
	}

	// perf's samples: the same counts as samples, tested as rates over
	// the transactions; a side whose transactions are unknown compares
	// shares, as before.
	s := Diff{BaseTxns: 1000, CandTxns: 1200}
	s.layout(tree(66, 705, 1200), tree(62, 659, 1000))
	if f := frameNamed(t, s, "find_server"); !(f.Change > 0) || !f.Significant {
		t.Errorf("sampled find_server: change %v, drawn as changed %v", f.Change, f.Significant)
	}
	u := Diff{}
	u.layout(tree(66, 705, 1200), tree(62, 659, 1000))
	if f := frameNamed(t, u, "find_server"); !(f.Change < 0) || !math.IsNaN(f.CandPerTxn) {
		t.Errorf("without transactions: change %v, per transaction %v", f.Change, f.CandPerTxn)
	}
}
