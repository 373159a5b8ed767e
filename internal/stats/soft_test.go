package stats_test

import (
	"math"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/stats"
)

func TestParseBoundIfDecidable(t *testing.T) {
	for spec, want := range map[string]string{
		"tps=-5% if decidable":        "tps=-5% if decidable",
		" tps@c=8=-5%  if  decidable": "tps@c=8=-5% if decidable",
		"tps=-5%":                     "tps=-5%",
	} {
		b, err := stats.ParseBound(spec)
		if err != nil {
			t.Errorf("ParseBound(%q): %v", spec, err)
			continue
		}
		if b.String() != want || b.IfDecidable != strings.HasSuffix(want, "if decidable") {
			t.Errorf("ParseBound(%q) = %+v (%q), want %q", spec, b, b, want)
		}
	}
	if _, err := stats.ParseBound("tps=-5% if quiet"); err == nil || !strings.Contains(err.Error(), `"if decidable"`) {
		t.Errorf("a word after the limit other than if decidable: %v", err)
	}
	bs, err := stats.ParseBounds([]string{"tps=-5% if decidable,p99=+10%"})
	if err != nil || len(bs) != 2 || !bs[0].IfDecidable || bs[1].IfDecidable {
		t.Errorf("a comma list with if decidable: %v %v", bs, err)
	}
	if got := strings.Join(bs.Strings(), ","); got != "tps=-5% if decidable,p99=+10%" {
		t.Errorf("Strings() = %q", got)
	}
}

// DetectableChange is RoundsToDetect turned around: n units detect the
// change they return, and a few per cent less needs more units.
func TestDetectableChange(t *testing.T) {
	for _, sd := range []float64{0.001, 0.05, 0.25} {
		for _, n := range []int{3, 6, 20, 30} {
			d := stats.DetectableChange(sd, n, 0.95, stats.DefaultPower)
			if got := stats.RoundsToDetect(sd, d*1.0001, 0.95, stats.DefaultPower); got > n {
				t.Errorf("sd %v, %d units: %v needs %d units", sd, n, d, got)
			}
			if got := stats.RoundsToDetect(sd, d*0.97, 0.95, stats.DefaultPower); got <= n {
				t.Errorf("sd %v, %d units: 3%% less than %v needs only %d units", sd, n, d, got)
			}
		}
	}
	if d := stats.DetectableChange(0.1, 1, 0.95, stats.DefaultPower); !math.IsInf(d, 1) {
		t.Errorf("one unit detects %v", d)
	}
}

// A bound "if decidable" on a measure whose spread is too wide for the
// rounds the run may take decides nothing and does not make the verdict
// inconclusive; where the spread allows, it decides as any bound; and a
// verdict whose every bound is beyond the spread is inconclusive: nothing
// was decided, so nothing passed.
func TestSoftBounds(t *testing.T) {
	native := paired("tps", "c=8", up, 6, math.Log(0.97), 0.25)     // ±25 % a round
	counted := paired("pooler-instr/txn", "c=1", down, 6, 0, 0.001) // ±0.1 %
	counted.Measure.Counted = true
	seq := stats.Options{Sequential: &stats.Sequential{Look: 6, Max: 20}}

	v, err := stats.Evaluate([]stats.Comparison{native, counted}, mustBounds(t, "tps=-5% if decidable", "pooler-instr/txn=+1%"), seq)
	if err != nil {
		t.Fatal(err)
	}
	tps, instr := v.Assessments[0], v.Assessments[1]
	if !tps.Undecidable || tps.Outcome != stats.NoBound || tps.Units != 20 || !(tps.Detectable > 0.2) {
		t.Errorf("tps: %+v", tps)
	}
	if !strings.Contains(tps.Reason, "20 rounds tell a change of about") || tps.StatusText() != "beyond this runner" {
		t.Errorf("tps: reason %q, status %q", tps.Reason, tps.StatusText())
	}
	if instr.Outcome != stats.Pass || v.Outcome != stats.Pass || v.Bounded != 1 || v.Undecidable != 1 {
		t.Errorf("verdict %s, bounded %d, undecidable %d; instr %s", v.Outcome, v.Bounded, v.Undecidable, instr.Outcome)
	}
	if !strings.HasPrefix(v.Headline(), "passed: the bounded measure is within its bound") || !strings.HasSuffix(v.Counts(), "; 1 bound beyond this runner's spread") {
		t.Errorf("headline %q, counts %q", v.Headline(), v.Counts())
	}

	// A quiet runner: ±1 % a round decides -5 % in 20 rounds.
	quiet := paired("tps", "c=8", up, 6, math.Log(0.99), 0.01)
	v, _ = stats.Evaluate([]stats.Comparison{quiet}, mustBounds(t, "tps=-5% if decidable"), seq)
	if a := v.Assessments[0]; a.Undecidable || a.Outcome != stats.Pass {
		t.Errorf("quiet tps: %s, %+v", a.Outcome, a)
	}

	// Nothing but bounds beyond the spread: nothing decided.
	v, _ = stats.Evaluate([]stats.Comparison{native}, mustBounds(t, "tps=-5% if decidable"), seq)
	if v.Outcome != stats.Inconclusive || !strings.HasPrefix(v.Headline(), "inconclusive: nothing decided: 1 bounded measure beyond what this runner's spread can decide: tps@c=8") {
		t.Errorf("only undecidable: %s %q", v.Outcome, v.Headline())
	}

	// The same bound asked for as it is stays inconclusive.
	v, _ = stats.Evaluate([]stats.Comparison{native}, mustBounds(t, "tps=-5%"), seq)
	if a := v.Assessments[0]; a.Undecidable || a.Outcome != stats.Inconclusive {
		t.Errorf("asked: %+v", a)
	}
}

// A measure that depends on timing takes a bound for every step only
// where the spread decides it; a bound naming its step applies as given.
func TestTimingMeasureBounds(t *testing.T) {
	c4 := paired("pooler-instr/txn", "c=4", down, 6, math.Log(0.995), 0.028)
	c4.Measure.Counted, c4.Measure.Timing = true, "event-loop batching"
	c1 := paired("pooler-instr/txn", "c=1", down, 6, 0, 0.001)
	c1.Measure.Counted = true
	seq := stats.Options{Sequential: &stats.Sequential{Look: 6, Max: 30}}
	v, err := stats.Evaluate([]stats.Comparison{c1, c4}, mustBounds(t, "pooler-instr/txn=+1%"), seq)
	if err != nil {
		t.Fatal(err)
	}
	if a := v.Assessments[1]; !a.Soft || !a.Undecidable || !strings.Contains(a.Reason, "it depends on timing (event-loop batching)") {
		t.Errorf("c=4 under a bound for every step: %+v", a)
	}
	if v.Outcome != stats.Pass {
		t.Errorf("verdict %s, want pass (c=1 decided; c=4 beyond the spread)", v.Outcome)
	}
	v, _ = stats.Evaluate([]stats.Comparison{c1, c4}, mustBounds(t, "pooler-instr/txn=+1%", "pooler-instr/txn@c=4=+1%"), seq)
	if a := v.Assessments[1]; a.Soft || a.Undecidable || a.Outcome != stats.Inconclusive || v.Outcome != stats.Inconclusive {
		t.Errorf("c=4 bounded by name: %s, %+v", v.Outcome, a)
	}
}
