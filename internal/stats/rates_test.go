package stats_test

import (
	"testing"

	"github.com/pgscale/pgscale/internal/stats"
)

// Rates over different exposures: the same samples per transaction do
// not differ however different the samples, a rate that grew by more
// than counting explains does, a handful of samples does not.
func TestRatesDiffer(t *testing.T) {
	for _, c := range []struct {
		x1, e1, x2, e2 float64
		want           bool
	}{
		{800, 1000, 400, 500, false}, // 0.8 a transaction each
		{800, 1000, 500, 500, true},  // 0.8 against 1.0: z ≈ 4.3
		{80, 1000, 50, 500, false},   // 0.08 against 0.1: z ≈ 1.4
		{3, 1000, 0, 1000, false},    // three samples gone
		{400, 1000, 0, 1000, true},   // a function gone
		{0, 1000, 0, 1000, false},    // nothing either side
		{10, 0, 10, 1000, false},     // no exposure
	} {
		if got := stats.RatesDiffer(c.x1, c.e1, c.x2, c.e2); got != c.want {
			t.Errorf("RatesDiffer(%v, %v, %v, %v) = %v, want %v", c.x1, c.e1, c.x2, c.e2, got, c.want)
		}
	}
}
