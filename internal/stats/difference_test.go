package stats_test

import (
	"math"
	"testing"

	"github.com/pgscale/pgscale/internal/stats"
)

// Differences of shares, by hand: d = 0.10, 0.12, 0.08, 0.10; mean 0.10,
// sd 0.01633, t(3) quantile 3.182: ± 0.02598.
func TestPairedDifference(t *testing.T) {
	d := stats.PairedDifference([]float64{0, 0.02, 0.04, 0.02}, []float64{0.10, 0.14, 0.12, 0.12}, stats.Options{})
	if d.N != 4 || math.Abs(d.Diff-0.10) > 1e-12 || math.Abs(d.Hi-d.Diff-0.025981) > 1e-5 || !(d.P < 0.01) {
		t.Errorf("difference %+v", d)
	}
	if d := stats.PairedDifference([]float64{0.1, 0.1}, []float64{0.1, 0.1}, stats.Options{}); d.Diff != 0 || d.P != 1 {
		t.Errorf("no difference: %+v", d)
	}
	if d := stats.PairedDifference([]float64{0.1, math.NaN()}, []float64{0.2, 0.3}, stats.Options{}); d.N != 1 || !math.IsNaN(d.P) || !math.IsInf(d.Hi, 1) {
		t.Errorf("one usable round: %+v", d)
	}
}
