package compare_test

import (
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/compare/comparetest"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
)

// A counted run through a pooler at 1 and 4 clients, bounded as the
// pooler bot asks (pooler-instr/txn=+1%, every step): at one client the
// count decides; at 4, where how the clients' packets bunch moves the
// pooler's count ±3 % from layout to layout, the measure is labelled as
// depending on timing, left unbounded, and said once; the verdict passes.
func TestCountedTimingIsReportedNotBounded(t *testing.T) {
	wobble := []float64{1, 1.04, 0.97, 1.03, 0.96, 1.02}
	per := func(side, round int) *result.Instructions {
		return &result.Instructions{Tool: "callgrind", Transactions: 100, ClientBackends: 100 * 100000, PerTxn: 100000}
	}
	sides := comparetest.TwoSides()
	for _, s := range sides {
		s.TPS[4] = comparetest.Base2
	}
	inputs := comparetest.Files(t, sides, []int{1, 4}, 6)
	comparetest.Layouts(inputs, 6, 1, true)
	comparetest.Counted(inputs, per)
	for side, in := range inputs {
		for i := range in.File.Steps {
			s := &in.File.Steps[i]
			v := 4200.0
			if s.Clients == 4 && side == 1 {
				v *= wobble[s.Round-1]
			}
			s.Probes.Instructions().PoolerPerTxn = v
		}
	}
	rep := comparetest.Compare(t, inputs, "pooler-instr/txn=+1%")
	c1, c4 := rowOf(t, rep, "pooler-instr/txn", "c=1"), rowOf(t, rep, "pooler-instr/txn", "c=4")
	if c1.Outcome != stats.Pass || c1.Measure.Timing != "" {
		t.Errorf("c=1: %s, timing %q", c1.Outcome, c1.Measure.Timing)
	}
	if !c4.Undecidable || !strings.HasPrefix(c4.Measure.Timing, "event-loop batching") || c4.StatusText() != "beyond this runner" {
		t.Errorf("c=4: %+v", c4)
	}
	if rep.Outcome() != stats.Pass {
		t.Errorf("verdict %s, want pass: %s", rep.Outcome(), rep.Headline())
	}
	r := rep.Reach
	if r == nil || len(r.Timing) != 1 || r.Timing[0].Clients[0] != 4 || len(r.Native) != 0 || r.Decided != "the counted measures decided" {
		t.Fatalf("reach %+v", r)
	}
	for _, want := range []string{"pooler-instr/txn at 4 clients depends on timing (event-loop batching", "per layout: reported, not bounded.", "The counted measures decided."} {
		if !strings.Contains(r.Text, want) {
			t.Errorf("reach lacks %q: %s", want, r.Text)
		}
	}
	t.Log(r.Text)
	if findings := rep.Findings[0]; len(findings) != 0 {
		t.Errorf("findings %+v: a measure left to the spread is no finding", findings)
	}
}

// Natively, on a runner whose throughput moves a quarter from round to
// round, a bound "if decidable" is said once, with the spread and what
// the rounds could see, and decides nothing: with nothing else bounded,
// the verdict is inconclusive (no pass it cannot show); beside a bound
// that decided, it passes.
func TestNativeBeyondTheSpreadSaidOnce(t *testing.T) {
	sides := comparetest.TwoSides()
	sides[1].TPS[1] = comparetest.Scaled(comparetest.Base1, 0.7, 1.3, 0.75, 1.25, 0.8, 1.2)
	inputs := comparetest.Files(t, sides, []int{1, 2}, 6)
	rep := comparetest.Compare(t, inputs, "tps@c=1=-5% if decidable")
	if rep.Outcome() != stats.Inconclusive || rep.Reach == nil || rep.Reach.Decided != "nothing else was bounded, so nothing was decided" {
		t.Fatalf("verdict %s, reach %+v", rep.Outcome(), rep.Reach)
	}
	if !strings.HasPrefix(rep.Reach.Text, "This runner's spread is ±") || !strings.Contains(rep.Reach.Text, "per round natively: in 6 rounds it cannot see changes under about ") ||
		!strings.Contains(rep.Reach.Text, "(tps), so those bounds decide nothing here.") {
		t.Errorf("reach: %s", rep.Reach.Text)
	}
	rep = comparetest.Compare(t, inputs, "tps@c=1=-5% if decidable", "tps@c=2=-5%")
	if rep.Outcome() != stats.Pass || rep.Reach.Decided != "the other bounded measures decided" {
		t.Errorf("beside a decided bound: %s, %+v", rep.Outcome(), rep.Reach)
	}
	if rep := comparetest.Compare(t, inputs, "tps@c=2=-5%"); rep.Reach != nil {
		t.Errorf("nothing left to the spread, and a reach: %+v", rep.Reach)
	}
	t.Log(comparetest.Compare(t, inputs, "tps@c=1=-5% if decidable", "tps@c=2=-5%").Reach.Text)
}
