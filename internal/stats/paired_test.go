package stats_test

import (
	"math"
	"slices"
	"testing"

	"github.com/pgscale/pgscale/internal/stats"
)

var tps = stats.Measure{Name: "tps", Step: "c=16", Unit: "tx/s", Direction: stats.HigherIsBetter}

func TestComparePaired(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	e := math.Expm1
	type want struct {
		n                 int
		change, lo, hi, p float64
		tlo, thi          float64
		median, mlo, mhi  float64
		mconf             float64
		wider             string
		srP               float64
		warnings          []stats.WarningKind
	}
	tests := []struct {
		name       string
		base, cand []float64
		want       want
	}{
		{
			// Student's sleep data as log ratios (baseline 1, candidate
			// e^d with d = group 2 - group 1). R's t.test(extra ~ group,
			// data = sleep, paired = TRUE) prints t = -4.0621, df = 9,
			// p-value = 0.002833, 95 % CI -2.4598858 -0.7001142, mean
			// -1.58 (group 1 - group 2); SciPy ttest_rel gives p =
			// 0.00283289019738427 and the CI 0.7001142367452713,
			// 2.4598857632547286, so the change is e^1.58 - 1 and the t
			// interval e^0.7001142 - 1, e^2.4598858 - 1.
			// Signed-rank interval by brute force (every one of the 2^10
			// sign patterns of the ranks 1..10, and the 55 Walsh averages
			// sorted): P(V ≤ 8) = 25/1024 ≤ 0.025 < P(V ≤ 9), so it is
			// the 9th and 47th Walsh averages, [e^0.9, e^2.7] - 1, at
			// level 1 - 50/1024; the Hodges-Lehmann estimate e^1.3 - 1.
			// It reaches above the t interval: the hull is [the t
			// interval's low end, e^2.7 - 1]. Signed-rank p as R's sleep
			// example, 0.009091.
			name: "sleep data",
			base: ones(10),
			cand: exps(1.2, 2.4, 1.3, 1.3, 0.0, 1.0, 1.8, 0.8, 4.6, 1.4),
			want: want{n: 10, change: e(1.58), lo: 1.0139827651658302, hi: e(2.7), p: 0.00283289019738427,
				tlo: 1.0139827651658302, thi: 10.703474496777698,
				median: e(1.3), mlo: e(0.9), mhi: e(2.7), mconf: 1 - 50.0/1024, wider: "signed-rank", srP: 0.009090698015925054},
		},
		{
			// Six rounds: at 95 % the signed-rank interval is [min, max]
			// of the Walsh averages (P(V = 0) = 1/64 ≤ 0.025 < P(V ≤ 1)),
			// covering 1 - 2/64 = 0.96875, here [e^-0.02, e^0.06] - 1,
			// wider than the t interval (SciPy: -0.011020329116503512,
			// 0.04367503250797603; p = 0.19088596637133023), so the hull
			// is the signed-rank interval. Hodges-Lehmann by brute force:
			// the 11th of the 21 Walsh averages, 0.014. Signed-rank
			// by hand: |-0.02| has rank 5, V = 21 - 5 = 16, P(V ≥ 16) =
			// P(V ≤ 5) = 10/64 (ten subsets of 1..6 sum to ≤ 5), p = 20/64.
			name: "median interval wider",
			base: ones(6),
			cand: exps(-0.02, 0.01, 0.012, 0.015, 0.018, 0.06),
			want: want{n: 6, change: 0.015959344737308194, lo: e(-0.02), hi: e(0.06), p: 0.19088596637133023,
				tlo: -0.011020329116503512, thi: 0.04367503250797603,
				median: e(0.014), mlo: e(-0.02), mhi: e(0.06), mconf: 0.96875, wider: "signed-rank", srP: 20.0 / 64},
		},
		{
			// Five rounds are too few for a 95 % signed-rank interval:
			// P(V = 0) = 1/32 > 0.025, so it is infinite. The t interval
			// alone, with a warning. SciPy ttest_1samp on 0.01..0.05:
			// p = 0.013235599563682686, interval 0.010421497833620022,
			// 0.05088475336478421. Signed-rank exact by hand: V = 15 of
			// 15, p = 2/32.
			name: "too few for the median interval",
			base: []float64{200, 300, 400, 500, 600},
			cand: []float64{200 * math.Exp(0.01), 300 * math.Exp(0.02), 400 * math.Exp(0.03), 500 * math.Exp(0.04), 600 * math.Exp(0.05)},
			want: want{n: 5, change: e(0.03), lo: 0.010421497833620022, hi: 0.05088475336478421, p: 0.013235599563682686,
				tlo: 0.010421497833620022, thi: 0.05088475336478421,
				median: e(0.03), mlo: -inf, mhi: inf, mconf: 0, wider: "t", srP: 2.0 / 32,
				warnings: []stats.WarningKind{stats.TooFew}},
		},
		{
			// Rounds 2, 4 and 6 have a non-positive or NaN value and
			// round 7 an infinite one: the ratios left are 1.01, 0.99,
			// 1.02, 0.98. SciPy on their logs: change
			// -0.00012501344058679723, interval -0.028758635699502922,
			// 0.029352770067842, p = 0.9899341197994204. Hodges-Lehmann
			// by brute force: the mean of the middle two of the 10 Walsh
			// averages, -0.00012502125541827367 on the log scale. Four
			// rounds: no signed-rank interval. Signed-rank by hand: log ratio ranks 1+ 2- 3+ 4-,
			// V = 4, P(V ≤ 4) = 7/16, p = 14/16.
			name: "rounds left out",
			base: []float64{100, 0, 100, -5, 100, nan, 100, 100},
			cand: []float64{101, 100, 99, 100, 102, 100, 98, inf},
			want: want{n: 4, change: -0.00012501344058679723, lo: -0.028758635699502922, hi: 0.029352770067842, p: 0.9899341197994204,
				tlo: -0.028758635699502922, thi: 0.029352770067842,
				median: e(-0.00012502125541827367), mlo: -inf, mhi: inf, mconf: 0, wider: "t", srP: 14.0 / 16,
				warnings: []stats.WarningKind{stats.LeftOut, stats.TooFew}},
		},
		{
			// A t-test that rejects and a signed-rank test that cannot:
			// one round slightly negative among five near +5 %. SciPy:
			// t-test p = 0.0045883487193932706, signed-rank exact 0.0625
			// (V = 20 of 21 by hand: the negative round has rank 1; P(V ≥
			// 20) = P(V ≤ 1) = 2/64). Signed-rank interval [min, max] of
			// the Walsh averages for n = 6, [e^-0.001, e^0.052] - 1; the t
			// interval reaches higher (SciPy: 0.019793044157922032,
			// 0.06545324541356601), so the hull is [e^-0.001 - 1, that].
			// Hodges-Lehmann by brute force: 0.0495.
			name: "tests disagree",
			base: ones(6),
			cand: exps(0.05, 0.051, 0.049, 0.052, 0.048, -0.001),
			want: want{n: 6, change: e((0.05 + 0.051 + 0.049 + 0.052 + 0.048 - 0.001) / 6), lo: e(-0.001), hi: 0.06545324541356601, p: 0.0045883487193932706,
				tlo: 0.019793044157922032, thi: 0.06545324541356601, median: e(0.0495), mlo: e(-0.001), mhi: e(0.052), mconf: 0.96875, wider: "signed-rank", srP: 0.0625,
				warnings: []stats.WarningKind{stats.Disagree}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, cand := slices.Clone(tt.base), slices.Clone(tt.cand)
			c := stats.ComparePaired(tps, base, cand, stats.Options{})
			w := tt.want
			if c.Method != stats.Paired || c.N1 != w.n || c.N2 != w.n || c.Test != stats.PairedTest || c.Confidence != 0.95 {
				t.Errorf("Method, N1, N2, Test, Confidence = %v, %d, %d, %q, %v", c.Method, c.N1, c.N2, c.Test, c.Confidence)
			}
			near(t, "Change", c.Change, w.change, 1e-9)
			near(t, "Lo", c.Lo, w.lo, 1e-9)
			near(t, "Hi", c.Hi, w.hi, 1e-9)
			near(t, "P", c.P, w.p, 1e-9)
			d := c.PairedDetail
			if d == nil {
				t.Fatal("no PairedDetail")
			}
			if !math.IsNaN(w.tlo) {
				near(t, "TLo", d.TLo, w.tlo, 1e-9)
				near(t, "THi", d.THi, w.thi, 1e-9)
			}
			near(t, "HL", d.HL, w.median, 1e-12)
			near(t, "HLLo", d.HLLo, w.mlo, 1e-12)
			near(t, "HLHi", d.HLHi, w.mhi, 1e-12)
			near(t, "HLConfidence", d.HLConfidence, w.mconf, 1e-12)
			if d.Wider != w.wider {
				t.Errorf("Wider = %q, want %q", d.Wider, w.wider)
			}
			near(t, "SignedRank.P", d.SignedRank.P, w.srP, 1e-9)
			checkWarnings(t, c.Warnings, w.warnings...)
			if !sameFloats(base, tt.base) || !sameFloats(cand, tt.cand) {
				t.Errorf("inputs modified: %v %v", base, cand)
			}
		})
	}
}

