package stats_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/testenv"
)

// aaRuns draws A/A experiments from the random-effects model of clusters
// re-created every perLayout rounds: the log ratio of round r on layout b
// is shift + u_b + e_br, with u_b ~ N(0, between²) fixed for the layout's
// rounds and e_br ~ N(0, within²). It returns base (all ones), cand and
// the layout of each round.
func aaRun(rng *rand.Rand, layouts, perLayout int, between, within, shift float64) (base, cand []float64, ids []int) {
	for b := 1; b <= layouts; b++ {
		u := rng.NormFloat64() * between
		for r := 0; r < perLayout; r++ {
			base = append(base, 1)
			cand = append(cand, math.Exp(shift+u+rng.NormFloat64()*within))
			ids = append(ids, b)
		}
	}
	return base, cand, ids
}

var layoutMeasure = stats.Measure{Name: "tps", Step: "c=1", Direction: stats.HigherIsBetter}

// The layout means by hand: layouts 1, 2, 3 with log ratios (0.01, 0.03),
// (-0.02, 0), (0.04, 0.02) have means 0.02, -0.01, 0.03; their mean is
// 0.04/3 and their sd is sqrt(((0.02-m)^2+(-0.01-m)^2+(0.03-m)^2)/2) =
// 0.02081665999; the within sd pools three pairs each 0.01 from its
// mean: sqrt(6·0.0001/3) = 0.0141421356.
func TestCompareLayoutsByHand(t *testing.T) {
	cand := exps(0.01, 0.03, -0.02, 0, 0.04, 0.02)
	c := stats.CompareLayouts(layoutMeasure, ones(6), cand, []int{1, 1, 2, 2, 3, 3}, stats.Options{})
	m := 0.04 / 3
	near(t, "Change", c.Change, math.Expm1(m), 1e-12)
	if c.N1 != 3 || c.Test != stats.LayoutTest || c.LayoutDetail == nil {
		t.Fatalf("N1 %d, test %q, detail %v; want 3 layouts and the layout test", c.N1, c.Test, c.LayoutDetail)
	}
	d := c.LayoutDetail
	near(t, "MeansSD", d.MeansSD, 0.02081665999, 1e-9)
	near(t, "PairedDetail.SDLog", c.PairedDetail.SDLog, 0.02081665999, 1e-9)
	near(t, "WithinSD", d.WithinSD, 0.0141421356, 1e-9)
	// MSB = 2·sum((mean_b - m)^2)/2 = 2·0.02081665999^2, n0 = 2:
	// between^2 = (MSB - within^2)/2.
	near(t, "BetweenSD", d.BetweenSD, math.Sqrt((2*0.02081665999*0.02081665999-0.0002)/2), 1e-9)
	// t with 2 degrees of freedom on the three means: t = m/(sd/sqrt 3).
	near(t, "T", c.PairedDetail.T, m/(0.02081665999/math.Sqrt(3)), 1e-6)
	if c.PairedDetail.DF != 2 || d.Layouts != 3 || d.Rounds != 6 {
		t.Errorf("df %v, %d layouts, %d rounds; want 2, 3, 6", c.PairedDetail.DF, d.Layouts, d.Rounds)
	}
	checkWarnings(t, c.Warnings, stats.TooFew) // 3 layouts: no distribution-free cross-check
}

func TestCompareLayoutsEdges(t *testing.T) {
	// One layout: a change, no interval, no spread between layouts.
	c := stats.CompareLayouts(layoutMeasure, ones(3), exps(0.01, 0.02, 0.03), []int{4, 4, 4}, stats.Options{})
	near(t, "one layout: Change", c.Change, math.Expm1(0.02), 1e-12)
	if !math.IsInf(c.Lo, -1) || !math.IsNaN(c.P) || !math.IsNaN(c.LayoutDetail.BetweenSD) {
		t.Errorf("one layout: interval [%v, %v], p %v, between %v; want none", c.Lo, c.Hi, c.P, c.LayoutDetail.BetweenSD)
	}
	checkWarnings(t, c.Warnings, stats.TooFew)
	// A round with a zero is left out; its layout still counts with the
	// other round.
	c = stats.CompareLayouts(layoutMeasure, []float64{1, 0, 1, 1}, exps(0.01, 0.5, 0.03, 0.05), []int{1, 1, 2, 2}, stats.Options{})
	if c.N1 != 2 || c.LayoutDetail.Rounds != 3 {
		t.Errorf("zero left out: %d layouts, %d rounds; want 2 and 3", c.N1, c.LayoutDetail.Rounds)
	}
	near(t, "zero left out: Change", c.Change, math.Expm1((0.01+0.04)/2), 1e-12)
	checkWarnings(t, c.Warnings, stats.LeftOut, stats.TooFew)
	// Layouts of one round each: the between and within parts cannot be
	// told apart, but the layout means still carry the test.
	c = stats.CompareLayouts(layoutMeasure, ones(4), exps(0.01, -0.01, 0.02, 0), []int{1, 2, 3, 4}, stats.Options{})
	if d := c.LayoutDetail; !math.IsNaN(d.WithinSD) || !math.IsNaN(d.BetweenSD) || math.IsNaN(d.MeansSD) || math.IsNaN(c.P) {
		t.Errorf("single-round layouts: within %v between %v means %v p %v", d.WithinSD, d.BetweenSD, d.MeansSD, c.P)
	}
}

