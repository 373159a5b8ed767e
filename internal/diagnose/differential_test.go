package diagnose_test

import (
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
)

// rounds builds n rounds of a step from one shape, its wait samples
// nudged per round so that shares vary a little.
func rounds(n int, mk func(r int) result.Step) []result.Step {
	var out []result.Step
	for r := 0; r < n; r++ {
		out = append(out, mk(r))
	}
	return out
}

func change(base, rel, halfWidth float64) diagnose.Change {
	return diagnose.Change{Known: true, Base: base, Cand: base * (1 + rel), Change: rel, Lo: rel - halfWidth, Hi: rel + halfWidth, Significant: true}
}

// More work per transaction, the same waits: the sentence.
func TestExplainMoreWork(t *testing.T) {
	same := func(r int) result.Step {
		return step(2, 20000, 0.99, 8, 5, 1, map[string]int64{"CPU": int64(500 + 7*r), "Client:ClientRead": int64(500 - 5*r)})
	}
	ds := diagnose.DiffStep{Clients: 2, Base: rounds(6, same), Cand: rounds(6, same), Changes: map[string]diagnose.Change{
		"tps":             change(20000, -0.19, 0.03),
		"server-cpu/txn":  change(9.13, 0.23, 0.044),
		"server-user/txn": change(7, 0.27, 0.05),
		"server-sys/txn":  {Known: true, Base: 2.1, Cand: 2.1, Change: 0.01, Lo: -0.02, Hi: 0.04},
		"client-cpu/txn":  change(5, 0.1, 0.02),
	}}
	d := diagnose.Explain([]diagnose.DiffStep{ds}, stats.Options{}, nil)
	want := "Slower at 2 clients (tps -19.0% ± 3.0%) because each transaction costs 23% more server CPU (+2.1 µs ± 0.4), mostly in user space (+1.9 µs); wait events are unchanged: more work, not more contention."
	if len(d.Steps) != 1 || d.Steps[0].Text != want || d.Unjudged != "" {
		t.Errorf("differential %q (unjudged %q), want %q", d.Sentences(), d.Unjudged, want)
	}
}

// A wait class that grew, named by its event, with server CPU unchanged.
func TestExplainContention(t *testing.T) {
	base := func(r int) result.Step {
		return step(8, 9000, 0.7, 8, 2, 1, map[string]int64{"CPU": int64(600 + 5*r), "LWLock:LockManager": int64(20 + r), "Client:ClientRead": 380})
	}
	cand := func(r int) result.Step {
		return step(8, 6000, 0.7, 5.4, 1.4, 1, map[string]int64{"CPU": int64(400 + 5*r), "LWLock:LockManager": int64(300 - 3*r), "LWLock:BufferContent": 10, "Client:ClientRead": 290})
	}
	ds := diagnose.DiffStep{Clients: 8, Base: rounds(6, base), Cand: rounds(6, cand), Changes: map[string]diagnose.Change{
		"tps":            change(9000, -0.33, 0.04),
		"server-cpu/txn": {Known: true, Base: 89, Cand: 90, Change: 0.01, Lo: -0.03, Hi: 0.05},
	}}
	d := diagnose.Explain([]diagnose.DiffStep{ds}, stats.Options{}, nil)
	got := strings.Join(d.Sentences(), " ")
	for _, w := range []string{"Slower at 8 clients", "backends spend more of their time in LWLock waits (2% → 30%, +28 points ± ", "mostly LWLock:LockManager",
		"server CPU per transaction is unchanged: contention, not more work."} {
		if !strings.Contains(got, w) {
			t.Errorf("differential lacks %q:\n%s", w, got)
		}
	}
}

