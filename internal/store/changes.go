package store

import (
	"context"
	"fmt"

	"github.com/pgscale/pgscale/internal/stats"
)

// Change is a change point in a stored series.
type Change struct {
	// Series is the series it is in.
	Series Series
	// ChangePoint is what the detector found; its Index counts the
	// series' points in time order.
	stats.ChangePoint
	// Before is the last point before the change and After the first
	// after it: the change lies between their commits.
	Before, After Point
}

// Changes runs change-point detection (stats.ChangePoints with opt) over
// the values of every series matching f, in time order, and returns the
// change points that lie after the series' acknowledged change (all of
// them where none was acknowledged), ordered by series key, then index.
// Statistical caveats come back as warnings naming the series.
func (s *Store) Changes(ctx context.Context, f Filter, opt stats.ChangePointOptions) ([]Change, []error, error) {
	hs, err := s.Export(ctx, f)
	if err != nil {
		return nil, nil, err
	}
	var out []Change
	var warns []error
	for _, h := range hs {
		xs := make([]float64, len(h.Points))
		acked := -1
		for i, p := range h.Points {
			xs[i] = p.Value
			if p.ResultID == h.AckedResult {
				acked = i
			}
		}
		cps, ws := stats.ChangePoints(xs, opt)
		for _, w := range ws {
			warns = append(warns, fmt.Errorf("%s: %w", h.Key, w))
		}
		for _, c := range cps {
			if c.Index <= acked {
				continue
			}
			out = append(out, Change{Series: h.Series, ChangePoint: c, Before: h.Points[c.Index-1], After: h.Points[c.Index]})
		}
	}
	return out, warns, nil
}
