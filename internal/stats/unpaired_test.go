package stats_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/stats"
)

func TestCompareUnpaired(t *testing.T) {
	p99 := stats.Measure{Name: "p99", Unit: "ms", Direction: stats.LowerIsBetter}
	inf := math.Inf(1)
	tests := []struct {
		name           string
		base, cand     []float64
		n1, n2         int
		change, lo, hi float64
		p, u           float64
		shift, level   float64
		warnings       []stats.WarningKind
	}{
		{
			// Worked by hand. Every candidate value is above every
			// baseline value: U = 0, and of the C(8,4) = 70 equally likely
			// splits only this one and its mirror are as extreme, p =
			// 2/70. Medians 2.5 and 6.5: change 6.5/2.5 - 1 = 1.6. The
			// null P(U ≤ 0) = 1/70 ≤ 0.025 < P(U ≤ 1) = 2/70, so k = 1:
			// the interval is the smallest and largest of the 16 ratios,
			// 5/4 and 8/1, with level 1 - 2/70. Sorted ratios: 1.25 1.5
			// 1.667 1.75 2 2 2.333 2.5 2.667 3 3.5 4 5 6 7 8; the 8th and 9th
			// give the Hodges-Lehmann estimate (5/2 + 8/3)/2.
			name: "hand 4+4",
			base: []float64{4, 1, 3, 2}, cand: []float64{8, 5, 7, 6},
			n1: 4, n2: 4, change: 1.6, lo: 0.25, hi: 7, p: 2.0 / 70, u: 0,
			shift: (2.5+8.0/3)/2 - 1, level: 1 - 2.0/70,
			warnings: []stats.WarningKind{stats.Unpaired},
		},
		{
			// SciPy 1.10.1 mannwhitneyu(base, cand, method="exact"): U =
			// 41, p = 0.002331002331002331; change of medians
			// -0.026381284221005497. Moses interval from an independent
			// enumeration of the U null distribution over all C(13,6)
			// rank sets (testdata/reference.py): -0.04211557296767876,
			// -0.013026052104208374 at level 0.965034965034965, HL
			// estimate -0.028928263677304944.
			name: "6+7",
			base: []float64{102.1, 99.8, 101.5, 100.2, 98.9, 100.7},
			cand: []float64{97.2, 98.5, 96.9, 99.1, 97.8, 98.2, 96.5},
			n1:   6, n2: 7, change: -0.026381284221005497, lo: -0.04211557296767876, hi: -0.013026052104208374,
			p: 0.002331002331002331, u: 41, shift: -0.028928263677304944, level: 0.965034965034965,
			warnings: []stats.WarningKind{stats.Unpaired},
		},
		{
			// Ties and 30 values a side: the normal approximation with tie
			// and continuity corrections. SciPy mannwhitneyu(...,
			// method="asymptotic", use_continuity=True): U = 283.5, p =
			// 0.012297284331001444. Medians 12 and 13.
			name: "ties 30+30",
			base: rep3(10, 11, 11, 12, 12, 12, 13, 13, 14, 15),
			cand: rep3(11, 12, 12, 13, 13, 13, 14, 14, 15, 16),
			n1:   30, n2: 30, change: 13.0/12 - 1, lo: math.NaN(), hi: math.NaN(), p: 0.012297284331001444, u: 283.5,
			shift: math.NaN(), level: math.NaN(),
			warnings: []stats.WarningKind{stats.Unpaired},
		},
		{
			// Three a side can never reach p < 0.05 (by hand: the most
			// extreme split has p = 2/C(6,3) = 0.1), and P(U ≤ 0) =
			// 1/20 > 0.025 leaves no interval: two too-few warnings.
			name: "3+3",
			base: []float64{1, 2, 3}, cand: []float64{4, 5, 6},
			n1: 3, n2: 3, change: 1.5, lo: -inf, hi: inf, p: 0.1, u: 0,
			shift: 1.5, level: math.NaN(),
			warnings: []stats.WarningKind{stats.Unpaired, stats.TooFew},
		},
		{
			// All equal: no difference to test.
			name: "identical",
			base: []float64{5, 5, 5}, cand: []float64{5, 5, 5},
			n1: 3, n2: 3, change: 0, lo: -inf, hi: inf, p: 1, u: math.NaN(),
			shift: 0, level: math.NaN(),
			warnings: []stats.WarningKind{stats.Unpaired, stats.NoVariation, stats.TooFew},
		},
		{
			// A zero and a NaN are left out; what is left is the hand
			// case above.
			name: "left out",
			base: []float64{4, 0, 1, 3, 2}, cand: []float64{8, 5, math.NaN(), 7, 6},
			n1: 4, n2: 4, change: 1.6, lo: 0.25, hi: 7, p: 2.0 / 70, u: 0,
			shift: (2.5+8.0/3)/2 - 1, level: 1 - 2.0/70,
			warnings: []stats.WarningKind{stats.Unpaired, stats.LeftOut},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, cand := slices.Clone(tt.base), slices.Clone(tt.cand)
			c := stats.CompareUnpaired(p99, base, cand, stats.Options{})
			if c.Method != stats.Independent || c.Test != stats.UnpairedTest || c.N1 != tt.n1 || c.N2 != tt.n2 {
				t.Errorf("Method, Test, N1, N2 = %v, %q, %d, %d", c.Method, c.Test, c.N1, c.N2)
			}
			near(t, "Change", c.Change, tt.change, 1e-12)
			if !math.IsNaN(tt.lo) {
				near(t, "Lo", c.Lo, tt.lo, 1e-12)
				near(t, "Hi", c.Hi, tt.hi, 1e-12)
			}
			near(t, "P", c.P, tt.p, 1e-9)
			d := c.UnpairedDetail
			if d == nil {
				t.Fatal("no UnpairedDetail")
			}
			near(t, "U", d.U, tt.u, 0)
			if !math.IsNaN(tt.shift) {
				near(t, "Shift", d.Shift, tt.shift, 1e-12)
			}
			if !math.IsNaN(tt.level) {
				near(t, "HLConfidence", d.HLConfidence, tt.level, 1e-12)
			}
			checkWarnings(t, c.Warnings, tt.warnings...)
			if !sameFloats(base, tt.base) || !sameFloats(cand, tt.cand) {
				t.Errorf("inputs modified: %v %v", base, cand)
			}
		})
	}
}

