package compare_test

import (
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/compare/comparetest"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
)

// The files of a reshuffled run are compared over their layouts: the
// layout test, one value per layout, and the same change as the
// geometric mean of the per-round ratios (layouts of equal size).
func TestCompareOverLayouts(t *testing.T) {
	inputs := comparetest.Files(t, comparetest.TwoSides(), []int{1, 2}, 6)
	comparetest.Layouts(inputs, 6, 2, true)
	rep := comparetest.Compare(t, inputs)
	if rep.Layouts != 3 || rep.Reshuffle != 2 || rep.Rounds != 6 {
		t.Fatalf("%d layouts, reshuffle %d, %d rounds; want 3, 2, 6", rep.Layouts, rep.Reshuffle, rep.Rounds)
	}
	a := rep.Rows[0].Cells[0].Assessment
	if a.Test != stats.LayoutTest || a.N1 != 3 || a.LayoutDetail == nil || a.LayoutDetail.Rounds != 6 {
		t.Errorf("tps@c=1: test %q over %d values (detail %+v); want the layout test over 3 layouts", a.Test, a.N1, a.LayoutDetail)
	}
	if d := a.Change - -0.097527; d > 1e-5 || d < -1e-5 {
		t.Errorf("change %.6f, want the geometric mean of the ratios, -0.097527", a.Change)
	}
	for _, n := range rep.Notes {
		if strings.Contains(n, "kept for the whole run") {
			t.Errorf("a reshuffled run is said to have kept its clusters: %s", n)
		}
	}

	// One layout recorded for two ephemeral targets: paired by round, and
	// a note that the interval does not cover their clusters' difference.
	inputs = comparetest.Files(t, comparetest.TwoSides(), []int{1, 2}, 6)
	comparetest.Layouts(inputs, 6, 6, false)
	rep = comparetest.Compare(t, inputs)
	if rep.Layouts != 0 || rep.Rows[0].Cells[0].Assessment.Test != stats.PairedTest ||
		!strings.Contains(strings.Join(rep.Notes, "\n"), "clusters of their own, kept for the whole run") {
		t.Errorf("one layout: %d layouts, test %q, notes %q", rep.Layouts, rep.Rows[0].Cells[0].Assessment.Test, rep.Notes)
	}
	// A candidate on the baseline's cluster: said so, and no such note.
	inputs[1].File.Target.SameServerAs = "master"
	inputs[1].File.Target.SessionSettings = map[string]string{"work_mem": "8MB"}
	rep = comparetest.Compare(t, inputs)
	notes := strings.Join(rep.Notes, "\n")
	if !strings.Contains(notes, "patch ran on master's cluster (work_mem=8MB set per session)") || strings.Contains(notes, "kept for the whole run") {
		t.Errorf("same cluster: notes %q", rep.Notes)
	}

	// A reshuffled calibration's noise has the spread between layouts.
	inputs = comparetest.Files(t, comparetest.TwoSides(), []int{1, 2}, 6)
	comparetest.Layouts(inputs, 6, 2, true)
	n, err := compare.NoiseOf(inputs[0], inputs[1], stats.NoiseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Layouts != 3 || n.Reshuffle != 2 || n.Rows[0].Layouts != 3 || n.Rows[0].PerLayout != 2 || n.Rows[0].Layouts2 == 0 {
		t.Errorf("noise: %d layouts, reshuffle %d; row %+v", n.Layouts, n.Reshuffle, n.Rows[0])
	}
}

// Counted runs on a new cluster every round, whose data differs from one
// cluster to the next (an index graph built anew: 1 % more or fewer
// instructions on some): the interval covers it, and the notes say what
// the interval rests on; kept on one cluster, the rounds repeat one value,
// and the notes say the interval covers those clusters only.
func TestCountedLayouts(t *testing.T) {
	per := func(side, round int) *result.Instructions {
		v := 100000.0
		if side == 1 && round%2 == 0 {
			v *= 1.01 // this layout's candidate cluster built its data otherwise
		}
		return &result.Instructions{Tool: "callgrind", Transactions: 100, ClientBackends: uint64(v * 100), PerTxn: v}
	}
	inputs := comparetest.Files(t, comparetest.TwoSides(), []int{1}, 4)
	comparetest.Layouts(inputs, 4, 1, true)
	comparetest.Counted(inputs, per)
	rep := comparetest.Compare(t, inputs)
	a := rowOf(t, rep, "instr/txn", "c=1")
	if a.Test != stats.LayoutTest || a.N1 != 4 || (a.Hi-a.Lo)/2 < 0.005 {
		t.Errorf("instr/txn: %s over %d values, %s: want the layout test over 4 layouts, wider than ± 0.5 %%", a.Test, a.N1, stats.FormatChange(a.Change, a.Lo, a.Hi))
	}
	if notes := strings.Join(rep.Notes, "\n"); !strings.Contains(notes, "counted on 4 cluster layouts") || !strings.Contains(notes, "is in the interval") {
		t.Errorf("notes %q", rep.Notes)
	}

	inputs = comparetest.Files(t, comparetest.TwoSides(), []int{1}, 4)
	comparetest.Layouts(inputs, 4, 4, false)
	comparetest.Counted(inputs, func(side, round int) *result.Instructions { return per(side, 2) })
	rep = comparetest.Compare(t, inputs)
	if notes := strings.Join(rep.Notes, "\n"); !strings.Contains(notes, "counted on one cluster per target") ||
		!strings.Contains(notes, "order); --reshuffle 1, the default with --count, makes new ones every round") {
		t.Errorf("one cluster: notes %q", rep.Notes)
	}
	// Without words for its remedies the note names none.
	bare, err := compare.Compare(inputs, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if notes := strings.Join(bare.Notes, "\n"); !strings.Contains(notes, "a table's physical order)") || strings.Contains(notes, "reshuffle") {
		t.Errorf("one cluster, no remedies worded: notes %q", bare.Notes)
	}
}

// rowOf is the first candidate's assessment of measure at step.
func rowOf(t *testing.T, rep *compare.Comparison, measure, step string) stats.Assessment {
	t.Helper()
	for _, r := range rep.Rows {
		if r.Measure.Name == measure && r.Measure.Step == step {
			return r.Cells[0].Assessment
		}
	}
	t.Fatalf("no row %s@%s", measure, step)
	return stats.Assessment{}
}
