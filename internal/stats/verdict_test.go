package stats_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/stats"
)

// cmp builds a Comparison by hand: the verdict logic is tested on chosen
// numbers, independent of how they were estimated.
func cmp(name, step string, dir stats.Direction, change, lo, hi, p float64) stats.Comparison {
	return stats.Comparison{
		Measure: stats.Measure{Name: name, Step: step, Direction: dir},
		Method:  stats.Paired, Change: change, Lo: lo, Hi: hi, P: p, Confidence: 0.95,
	}
}

const (
	up   = stats.HigherIsBetter
	down = stats.LowerIsBetter
)

func mustBounds(t *testing.T, specs ...string) stats.Bounds {
	t.Helper()
	bs, err := stats.ParseBounds(specs)
	if err != nil {
		t.Fatal(err)
	}
	return bs
}

// rounds returns n per-round log ratios spread about mean: mean ± sd
// alternately, so that their mean is mean and their spread about sd.
func rounds(n int, mean, sd float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		x := mean + sd
		if i%2 == 1 {
			x = mean - sd
		}
		if n%2 == 1 && i == n-1 {
			x = mean
		}
		out[i] = math.Exp(x)
	}
	return out
}

// paired compares n rounds of log ratios about mean ± sd.
func paired(name, step string, dir stats.Direction, n int, mean, sd float64) stats.Comparison {
	return stats.ComparePaired(stats.Measure{Name: name, Step: step, Direction: dir}, ones(n), rounds(n, mean, sd), stats.Options{})
}

func TestEvaluateOutcomes(t *testing.T) {
	tests := []struct {
		name     string
		cs       []stats.Comparison
		bounds   []string
		outcome  []stats.Outcome
		verdict  stats.Outcome
		headline string // its start
	}{
		{
			// Finding 5 of issue 32: -33.8% ± 11.3% against -5% is past
			// the bound with 10 rounds: fail.
			name:     "far past, enough rounds",
			cs:       []stats.Comparison{paired("tps", "c=4", up, 10, math.Log(0.662), 0.05)},
			bounds:   []string{"tps=-5%"},
			outcome:  []stats.Outcome{stats.Fail},
			verdict:  stats.Fail,
			headline: "failed: the bounded measure past its bound: tps@c=4 -33.8%",
		},
		{
			// The same with 3 rounds: past the bound, but too few rounds
			// for the distribution-free check: inconclusive, never
			// "within bounds".
			name:     "far past, 3 rounds",
			cs:       []stats.Comparison{paired("tps", "c=4", up, 3, math.Log(0.662), 0.05)},
			bounds:   []string{"tps=-5%"},
			outcome:  []stats.Outcome{stats.Inconclusive},
			verdict:  stats.Inconclusive,
			headline: "inconclusive: the bounded measure undecided: tps@c=4 -33.8%",
		},
		{
			// Finding 2: +4.5% ± 18.2% against +5%: the interval reaches
			// across the bound: inconclusive, not "passed".
			name:     "wide interval",
			cs:       []stats.Comparison{paired("pooler-cpu/txn", "c=4", down, 4, math.Log(1.045), 0.11)},
			bounds:   []string{"pooler-cpu/txn=+5%"},
			outcome:  []stats.Outcome{stats.Inconclusive},
			verdict:  stats.Inconclusive,
			headline: "inconclusive: the bounded measure undecided: pooler-cpu/txn@c=4 +4.5%",
		},
		{
			// A tight interval on the good side passes, even with a few
			// rounds: passing needs no distribution-free check.
			name:     "tight, within",
			cs:       []stats.Comparison{paired("tps", "c=4", up, 4, math.Log(1.001), 0.004)},
			bounds:   []string{"tps=-5%"},
			outcome:  []stats.Outcome{stats.Pass},
			verdict:  stats.Pass,
			headline: "passed: the bounded measure is within its bound",
		},
		{
			// Worst wins: one failed, one inconclusive, one passed; the
			// unbounded measure decides nothing.
			name: "worst of three",
			cs: []stats.Comparison{
				paired("tps", "c=8", up, 8, math.Log(0.9), 0.01),
				paired("p99", "c=8", down, 8, math.Log(1.04), 0.05),
				paired("p50", "c=8", down, 8, 0, 0.005),
				paired("client-cpu/txn", "c=8", down, 8, 0.3, 0.01),
			},
			bounds:   []string{"tps=-3%", "p99=+5%", "p50=+5%"},
			outcome:  []stats.Outcome{stats.Fail, stats.Inconclusive, stats.Pass, stats.NoBound},
			verdict:  stats.Fail,
			headline: "failed: 1 of 3 bounded measures past its bound: tps@c=8 -10.0% ± 0.9%, bound -3%; 1 inconclusive: p99@c=8 +4.0%",
		},
		{
			// Finding 3: without bounds the verdict says so and lists what
			// changed; it never says "within bounds".
			name: "no bounds",
			cs: []stats.Comparison{
				paired("tps", "c=1", up, 8, 0.03, 0.001),
				paired("p99", "c=1", down, 8, 0, 0.01),
			},
			outcome:  []stats.Outcome{stats.NoBound, stats.NoBound},
			verdict:  stats.NoBound,
			headline: "no bounds given: 1 of 2 measures changed: tps@c=1 +3.0% ± 0.1% (improved)",
		},
		{
			name:     "no bounds, nothing changed",
			cs:       []stats.Comparison{paired("tps", "c=1", up, 8, 0, 0.01)},
			outcome:  []stats.Outcome{stats.NoBound},
			verdict:  stats.NoBound,
			headline: "no bounds given: none of 1 measures changed significantly",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := stats.Evaluate(tt.cs, mustBounds(t, tt.bounds...), stats.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for i, a := range v.Assessments {
				if a.Outcome != tt.outcome[i] {
					t.Errorf("%s %s: outcome %v (%s), want %v", a.Measure.Key(), stats.FormatChange(a.Change, a.Lo, a.Hi), a.Outcome, a.Reason, tt.outcome[i])
				}
				if a.Outcome == stats.Inconclusive && a.Reason == "" {
					t.Errorf("%s: inconclusive with no reason", a.Measure.Key())
				}
			}
			if v.Outcome != tt.verdict {
				t.Errorf("verdict %v, want %v", v.Outcome, tt.verdict)
			}
			if got := v.Headline(); !strings.HasPrefix(got, tt.headline) || strings.Contains(got, "within bounds") && v.Bounded == 0 {
				t.Errorf("Headline() = %q\nwant it to start %q", got, tt.headline)
			}
			// The lead names no measure; the lines under it name each
			// one the headline names.
			lead, listed := v.Lead(), v.Listed()
			if strings.Contains(lead, "@c=") || !strings.HasPrefix(v.Headline(), strings.SplitN(lead, ";", 2)[0]) {
				t.Errorf("Lead() = %q of headline %q", lead, v.Headline())
			}
			for _, l := range listed {
				_, item, _ := strings.Cut(l, ": ")
				if v.Outcome == stats.NoBound {
					item = l
				}
				if !strings.Contains(v.Headline(), item) {
					t.Errorf("Listed() line %q is not in the headline %q", l, v.Headline())
				}
			}
			if tt.name == "worst of three" && (lead != "failed: 1 of 3 bounded measures past its bound; 1 inconclusive" || len(listed) != 2 ||
				listed[0] != "failed: tps@c=8 -10.0% ± 0.9%, bound -3%" || !strings.HasPrefix(listed[1], "inconclusive: p99@c=8 +4.0%")) {
				t.Errorf("worst of three: lead %q, listed %q", lead, listed)
			}
		})
	}
}

