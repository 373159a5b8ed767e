package store

import (
	"context"

	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/trend"
)

// Changes runs change-point detection (stats.ChangePoints with opt) over
// the values of every series matching f, in time order, and returns the
// change points that lie after the series' acknowledged change (all of
// them where none was acknowledged), ordered by series key, then index.
// Statistical caveats come back as warnings naming the series.
func (s *Store) Changes(ctx context.Context, f Filter, opt stats.ChangePointOptions) ([]trend.Change, []error, error) {
	hs, err := s.Export(ctx, f)
	if err != nil {
		return nil, nil, err
	}
	var out []trend.Change
	var warns []error
	for _, h := range hs {
		cs, ws := h.ChangePoints(opt)
		warns = append(warns, ws...)
		for _, c := range cs {
			if !c.Acked {
				out = append(out, c)
			}
		}
	}
	return out, warns, nil
}