// sameFloats compares slices element by element, NaN equal to NaN.
func sameFloats(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) })
}

func TestComparePairedKeepsInputOrder(t *testing.T) {
	// benchmath.NewSample sorts in place; the pairing must survive.
	base := []float64{300, 100, 200, 600, 500, 400, 700}
	cand := []float64{303, 99, 204, 600, 510, 396, 707}
	b0, c0 := slices.Clone(base), slices.Clone(cand)
	stats.ComparePaired(tps, base, cand, stats.Options{})
	if !slices.Equal(base, b0) || !slices.Equal(cand, c0) {
		t.Errorf("inputs reordered: %v %v", base, cand)
	}
}

func TestComparePairedDegenerate(t *testing.T) {
	tests := []struct {
		name           string
		base, cand     []float64
		n              int
		change, lo, hi float64
		p              float64
		warnings       []stats.WarningKind
	}{
		// Identical samples: ratio 1 every round, no spread.
		{"identical", []float64{100, 101, 99}, []float64{100, 101, 99}, 3, 0, 0, 0, 1, []stats.WarningKind{stats.NoVariation}},
		// The same ratio 1.05 every round: a change with no spread.
		{"constant ratio", []float64{100, 200, 300}, []float64{105, 210, 315}, 3, 0.05, 0.05, 0.05, 0, []stats.WarningKind{stats.NoVariation}},
		// One round: a change, nothing else.
		{"one round", []float64{100}, []float64{90}, 1, -0.1, math.Inf(-1), math.Inf(1), math.NaN(), []stats.WarningKind{stats.TooFew}},
		// Different lengths: the first two rounds pair, then one round
		// is too few.
		{"lengths differ", []float64{100, 100, 100}, []float64{110}, 1, 0.1, math.Inf(-1), math.Inf(1), math.NaN(), []stats.WarningKind{stats.LeftOut, stats.TooFew}},
		// Nothing usable.
		{"nothing", []float64{0, -1}, []float64{1, 1}, 0, math.NaN(), math.Inf(-1), math.Inf(1), math.NaN(), []stats.WarningKind{stats.LeftOut, stats.TooFew}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := stats.ComparePaired(tps, tt.base, tt.cand, stats.Options{})
			if c.N1 != tt.n {
				t.Errorf("N1 = %d, want %d", c.N1, tt.n)
			}
			near(t, "Change", c.Change, tt.change, 1e-12)
			near(t, "Lo", c.Lo, tt.lo, 1e-12)
			near(t, "Hi", c.Hi, tt.hi, 1e-12)
			near(t, "P", c.P, tt.p, 0)
			checkWarnings(t, c.Warnings, tt.warnings...)
		})
	}
}

func TestComparePairedConfidence(t *testing.T) {
	// 90 % instead of 95 %: the sleep data's t interval with t(0.95, 9) =
	// 1.833113; SciPy t.interval(0.90, 9, loc=1.58, scale=sd/√10):
	// 0.8669947329717289, 2.293005267028271.
	c := stats.ComparePaired(tps, ones(10), exps(1.2, 2.4, 1.3, 1.3, 0.0, 1.0, 1.8, 0.8, 4.6, 1.4), stats.Options{Confidence: 0.90})
	near(t, "TLo", c.PairedDetail.TLo, math.Expm1(0.8669947329717289), 1e-9)
	near(t, "THi", c.PairedDetail.THi, math.Expm1(2.293005267028271), 1e-9)
	// A confidence out of range falls back to 95 % with a warning.
	c = stats.ComparePaired(tps, ones(3), exps(0.1, 0.2, 0.3), stats.Options{Confidence: 95})
	if c.Confidence != 0.95 || !hasWarning(c.Warnings, stats.BadOption) {
		t.Errorf("Confidence = %v, warnings %v; want 0.95 and a bad-option warning", c.Confidence, c.Warnings)
	}
}
