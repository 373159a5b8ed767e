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

func TestEvaluatePoolerHeadline(t *testing.T) {
	// 24 measures: tps and p99 at 12 steps. tps@c=16 fell 5.4 % (interval
	// -6.3 % .. -4.5 %) with p = 1e-6; Holm multiplies the smallest p by
	// 24, 2.4e-5 ≤ 0.05, so it is significant and beyond its -5 % bound;
	// its interval reaches back to -4.5 %, so it is also uncertain.
	var cs []stats.Comparison
	for _, c := range []int{1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128} {
		step := fmt.Sprintf("c=%d", c)
		if c == 16 {
			cs = append(cs, cmp("tps", step, up, -0.054, -0.063, -0.045, 1e-6))
		} else {
			cs = append(cs, cmp("tps", step, up, -0.002, -0.010, 0.006, 0.6))
		}
		cs = append(cs, cmp("p99", step, down, 0.001, -0.01, 0.012, 0.8))
	}
	v, err := stats.Evaluate(cs, mustBounds(t, "tps=-3%", "tps@c=16=-5%", "p99=+5%"), stats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "1 of 24 measures outside bounds: tps@c=16 -5.4% ± 0.9%, bound -5%"
	if got := v.Headline(); got != want {
		t.Errorf("Headline() = %q\nwant         %q", got, want)
	}
	if v.Passed() || v.Total != 24 || v.Outside != 1 || v.Within != 23 || v.Regressed != 1 || v.Improved != 0 || v.Uncertain != 1 {
		t.Errorf("Passed, Total, Outside, Within, Regressed, Improved, Uncertain = %v, %d, %d, %d, %d, %d, %d",
			v.Passed(), v.Total, v.Outside, v.Within, v.Regressed, v.Improved, v.Uncertain)
	}
	if got, want := v.Counts(), "24 measures: 23 within bounds, 1 outside, 1 uncertain; 0 improved, 1 regressed"; got != want {
		t.Errorf("Counts() = %q, want %q", got, want)
	}
	// The same with the regression gone: the pooler's all-clear.
	cs[10] = cmp("tps", "c=16", up, -0.002, -0.010, 0.006, 0.6)
	v, err = stats.Evaluate(cs, mustBounds(t, "tps=-3%", "tps@c=16=-5%", "p99=+5%"), stats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v.Headline(), "All 24 measures within bounds"; got != want || !v.Passed() {
		t.Errorf("Headline() = %q, Passed %v; want %q, true", got, v.Passed(), want)
	}
}

func TestEvaluateStatuses(t *testing.T) {
	tests := []struct {
		name      string
		cs        []stats.Comparison
		bounds    []string
		pholm     []float64
		status    []stats.Status
		effect    []stats.Effect
		uncertain []bool
		headline  string
	}{
		{
			// The pooler bot's "+5.42% ± 0.93%, bound +5%": failed,
			// although the interval reaches back below 5 %: uncertain.
			name:      "outside, uncertain",
			cs:        []stats.Comparison{cmp("cpu/txn", "", down, 0.0542, 0.0449, 0.0635, 1e-4)},
			bounds:    []string{"cpu/txn=+5%"},
			pholm:     []float64{1e-4},
			status:    []stats.Status{stats.OutsideBounds},
			effect:    []stats.Effect{stats.Regressed},
			uncertain: []bool{true},
			headline:  "1 of 1 measure outside bounds: cpu/txn +5.4% ± 0.9%, bound +5%",
		},
		{
			// Within -3 %, but the interval reaches -4.5 %: uncertain.
			// Not significant (p 0.1), so no effect.
			name:      "within, uncertain",
			cs:        []stats.Comparison{cmp("tps", "", up, -0.02, -0.045, 0.005, 0.1)},
			bounds:    []string{"tps=-3%"},
			pholm:     []float64{0.1},
			status:    []stats.Status{stats.WithinBounds},
			effect:    []stats.Effect{stats.NoChange},
			uncertain: []bool{true},
			headline:  "1 measure within bounds",
		},
		{
			// Beyond the bound with p = 0.03, but Holm over three
			// measures makes it 3·0.03 = 0.09 > 0.05 by hand: within,
			// uncertain. The other two: 2·0.4 = 0.8, then max(0.8,
			// 1·0.9) = 0.9.
			name: "beyond but not significant after Holm",
			cs: []stats.Comparison{
				cmp("tps", "", up, -0.06, -0.12, 0.0, 0.03),
				cmp("p50", "", down, 0.001, -0.01, 0.012, 0.4),
				cmp("p99", "", down, 0.002, -0.01, 0.014, 0.9),
			},
			bounds:    []string{"tps=-3%", "p50=+5%", "p99=+5%"},
			pholm:     []float64{0.09, 0.8, 0.9},
			status:    []stats.Status{stats.WithinBounds, stats.WithinBounds, stats.WithinBounds},
			effect:    []stats.Effect{stats.NoChange, stats.NoChange, stats.NoChange},
			uncertain: []bool{true, false, false},
			headline:  "All 3 measures within bounds",
		},
		{
			// Without bounds a significant change is reported but never
			// fails: p50 improved (lower), tps regressed (lower). Holm:
			// 2·0.001, then max(0.002, 1·0.002).
			name: "no bounds",
			cs: []stats.Comparison{
				cmp("p50", "", down, -0.1, -0.12, -0.08, 0.001),
				cmp("tps", "", up, -0.1, -0.12, -0.08, 0.002),
			},
			pholm:     []float64{0.002, 0.002},
			status:    []stats.Status{stats.WithinBounds, stats.WithinBounds},
			effect:    []stats.Effect{stats.Improved, stats.Regressed},
			uncertain: []bool{false, false},
			headline:  "All 2 measures within bounds",
		},
		{
			// A significant improvement beyond nothing: tps +8 % with a
			// -3 % bound is within and certain. A measure whose test could
			// not run (P NaN) counts as p = 1 and, with no interval at
			// all, is uncertain against its bound. Holm: 2·0.001, 1.
			name: "improved, and no test",
			cs: []stats.Comparison{
				cmp("tps", "", up, 0.08, 0.05, 0.11, 0.001),
				cmp("p99", "", down, math.NaN(), math.Inf(-1), math.Inf(1), math.NaN()),
			},
			bounds:    []string{"tps=-3%", "p99=+5%"},
			pholm:     []float64{0.002, 1},
			status:    []stats.Status{stats.WithinBounds, stats.WithinBounds},
			effect:    []stats.Effect{stats.Improved, stats.NoChange},
			uncertain: []bool{false, true},
			headline:  "All 2 measures within bounds",
		},
		{
			// Two outside, listed in order and separated by "; ".
			name: "two outside",
			cs: []stats.Comparison{
				cmp("tps", "c=8", up, -0.071, -0.08, -0.062, 1e-5),
				cmp("tps", "c=16", up, -0.01, -0.02, 0.0, 0.05),
				cmp("p99", "c=8", down, 0.123, 0.1, 0.146, 1e-4),
			},
			bounds:    []string{"tps=-3%", "p99=+10%"},
			pholm:     []float64{3e-5, 0.05, 2e-4},
			status:    []stats.Status{stats.OutsideBounds, stats.WithinBounds, stats.OutsideBounds},
			effect:    []stats.Effect{stats.Regressed, stats.Regressed, stats.Regressed},
			uncertain: []bool{false, false, false},
			headline:  "2 of 3 measures outside bounds: tps@c=8 -7.1% ± 0.9%, bound -3%; p99@c=8 +12.3% ± 2.3%, bound +10%",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := stats.Evaluate(tt.cs, mustBounds(t, tt.bounds...), stats.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(v.Assessments) != len(tt.cs) {
				t.Fatalf("%d assessments for %d comparisons", len(v.Assessments), len(tt.cs))
			}
			for i, a := range v.Assessments {
				near(t, a.Measure.Key()+" PHolm", a.PHolm, tt.pholm[i], 1e-12)
				if a.Status != tt.status[i] || a.Effect != tt.effect[i] || a.Uncertain != tt.uncertain[i] {
					t.Errorf("%s: Status, Effect, Uncertain = %v, %v, %v; want %v, %v, %v", a.Measure.Key(),
						a.Status, a.Effect, a.Uncertain, tt.status[i], tt.effect[i], tt.uncertain[i])
				}
				if a.Significant != (tt.pholm[i] <= 0.05) {
					t.Errorf("%s: Significant = %v with PHolm %v", a.Measure.Key(), a.Significant, a.PHolm)
				}
			}
			if got := v.Headline(); got != tt.headline {
				t.Errorf("Headline() = %q\nwant         %q", got, tt.headline)
			}
		})
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
	if err != nil || v.Headline() != "No measures compared" || !v.Passed() {
		t.Errorf("Evaluate(nil) = %q, %v, %v", v.Headline(), v.Passed(), err)
	}
}

func TestEvaluateConfidence(t *testing.T) {
	// At 99 % alpha is 0.01: p = 0.02 is no longer significant.
	cs := []stats.Comparison{cmp("tps", "", up, -0.06, -0.08, -0.04, 0.02)}
	v, err := stats.Evaluate(cs, mustBounds(t, "tps=-5%"), stats.Options{Confidence: 0.99})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "Alpha", v.Alpha, 0.01, 1e-15)
	if a := v.Assessments[0]; a.Significant || a.Status != stats.WithinBounds || !a.Uncertain {
		t.Errorf("Significant, Status, Uncertain = %v, %v, %v; want false, within, true", a.Significant, a.Status, a.Uncertain)
	}
}

// A change point is judged by its bound alone: it is significant already.
func TestJudgeChange(t *testing.T) {
	bs := mustBounds(t, "tps=-2%", "p99@c=8=+5%")
	for _, c := range []struct {
		c         stats.Comparison
		status    stats.Status
		effect    stats.Effect
		bound     string
		uncertain bool
	}{
		{cmp("tps", "c=2", up, -0.05, -0.06, -0.04, 1e-9), stats.OutsideBounds, stats.Regressed, "tps=-2%", false},
		{cmp("tps", "c=2", up, -0.025, -0.035, -0.015, 1e-9), stats.OutsideBounds, stats.Regressed, "tps=-2%", true},
		{cmp("tps", "c=2", up, -0.01, -0.025, 0.005, 1e-9), stats.WithinBounds, stats.Regressed, "tps=-2%", true},
		{cmp("tps", "c=2", up, 0.05, 0.04, 0.06, 1e-9), stats.WithinBounds, stats.Improved, "tps=-2%", false},
		{cmp("p99", "c=8", down, 0.08, 0.06, 0.1, 1e-6), stats.OutsideBounds, stats.Regressed, "p99@c=8=+5%", false},
		{cmp("p99", "c=2", down, 0.08, 0.06, 0.1, 1e-6), stats.WithinBounds, stats.Regressed, "", false},
	} {
		a := stats.JudgeChange(c.c, bs)
		bound := ""
		if a.Bound != nil {
			bound = a.Bound.String()
		}
		if a.Status != c.status || a.Effect != c.effect || bound != c.bound || a.Uncertain != c.uncertain || !a.Significant {
			t.Errorf("%s %+.3f: %v, %v, bound %q, uncertain %v; want %v, %v, %q, %v", c.c.Measure.Key(), c.c.Change,
				a.Status, a.Effect, bound, a.Uncertain, c.status, c.effect, c.bound, c.uncertain)
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
	if a := v.Assessments[0]; !a.Significant || a.Effect != stats.Negligible || a.Status != stats.WithinBounds || v.Regressed != 0 || v.Negligible != 1 || !v.Passed() {
		t.Errorf("+0.016%% with a smallest change of 0.1%%: significant %v, %v, %v; %s", a.Significant, a.Effect, a.Status, v.Counts())
	}
	if got := v.Counts(); !strings.HasSuffix(got, ", 1 negligible") {
		t.Errorf("Counts() = %q, want the negligible one counted", got)
	}
	v, err = stats.Evaluate([]stats.Comparison{counted(0.00016)}, mustBounds(t, "instr/txn=+0.01%"), stats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a := v.Assessments[0]; a.Effect != stats.Regressed || a.Status != stats.OutsideBounds || v.Passed() {
		t.Errorf("+0.016%% against a bound of +0.01%%: %v, %v, want regressed and outside bounds", a.Effect, a.Status)
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
	if a := v.Assessments[0]; a.Effect != stats.Improved || a.Status != stats.WithinBounds {
		t.Errorf("-3.83%% with a bound of +1%%: %v, %v, want improved within bounds", a.Effect, a.Status)
	}
}
