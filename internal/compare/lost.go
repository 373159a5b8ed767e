package compare

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/result"
)

// lostCounts leaves out of rounds those in which a counted target's step
// completed its transactions but its count was lost (the instructions
// probe could not run: a connection that timed out under load), since
// every counted measure of the round would then be missing on one side,
// and the tests would drop it anyway with no word of which round, whose
// and why. It returns the rounds left, and one note per round left out
// saying the round, the target, the step and the cause.
func lostCounts(inputs []Input, clients, rounds []int) ([]int, []string) {
	var keep []int
	var notes []string
	for _, r := range rounds {
		var lost []string
		for _, in := range inputs {
			if in.File.Target.Valgrind == nil {
				continue
			}
			for _, c := range clients {
				for _, s := range stepsOf(in.File, c) {
					if why := CountLost(s); s.Round == r && why != "" {
						lost = append(lost, fmt.Sprintf("%s's count at %s was lost (%s)", in.Name, prose.Count(c, "client"), why))
					}
				}
			}
		}
		if len(lost) == 0 {
			keep = append(keep, r)
			continue
		}
		notes = append(notes, fmt.Sprintf("round %d is left out: %s", r, strings.Join(lost, "; ")))
	}
	return keep, notes
}

// CountLost says why step s, counted under Valgrind, has no count
// ("probe instructions unavailable: connect: ..."); "" when it has one.
func CountLost(s *result.Step) string {
	switch {
	case s.Probes == nil:
		return "no probe ran"
	case s.Probes.Instructions() != nil:
		return ""
	}
	for _, u := range slices.Backward(s.Probes.Unavailable) {
		if u.Probe == probeid.Instructions.Name || u.Probe == "all" {
			return "probe " + u.Probe + " unavailable: " + u.Reason
		}
	}
	return "the instructions probe recorded nothing"
}