// The spread estimates recover a known between-layout and within-layout
// noise from many synthetic layouts.
func TestLayoutSpreadRecoversKnownSpread(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tt := range []struct{ between, within float64 }{{0.03, 0.01}, {0.01, 0.02}, {0, 0.01}} {
		_, cand, ids := aaRun(rng, 2000, 3, tt.between, tt.within, 0)
		logs := make([]float64, len(cand))
		for i, x := range cand {
			logs[i] = math.Log(x)
		}
		d := stats.LayoutSpread(logs, ids)
		if math.Abs(d.WithinSD-tt.within) > 0.05*tt.within {
			t.Errorf("between %v within %v: within estimated %v", tt.between, tt.within, d.WithinSD)
		}
		if want := tt.between; math.Abs(d.BetweenSD-want) > 0.1*want+0.002 {
			t.Errorf("between %v within %v: between estimated %v", tt.between, tt.within, d.BetweenSD)
		}
		wantMeans := math.Sqrt(tt.between*tt.between + tt.within*tt.within/3)
		if math.Abs(d.MeansSD-wantMeans) > 0.05*wantMeans {
			t.Errorf("between %v within %v: sd of the layout means %v, want %v", tt.between, tt.within, d.MeansSD, wantMeans)
		}
	}
}

// The point of layouts: with a fixed difference per pair of clusters
// (between 2 %, within 1 %), a paired t-test over the rounds of one pair
// of clusters calls most A/A runs significant, and over the rounds of five
// pairs still too many, while the test over the five layouts keeps its
// 5 % — and still finds a real 5 % change in most runs.
func TestCompareLayoutsFalseAlarmRate(t *testing.T) {
	testenv.Simulation(t)
	rng := rand.New(rand.NewPCG(3, 4))
	const runs = 4000
	var oneLayout, byRound, byLayout, found int
	for i := 0; i < runs; i++ {
		base, cand, _ := aaRun(rng, 1, 10, 0.02, 0.01, 0)
		if stats.ComparePaired(layoutMeasure, base, cand, stats.Options{}).P <= 0.05 {
			oneLayout++
		}
		base, cand, ids := aaRun(rng, 5, 2, 0.02, 0.01, 0)
		if stats.ComparePaired(layoutMeasure, base, cand, stats.Options{}).P <= 0.05 {
			byRound++
		}
		if stats.CompareLayouts(layoutMeasure, base, cand, ids, stats.Options{}).P <= 0.05 {
			byLayout++
		}
		base, cand, ids = aaRun(rng, 5, 2, 0.02, 0.01, math.Log(0.95))
		if c := stats.CompareLayouts(layoutMeasure, base, cand, ids, stats.Options{}); c.P <= 0.05 && c.Change < 0 {
			found++
		}
	}
	rate := func(n int) float64 { return float64(n) / runs }
	t.Logf("A/A significant at 5%%: one layout by round %.3f, five layouts by round %.3f, by layout %.3f; a 5%% drop found by layout %.3f",
		rate(oneLayout), rate(byRound), rate(byLayout), rate(found))
	if r := rate(byLayout); r < 0.035 || r > 0.065 {
		t.Errorf("by layout, %.3f of A/A runs significant; want 5%% (the test is exact under the model)", r)
	}
	if r := rate(oneLayout); r < 0.6 {
		t.Errorf("one layout, by round: only %.3f of A/A runs significant; the synthetic layout bias should fool the round-level test", r)
	}
	if r := rate(byRound); r < 0.1 {
		t.Errorf("five layouts, by round: only %.3f of A/A runs significant; want more than the 5%% the test promises", r)
	}
	if r := rate(found); r < 0.7 {
		t.Errorf("a 5%% drop found in %.3f of runs; want most", r)
	}
}

func TestNoiseLayouts(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	base, cand, ids := aaRun(rng, 400, 2, 0.02, 0.01, 0)
	n := stats.NoiseLayouts(layoutMeasure, base, cand, ids, stats.NoiseOptions{})
	if n.Layouts != 400 || n.PerLayout != 2 || n.Power != stats.DefaultPower {
		t.Fatalf("layouts %d per layout %d power %v", n.Layouts, n.PerLayout, n.Power)
	}
	near(t, "SDLog (within)", n.SDLog, 0.01, 0.1)
	near(t, "BetweenSD", n.BetweenSD, 0.02, 0.15)
	// What the A/B needs: on one cluster the within noise alone; on
	// separate clusters re-created every 2 rounds the sd of the layout
	// means, sqrt(0.02² + 0.01²/2).
	if want := stats.RoundsToDetect(n.SDLog, 0.02, 0.95, 0.8); n.Rounds2 != want {
		t.Errorf("Rounds2 %d, want %d", n.Rounds2, want)
	}
	if want := stats.RoundsToDetect(n.LayoutSD, 0.05, 0.95, 0.8); n.Layouts5 != want || want < 2 {
		t.Errorf("Layouts5 %d, want %d", n.Layouts5, want)
	}
	exact := stats.RoundsToDetect(math.Sqrt(0.02*0.02+0.01*0.01/2), 0.02, 0.95, 0.8)
	if math.Abs(float64(n.Layouts2-exact)) > 0.2*float64(exact) {
		t.Errorf("Layouts2 %d, want about %d (the model's)", n.Layouts2, exact)
	}
	// Few layouts: a warning that the spread is rough.
	base, cand, ids = aaRun(rng, 3, 2, 0.02, 0.01, 0)
	n = stats.NoiseLayouts(layoutMeasure, base, cand, ids, stats.NoiseOptions{})
	if !hasWarning(n.Warnings, stats.TooFew) || n.Layouts2 == 0 {
		t.Errorf("3 layouts: warnings %v, layouts for 2%% %d", n.Warnings, n.Layouts2)
	}
}
