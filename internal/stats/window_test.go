package stats_test

import (
	"math"
	"testing"

	"github.com/pgscale/pgscale/internal/stats"
)

func TestCompareWindows(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	ramp := func(from float64, n int) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = from + float64(i)
		}
		return xs
	}
	tests := []struct {
		name           string
		before, during []float64
		opt            stats.WindowOptions
		n1, n2         int
		base, cand     float64
		change, lo, hi float64
		p, se, df      float64
		batch, kb, kd  int
		dropB, dropD   int
		lag1           float64
		warnings       []stats.WarningKind
	}{
		{
			// By hand, batches of 2: batch means 99, 101 and 74, 76;
			// means 100 and 75, change -25 %. Variances of the batch
			// means 2 and 2, so se² = 2/(2·100²) + 2/(2·75²) = 1/10000
			// + 1/5625 = 1/3600, se = 1/60; Welch-Satterthwaite df =
			// (1/3600)² / ((1/10000)² + (1/5625)²) = 1.8545994065281894.
			// SciPy t.ppf(0.975, df) gives the interval
			// -0.30584461229243964, -0.18966270382536482 and
			// 2·t.sf(|ln 0.75|·60, df) p = 0.004614772962718113.
			name:   "hand",
			before: []float64{99, 99, 101, 101}, during: []float64{74, 74, 76, 76},
			opt: stats.WindowOptions{BatchLen: 2},
			n1:  4, n2: 4, base: 100, cand: 75, change: -0.25,
			lo: -0.30584461229243964, hi: -0.18966270382536482, p: 0.004614772962718113,
			se: 1.0 / 60, df: 1.8545994065281894, batch: 2, kb: 2, kd: 2, lag1: nan,
		},
		{
			// Warm-up skipped: 4 s before (the ramp-up 50..80) and 3 s
			// during (the 900, 820, 790 of the disturbance taking hold).
			// 16 and 27 s remain; the batch is ⌈√16⌉ = 4 s, so 4 batches
			// before and 6 during, the first 3 s of the 27 left over.
			// Reference: an independent Python implementation of the
			// same method (testdata/reference.py, window()): base
			// 1002.6875, cand 761.9583333333334, change
			// -0.2400839410750275, interval -0.2443294932548497,
			// -0.23581453628596527, se 0.002278996155921348, df
			// 5.887074978976139, p 3.267007339332689e-11, lag-1
			// autocorrelation -0.40973177026798985.
			name:   "warm-up and leftover",
			before: []float64{50, 60, 70, 80, 1021, 1003, 998, 1010, 987, 1005, 1012, 995, 1001, 990, 1008, 1003, 997, 1015, 992, 1006},
			during: []float64{900, 820, 790, 760, 742, 781, 755, 770, 748, 766, 759, 772, 740, 785, 751, 763, 777, 744, 769, 758,
				761, 773, 749, 780, 756, 764, 771, 746, 762, 768},
			opt: stats.WindowOptions{SkipBefore: 4, SkipDuring: 3},
			n1:  16, n2: 24, base: 1002.6875, cand: 761.9583333333334, change: -0.2400839410750275,
			lo: -0.2443294932548497, hi: -0.23581453628596527, p: 3.267007339332689e-11,
			se: 0.002278996155921348, df: 5.887074978976139, batch: 4, kb: 4, kd: 6, dropB: 4, dropD: 6,
			lag1: -0.40973177026798985,
		},
		{
			// A steady climb on both sides: 8 batch means of 8 s each,
			// equally spaced. By hand, centred at ±0.5 .. ±3.5 their lag-1
			// autocorrelation is 26.25/42 = 0.625 > 2/√16 = 0.5. The
			// interval from testdata/reference.py's window().
			name:   "autocorrelated",
			before: ramp(1000, 64), during: ramp(800, 64),
			n1: 64, n2: 64, base: 1031.5, cand: 831.5, change: 831.5/1031.5 - 1,
			lo: -0.21226181004536337, hi: -0.17509460931076323, p: 2.0949315524374155e-11,
			se: 0.01070225420767973, df: 13.396426520516874, batch: 8, kb: 8, kd: 8, lag1: 0.625,
			warnings: []stats.WarningKind{stats.Autocorrelated},
		},
		{
			// 3 s a side make one batch of 2 s each: the change of the
			// means of all seconds, no interval.
			name:   "too short",
			before: []float64{100, 110, 90}, during: []float64{50, 60, 40},
			n1: 3, n2: 3, base: 100, cand: 50, change: -0.5, lo: -inf, hi: inf,
			p: nan, se: nan, df: nan, batch: 2, kb: 1, kd: 1, lag1: nan,
			warnings: []stats.WarningKind{stats.TooFew},
		},
		{
			// Everything before is warm-up.
			name:   "all warm-up",
			before: []float64{100, 110}, during: []float64{50, 60},
			opt:  stats.WindowOptions{SkipBefore: 5},
			base: nan, cand: nan, change: nan, lo: -inf, hi: inf, p: nan, se: nan, df: nan,
			dropB: 2, lag1: nan,
			warnings: []stats.WarningKind{stats.TooFew},
		},
		{
			// A NaN second is dropped; the rest is the hand case.
			name:   "NaN dropped",
			before: []float64{99, 99, nan, 101, 101}, during: []float64{74, 74, 76, 76},
			opt: stats.WindowOptions{BatchLen: 2},
			n1:  4, n2: 4, base: 100, cand: 75, change: -0.25,
			lo: -0.30584461229243964, hi: -0.18966270382536482, p: 0.004614772962718113,
			se: 1.0 / 60, df: 1.8545994065281894, batch: 2, kb: 2, kd: 2, dropB: 1, lag1: nan,
			warnings: []stats.WarningKind{stats.LeftOut},
		},
		{
			// A total stall: the during mean is 0, a change of -100 %
			// with no interval on a log scale.
			name:   "stall",
			before: []float64{99, 99, 101, 101}, during: []float64{0, 0, 0, 0},
			opt: stats.WindowOptions{BatchLen: 2},
			n1:  4, n2: 4, base: 100, cand: 0, change: -1, lo: -inf, hi: inf,
			p: nan, se: nan, df: nan, batch: 2, kb: 2, kd: 2, lag1: nan,
			warnings: []stats.WarningKind{stats.LeftOut},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := stats.CompareWindows(tps, tt.before, tt.during, tt.opt)
			if c.Method != stats.Window || c.Test != stats.WindowTest || c.N1 != tt.n1 || c.N2 != tt.n2 {
				t.Errorf("Method, Test, N1, N2 = %v, %q, %d, %d; want N1, N2 = %d, %d", c.Method, c.Test, c.N1, c.N2, tt.n1, tt.n2)
			}
			near(t, "Base", c.Base, tt.base, 1e-12)
			near(t, "Cand", c.Cand, tt.cand, 1e-12)
			near(t, "Change", c.Change, tt.change, 1e-12)
			near(t, "Lo", c.Lo, tt.lo, 1e-9)
			near(t, "Hi", c.Hi, tt.hi, 1e-9)
			near(t, "P", c.P, tt.p, 1e-9)
			d := c.WindowDetail
			if d == nil {
				t.Fatal("no WindowDetail")
			}
			near(t, "SELog", d.SELog, tt.se, 1e-9)
			near(t, "DF", d.DF, tt.df, 1e-9)
			if d.BatchLen != tt.batch || d.BatchesBefore != tt.kb || d.BatchesDuring != tt.kd {
				t.Errorf("BatchLen, BatchesBefore, BatchesDuring = %d, %d, %d; want %d, %d, %d", d.BatchLen, d.BatchesBefore, d.BatchesDuring, tt.batch, tt.kb, tt.kd)
			}
			if d.DroppedBefore != tt.dropB || d.DroppedDuring != tt.dropD {
				t.Errorf("DroppedBefore, DroppedDuring = %d, %d; want %d, %d", d.DroppedBefore, d.DroppedDuring, tt.dropB, tt.dropD)
			}
			near(t, "Lag1", d.Lag1, tt.lag1, 1e-12)
			checkWarnings(t, c.Warnings, tt.warnings...)
		})
	}
}
