package ab

import (
	"fmt"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/result"
)

// countLost says, the moment it happens, that a counted step completed
// its transactions without a count (the instructions probe could not
// run: a connection that timed out under load): the round, the target,
// the step and the cause, in one line. The comparison leaves the round
// out and says so again.
func (rs *rounds) countLost(round int, name string, s *result.Step) {
	if !rs.spec.Counting() || !s.Complete {
		return
	}
	if why := compare.CountLost(s); why != "" {
		rs.spec.Notice(fmt.Sprintf("round %d, target %s, %s: the count is lost (%s); the comparison leaves round %d out",
			round, name, prose.Count(s.Clients, "client"), why, round))
	}
}