func TestCompareUnpairedLarge(t *testing.T) {
	// 60 a side: the Moses order comes from the normal approximation.
	// testdata/reference.py finds k = 1427 from the exact U distribution
	// (a counting recurrence, level 0.9502930274934018), the interval
	// -0.02245098039215676, -0.00962099125364424 from the sorted ratios,
	// and SciPy mannwhitneyu(..., method="asymptotic") U = 2630, p =
	// 1.3382620880616268e-05; change of medians -0.016399805919456445.
	var base, cand []float64
	for i := range 60 {
		base = append(base, 100+float64((i*37)%61)/10)
		cand = append(cand, 98.5+float64((i*23)%59)/10+0.01)
	}
	c := stats.CompareUnpaired(tps, base, cand, stats.Options{})
	near(t, "Change", c.Change, -0.016399805919456445, 1e-12)
	near(t, "Lo", c.Lo, -0.02245098039215676, 1e-12)
	near(t, "Hi", c.Hi, -0.00962099125364424, 1e-12)
	near(t, "P", c.P, 1.3382620880616268e-05, 1e-9)
	near(t, "U", c.UnpairedDetail.U, 2630, 0)
	near(t, "HLConfidence", c.UnpairedDetail.HLConfidence, 0.9502930274934018, 1e-3)
	checkWarnings(t, c.Warnings, stats.Unpaired)
}

// rep3 returns xs three times over.
func rep3(xs ...float64) []float64 {
	return slices.Concat(xs, xs, xs)
}

// The significance level reads as given: 1 − 0.95 is printed 0.05, not
// 0.050000000000000044, in the notes of a comparison and in a verdict.
func TestAlphaReadsAsGiven(t *testing.T) {
	if a := stats.Alpha(0.95); a != 0.05 {
		t.Errorf("Alpha(0.95) = %v", a)
	}
	c := stats.CompareUnpaired(stats.Measure{Name: "tps", Step: "c=1", Direction: stats.HigherIsBetter}, []float64{1, 2, 3}, []float64{2}, stats.Options{})
	said := false
	for _, w := range c.Warnings {
		said = said || strings.Contains(w.Error(), "alpha level 0.05")
		if strings.Contains(w.Error(), "0.0500000") {
			t.Errorf("warning: %v", w)
		}
	}
	if !said {
		t.Errorf("no note of the alpha level: %v", c.Warnings)
	}
	if v, err := stats.Evaluate([]stats.Comparison{c}, stats.Bounds{}, stats.Options{}); err != nil || v.Alpha != 0.05 {
		t.Errorf("verdict alpha %v, %v", v.Alpha, err)
	}
}