// Past the bound with 3 rounds the reason names the rounds a failure
// needs; an interval across the bound says how many rounds at its spread
// would decide it.
func TestEvaluateSaysWhatWouldDecide(t *testing.T) {
	v, err := stats.Evaluate([]stats.Comparison{
		paired("tps", "c=4", up, 3, math.Log(0.662), 0.05),
		paired("pooler-cpu/txn", "c=4", down, 4, math.Log(1.0), 0.11),
	}, mustBounds(t, "tps=-5%", "pooler-cpu/txn=+5%"), stats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	few, wide := v.Assessments[0], v.Assessments[1]
	if !strings.Contains(few.Reason, "3 rounds are too few to fail it: the distribution-free check needs 6") {
		t.Errorf("3 rounds past the bound: reason %q", few.Reason)
	}
	// sd of 4 alternating ±0.11 is 0.127; RoundsToDetect(0.127, ln 1.05 ...) by the formula.
	want := stats.RoundsToDetect(wide.Spread, 0.05, 0.95, 0.8)
	if wide.RoundsNeeded != want || want < 20 {
		t.Errorf("wide: rounds needed %d, want %d", wide.RoundsNeeded, want)
	}
	if d := wide.Decide(); !strings.Contains(d, fmt.Sprintf("about %d rounds would decide it at this spread, ±12.7%% per round", want)) {
		t.Errorf("Decide() = %q", d)
	}
}

// Holm's correction over the bounded measures: six measures each past its
// bound by a t-test whose p-value alone would fail (about 0.02), but not
// once multiplied by six.
func TestEvaluateHolmOverBounded(t *testing.T) {
	var cs []stats.Comparison
	var bounds []string
	for i := 1; i <= 6; i++ {
		step := fmt.Sprintf("c=%d", i)
		// 7 rounds about ln 0.9 ± 0.0455: t = (ln 0.9 - ln 0.95) /
		// (0.0455/√7) = 3.14 on 6 degrees of freedom, p = 0.02.
		cs = append(cs, paired("tps", step, up, 7, math.Log(0.90), 0.0455))
		bounds = append(bounds, "tps@"+step+"=-5%")
	}
	v, err := stats.Evaluate(cs, mustBounds(t, bounds...), stats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range v.Assessments {
		if a.Outcome != stats.Inconclusive || !strings.Contains(a.Reason, "not once corrected for the 6 bounded measures") {
			t.Errorf("%s: %v (%s), PBound %v, Holm %v", a.Measure.Key(), a.Outcome, a.Reason, a.PBound, a.PBoundHolm)
		}
	}
	one, err := stats.Evaluate(cs[:1], mustBounds(t, bounds[0]), stats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a := one.Assessments[0]; a.Outcome != stats.Fail {
		t.Errorf("alone: %v (%s)", a.Outcome, a.Reason)
	}
}

// A suite's cells are families of their own, each with its share of
// alpha for Holm's correction of its failures: a measure past its bound
// with p about 0.03 fails alone and not as one of two cells; a pass needs
// no share. The effects are corrected over all the cells.
func TestEvaluateGroups(t *testing.T) {
	// 8 rounds about ln 0.89 ± 0.063 (sample sd 0.0673): t = (ln 0.89 -
	// ln 0.95)/(0.0673/√8) = 2.74 on 7 degrees of freedom, p = 0.03, and
	// every Walsh average past ln 0.95.
	g := func(mean, sd float64, share float64) stats.Group {
		return stats.Group{Comparisons: []stats.Comparison{paired("tps", "c=4", up, 8, mean, sd)},
			Bounds: mustBounds(t, "tps=-5%"), Options: stats.Options{Share: share}}
	}
	alone, err := stats.EvaluateGroups([]stats.Group{g(math.Log(0.89), 0.063, 0)}, stats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := stats.EvaluateGroups([]stats.Group{g(math.Log(0.89), 0.063, 0.5), g(0, 0.01, 0.5)}, stats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if alone.Outcome != stats.Fail || v.Total != 2 || v.Inconclusive != 1 || v.Passed != 1 || v.Outcome != stats.Inconclusive {
		t.Errorf("alone: %s (p %v); in two cells: %s", alone.Counts(), alone.Assessments[0].PBound, v.Counts())
	}
	if a := v.Assessments[1]; math.Abs(a.DecisionConfidence-0.95) > 1e-12 {
		t.Errorf("a pass is decided at its own level: %v", a.DecisionConfidence)
	}
}

func TestEvaluateErrors(t *testing.T) {
	tpsC16 := cmp("tps", "c=16", up, 0, -0.01, 0.01, 0.5)
	tests := []struct {
		name   string
		cs     []stats.Comparison
		bounds []string
		bound  bool // a *BoundError
		msg    string
	}{
		{"bound matches nothing", []stats.Comparison{tpsC16}, []string{"tps@c=32=-5%"}, true, "matches no measure"},
		{"misspelt measure", []stats.Comparison{tpsC16}, []string{"tsp=-5%"}, true, "matches no measure"},
		{"wrong sign, higher is better", []stats.Comparison{tpsC16}, []string{"tps=+3%"}, true, "write tps=-3%"},
		{"wrong sign, lower is better", []stats.Comparison{cmp("p99", "c=1", down, 0, -0.01, 0.01, 0.5)}, []string{"p99@c=1=-2.5%"}, true, "write p99@c=1=+2.5%"},
		{"no direction", []stats.Comparison{cmp("tps", "", 0, 0, 0, 0, 1)}, nil, false, "has no direction"},
		{"twice", []stats.Comparison{tpsC16, tpsC16}, nil, false, "compared twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := stats.Evaluate(tt.cs, mustBounds(t, tt.bounds...), stats.Options{})
			var be *stats.BoundError
			if err == nil || errors.As(err, &be) != tt.bound || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error = %v; want one mentioning %q (BoundError %v)", err, tt.msg, tt.bound)
			}
		})
	}
}

func TestEvaluateEmpty(t *testing.T) {
	v, err := stats.Evaluate(nil, nil, stats.Options{})
	if err != nil || v.Headline() != "No measures compared" || v.Outcome != stats.NoBound {
		t.Errorf("Evaluate(nil) = %q, %v, %v", v.Headline(), v.Outcome, err)
	}
}

func TestEvaluateConfidence(t *testing.T) {
	// At 99 % alpha is 0.01: a change significant at 95 % is not at 99 %.
	cs := []stats.Comparison{cmp("tps", "", up, -0.06, -0.08, -0.04, 0.02)}
	v, err := stats.Evaluate(cs, nil, stats.Options{Confidence: 0.99})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "Alpha", v.Alpha, 0.01, 1e-15)
	if a := v.Assessments[0]; a.Significant || a.Effect != stats.NoChange {
		t.Errorf("Significant, Effect = %v, %v; want false, no change", a.Significant, a.Effect)
	}
}

// A change point is judged by its bound alone: it is significant already.
func TestJudgeChange(t *testing.T) {
	bs := mustBounds(t, "tps=-2%", "p99@c=8=+5%")
	for _, c := range []struct {
		c       stats.Comparison
		outcome stats.Outcome
		effect  stats.Effect
		bound   string
	}{
		{cmp("tps", "c=2", up, -0.05, -0.06, -0.04, 1e-9), stats.Fail, stats.Regressed, "tps=-2%"},
		{cmp("tps", "c=2", up, -0.025, -0.035, -0.015, 1e-9), stats.Fail, stats.Regressed, "tps=-2%"},
		{cmp("tps", "c=2", up, -0.01, -0.025, 0.005, 1e-9), stats.Pass, stats.Regressed, "tps=-2%"},
		{cmp("tps", "c=2", up, 0.05, 0.04, 0.06, 1e-9), stats.Pass, stats.Improved, "tps=-2%"},
		{cmp("p99", "c=8", down, 0.08, 0.06, 0.1, 1e-6), stats.Fail, stats.Regressed, "p99@c=8=+5%"},
		{cmp("p99", "c=2", down, 0.08, 0.06, 0.1, 1e-6), stats.NoBound, stats.Regressed, ""},
	} {
		a := stats.JudgeChange(c.c, bs)
		bound := ""
		if a.Bound != nil {
			bound = a.Bound.String()
		}
		if a.Outcome != c.outcome || a.Effect != c.effect || bound != c.bound || !a.Significant {
			t.Errorf("%s %+.3f: %v, %v, bound %q; want %v, %v, %q", c.c.Measure.Key(), c.c.Change,
				a.Outcome, a.Effect, bound, c.outcome, c.effect, c.bound)
		}
	}
}

// A significant change smaller than the measure's smallest change of
// interest is negligible, not a regression; a bound closer to zero takes
// the place of that smallest change, so that a user's bound still judges;
// and a change past it is a regression as before.
func TestEvaluateNegligible(t *testing.T) {
	counted := func(change float64) stats.Comparison {
		c := cmp("instr/txn", "c=1", down, change, change-0.00002, change+0.00002, 1e-9)
		c.Measure.MinChange = 0.001
		return c
	}
	v, err := stats.Evaluate([]stats.Comparison{counted(0.00016)}, nil, stats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a := v.Assessments[0]; !a.Significant || a.Effect != stats.Negligible || a.Outcome != stats.NoBound || v.Regressed != 0 || v.Negligible != 1 {
		t.Errorf("+0.016%% with a smallest change of 0.1%%: significant %v, %v, %v; %s", a.Significant, a.Effect, a.Outcome, v.Counts())
	}
	if got := v.Counts(); !strings.HasSuffix(got, ", 1 negligible") {
		t.Errorf("Counts() = %q, want the negligible one counted", got)
	}
	v, err = stats.Evaluate([]stats.Comparison{counted(0.00016)}, mustBounds(t, "instr/txn=+0.01%"), stats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a := v.Assessments[0]; a.Effect != stats.Regressed || a.Outcome != stats.Fail {
		t.Errorf("+0.016%% against a bound of +0.01%%: %v, %v, want regressed and failed", a.Effect, a.Outcome)
	}
	v, err = stats.Evaluate([]stats.Comparison{counted(0.0052)}, nil, stats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a := v.Assessments[0]; a.Effect != stats.Regressed || v.Negligible != 0 {
		t.Errorf("+0.52%%: %v, want regressed", a.Effect)
	}
	v, err = stats.Evaluate([]stats.Comparison{counted(-0.0383)}, mustBounds(t, "instr/txn=+1%"), stats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a := v.Assessments[0]; a.Effect != stats.Improved || a.Outcome != stats.Pass {
		t.Errorf("-3.83%% with a bound of +1%%: %v, %v, want improved and passed", a.Effect, a.Outcome)
	}
}
