package trend_test

import (
	"testing"

	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/trend"
)

// A series whose p99 rose 10 % halfway: one change point, as a comparison
// of the halves at its step, lower being better; acknowledged, marked.
func TestChangeComparison(t *testing.T) {
	h := trend.History{Series: trend.Series{Key: trend.Key{Measure: "p99", Clients: 8}, Unit: "ms"}}
	for i := range 40 {
		v := 1.0 + 0.01*float64(i%3)
		if i >= 20 {
			v *= 1.1
		}
		h.Points = append(h.Points, trend.Point{Value: v, ResultID: int64(i + 1)})
	}
	cs, _ := h.ChangePoints(stats.ChangePointOptions{})
	if len(cs) != 1 {
		t.Fatalf("change points %v, want one", cs)
	}
	c := cs[0].Comparison()
	if c.Measure.Key() != "p99@c=8" || c.Measure.Direction != stats.LowerIsBetter || c.N1 != 20 || c.N2 != 20 || c.Change < 0.09 {
		t.Errorf("comparison %+v", c)
	}
	// Acknowledged at its result: marked, and Changes would skip it.
	h.AckedResult = 21
	if cs, _ := h.ChangePoints(stats.ChangePointOptions{}); !cs[0].Acked {
		t.Errorf("acknowledged change not marked: %+v", cs[0])
	}
}
