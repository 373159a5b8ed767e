package stats_test

import (
	"math"
	"slices"
	"testing"

	"github.com/pgscale/pgscale/internal/stats"
)

func TestSummarize(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name                 string
		values               []float64
		n                    int
		median, lo, hi, conf float64
		mean, sd, min, max   float64
		warnings             []stats.WarningKind
	}{
		{
			// By hand: 1..10 shuffled. Median 5.5; order statistics 2
			// and 9 cover 1 - 2·(1+10)/1024 = 1002/1024 ≥ 0.95, so the
			// interval is [2, 9]. Mean 5.5, variance 82.5/9.
			name:   "ten",
			values: []float64{7, 3, 10, 1, 5, 9, 2, 8, 6, 4},
			n:      10, median: 5.5, lo: 2, hi: 9, conf: 1002.0 / 1024,
			mean: 5.5, sd: math.Sqrt(82.5 / 9), min: 1, max: 10,
		},
		{
			// Five values are too few for a two-sided 95 % interval:
			// [min, max] covers 30/32, so the lower end opens to -∞ for
			// 31/32. Variance 10/4.
			name:   "five",
			values: []float64{5, 1, 4, 2, 3},
			n:      5, median: 3, lo: -inf, hi: 5, conf: 31.0 / 32,
			mean: 3, sd: math.Sqrt(2.5), min: 1, max: 5,
			warnings: []stats.WarningKind{stats.TooFew},
		},
		{
			name:   "NaN left out",
			values: []float64{7, 3, nan, 10, 1, 5, 9, 2, 8, 6, 4},
			n:      10, median: 5.5, lo: 2, hi: 9, conf: 1002.0 / 1024,
			mean: 5.5, sd: math.Sqrt(82.5 / 9), min: 1, max: 10,
			warnings: []stats.WarningKind{stats.LeftOut},
		},
		{
			name: "empty", n: 0, median: nan, lo: -inf, hi: inf, conf: 0,
			mean: nan, sd: nan, min: nan, max: nan,
			warnings: []stats.WarningKind{stats.TooFew},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.values)
			s := stats.Summarize(in, stats.Options{})
			if s.N != tt.n {
				t.Errorf("N = %d, want %d", s.N, tt.n)
			}
			near(t, "Median", s.Median, tt.median, 1e-12)
			near(t, "Lo", s.Lo, tt.lo, 1e-12)
			near(t, "Hi", s.Hi, tt.hi, 1e-12)
			near(t, "Confidence", s.Confidence, tt.conf, 1e-12)
			near(t, "Mean", s.Mean, tt.mean, 1e-12)
			near(t, "StdDev", s.StdDev, tt.sd, 1e-12)
			near(t, "Min", s.Min, tt.min, 0)
			near(t, "Max", s.Max, tt.max, 0)
			checkWarnings(t, s.Warnings, tt.warnings...)
			if !sameFloats(in, tt.values) {
				t.Errorf("input modified: %v", in)
			}
		})
	}
}