// In slices only the meter's costs exist: the waits cannot be judged, and
// the differential says so; a faster candidate reads the other way.
func TestExplainSlicesAndFaster(t *testing.T) {
	meter := func(r int) result.Step {
		s := result.Step{Clients: 1, Complete: true, ElapsedS: 4, Round: r + 1}
		s.Summary.TPS, s.Summary.Transactions = 10000, 40000
		s.Costs = &result.Costs{ServerCPUS: 0.4, ServerUserS: 0.3, ServerSysS: 0.1, ServerCtx: 80000}
		return s
	}
	ds := diagnose.DiffStep{Clients: 1, Base: rounds(4, meter), Cand: rounds(4, meter), Changes: map[string]diagnose.Change{
		"tps":            change(10000, 0.15, 0.02),
		"server-cpu/txn": change(10, -0.14, 0.03),
	}}
	d := diagnose.Explain([]diagnose.DiffStep{ds}, stats.Options{}, nil)
	got := d.Sentences()
	if len(got) != 2 || got[0] != "Faster at 1 client (tps +15.0% ± 2.0%) because each transaction costs 14% less server CPU (-1.4 µs ± 0.3)." ||
		!strings.Contains(got[1], "an A/B run in slices runs no probes") {
		t.Errorf("differential %q", got)
	}
	// Throughput unchanged but a cost changed (issue 32, finding 4): the
	// cost is said, in the table's numbers.
	ds.Changes["tps"] = diagnose.Change{Known: true, Base: 10000, Change: 0.01, Lo: -0.02, Hi: 0.04}
	d = diagnose.Explain([]diagnose.DiffStep{ds}, stats.Options{}, nil)
	if got := d.Sentences(); len(d.Steps) != 1 || !d.Steps[0].Costs ||
		got[0] != "At 1 client throughput did not change significantly (tps +1.0% ± 3.0%), but its costs did: server-cpu/txn -14.0% ± 3.0%: 14% less server CPU per transaction." {
		t.Errorf("differential of a cost alone: %q", got)
	}
	// Nothing significant: nothing to explain.
	ds.Changes["server-cpu/txn"] = diagnose.Change{Known: true, Base: 10, Change: 0.01, Lo: -0.02, Hi: 0.04}
	if d := diagnose.Explain([]diagnose.DiffStep{ds}, stats.Options{}, nil); len(d.Steps) != 0 || d.Sentences()[0] != "No step is significantly slower or faster." {
		t.Errorf("differential of no change: %q", d.Sentences())
	}
}

// A cost whose interval excludes zero but which is not significant once
// corrected for the measures compared is said so, with the table's
// numbers, never "did not change significantly" (issue 32, finding 5).
func TestExplainQuotesTheTable(t *testing.T) {
	meter := func(r int) result.Step {
		s := result.Step{Clients: 4, Complete: true, ElapsedS: 4, Round: r + 1}
		s.Summary.TPS, s.Summary.Transactions = 10000, 40000
		s.Costs = &result.Costs{ServerCPUS: 0.4, ServerUserS: 0.3, ServerSysS: 0.1, ServerCtx: 80000}
		return s
	}
	cpu := diagnose.Change{Known: true, Base: 10, Cand: 12.44, Change: 0.244, Lo: 0.15, Hi: 0.338, P: 0.004, PHolm: 0.08, Family: 20}
	ds := diagnose.DiffStep{Clients: 4, Base: rounds(3, meter), Cand: rounds(3, meter), Changes: map[string]diagnose.Change{
		"tps": change(10000, -0.338, 0.113), "server-cpu/txn": cpu}}
	got := strings.Join(diagnose.Explain([]diagnose.DiffStep{ds}, stats.Options{}, nil).Sentences(), " ")
	if strings.Contains(got, "did not change significantly") || !strings.Contains(got, "server-cpu/txn +24.4% ± 9.4% is not significant once corrected for the 20 measures compared (p 0.004; 0.08 after Holm)") {
		t.Errorf("differential %s", got)
	}
}

// Fast-path overflow appearing in the candidate only is named.
func TestExplainFastPath(t *testing.T) {
	mk := func(exhausted int) func(int) result.Step {
		return func(r int) result.Step {
			s := step(4, 5000, 0.99, 8, 4, 10, map[string]int64{"CPU": 700, "Client:ClientRead": 300})
			s.Probes.SetLocks(&result.Locks{Snapshots: 4, FastPathSlots: 16, Exhausted: exhausted, MaxSlowWeak: 17 * min(exhausted, 1)})
			return s
		}
	}
	ds := diagnose.DiffStep{Clients: 4, Base: rounds(4, mk(0)), Cand: rounds(4, mk(3)), Changes: map[string]diagnose.Change{
		"tps": change(5000, -0.2, 0.05),
	}}
	got := strings.Join(diagnose.Explain([]diagnose.DiffStep{ds}, stats.Options{}, nil).Sentences(), " ")
	if !strings.Contains(got, "the candidate's backends overflow their 16 fast-path slots (up to 17 relation locks each in the shared lock table, in 4 of 4 rounds) and the baseline's do not") {
		t.Errorf("differential %s", got)
	}
}
