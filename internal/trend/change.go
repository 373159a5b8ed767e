package trend

import (
	"fmt"

	"github.com/pgscale/pgscale/internal/stats"
)

// Change is a change point in a series.
type Change struct {
	// Series is the series it is in.
	Series Series
	// ChangePoint is what the detector found; its Index counts the
	// series' points in time order.
	stats.ChangePoint
	// Before is the last point before the change and After the first
	// after it: the change lies between their commits.
	Before, After Point
	// Acked says the change lies at or before the series' acknowledged
	// change: it is known.
	Acked bool
}

// ChangePoints runs change-point detection (stats.ChangePoints with opt)
// over the series' values in time order and returns every change point,
// those up to its acknowledged change marked Acked. Statistical caveats
// come back as warnings naming the series.
func (h History) ChangePoints(opt stats.ChangePointOptions) ([]Change, []error) {
	xs := make([]float64, len(h.Points))
	acked := -1
	for i, p := range h.Points {
		xs[i] = p.Value
		if p.ResultID == h.AckedResult {
			acked = i
		}
	}
	cps, ws := stats.ChangePoints(xs, opt)
	var warns []error
	for _, w := range ws {
		warns = append(warns, fmt.Errorf("%s: %w", h.Key, w))
	}
	out := make([]Change, 0, len(cps))
	for _, c := range cps {
		out = append(out, Change{Series: h.Series, ChangePoint: c, Before: h.Points[c.Index-1], After: h.Points[c.Index], Acked: c.Index <= acked})
	}
	return out, warns
}

// ChangePointsOf returns the change points of each series
// (History.ChangePoints with opt), in the order of hs; the caveats are
// left out.
func ChangePointsOf(hs []History, opt stats.ChangePointOptions) [][]Change {
	out := make([][]Change, 0, len(hs))
	for _, h := range hs {
		cs, _ := h.ChangePoints(opt)
		out = append(out, cs)
	}
	return out
}

// Comparison returns the change as a comparison of the segments either
// side, for judging against bounds (stats.JudgeChange): its measure is the
// series' measure at its step ("tps" at "c=8"), a micro-benchmark's as a
// run's analysis names it (its benchmark, at its unit).
func (c Change) Comparison() stats.Comparison {
	return stats.Comparison{
		Measure: c.Series.AsMeasure(),
		N1:      c.NBefore, N2: c.NAfter, Base: c.ChangePoint.Before, Cand: c.ChangePoint.After,
		Change: c.Change, Lo: c.Lo, Hi: c.Hi, Confidence: c.Confidence, P: c.P, Test: stats.ChangePointTest,
	}
}
