package stats_test

import (
	"math"
	"testing"

	"github.com/pgscale/pgscale/internal/stats"
)

func TestFormatChange(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		change, lo, hi float64
		want           string
	}{
		{-0.002, -0.010, 0.006, "-0.2% ± 0.8%"},
		{-0.054, -0.063, -0.045, "-5.4% ± 0.9%"},
		{0.0542, 0.0449, 0.0635, "+5.4% ± 0.9%"},
		// Asymmetric: 10 % from the centre to the top, 5 % to the
		// bottom; ± takes the larger so the range covers the interval.
		{0.10, 0.05, 0.20, "+10.0% ± 10.0%"},
		{0, 0, 0, "+0.0% ± 0.0%"},
		// Counted instructions move by hundredths of a percent.
		{0.00012, 0.00008, 0.00016, "+0.012% ± 0.004%"},
		{-0.011, -0.0112, -0.0108, "-1.100% ± 0.020%"},
		{0.01, -inf, inf, "+1.0% ± ∞"},
		{math.NaN(), -inf, inf, "?"},
	}
	for _, tt := range tests {
		if got := stats.FormatChange(tt.change, tt.lo, tt.hi); got != tt.want {
			t.Errorf("FormatChange(%v, %v, %v) = %q, want %q", tt.change, tt.lo, tt.hi, got, tt.want)
		}
	}
}

func TestFormatPercent(t *testing.T) {
	for _, tt := range []struct {
		x    float64
		want string
	}{{0.0542, "+5.4%"}, {-0.05, "-5.0%"}, {1.5, "+150.0%"}} {
		if got := stats.FormatPercent(tt.x); got != tt.want {
			t.Errorf("FormatPercent(%v) = %q, want %q", tt.x, got, tt.want)
		}
	}
}
