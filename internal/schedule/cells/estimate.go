package cells

import (
	"time"

	"github.com/pgscale/pgscale/internal/suite"
)

// Estimate is how long the cells take to measure on n targets (the
// data's set-up in each cell comes on top), and how many of them count
// transactions instead of running for a time, which it cannot estimate
// ahead.
func Estimate(s *suite.Suite, cells []suite.Cell, n int) (time.Duration, int) {
	var total time.Duration
	unknown := 0
	for _, c := range cells {
		l := s.CellLoad(c)
		steps := time.Duration(len(l.Clients))
		if l.Duration <= 0 {
			unknown++
			continue
		}
		rounds := time.Duration(l.Rounds.N)
		if l.Rounds.Max > 0 {
			rounds = time.Duration(l.Rounds.Max) // at most: it stops once decided
		}
		switch {
		case n == 1:
			total += steps * (l.Duration + l.Warmup)
		case l.Rounds.Budget > 0:
			total += l.Rounds.Budget
		case s.Slice > 0 && len(s.Disturb) == 0:
			total += rounds * steps * (time.Duration(n)*l.Duration + l.Warmup)
		default:
			total += rounds * time.Duration(n) * steps * (l.Duration + l.Warmup)
		}
	}
	return total, unknown
}
