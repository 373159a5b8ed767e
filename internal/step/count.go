package step

import (
	"fmt"
	"time"

	"github.com/pgscale/pgscale/internal/engine"
	"github.com/pgscale/pgscale/internal/prose"
)

// countProgressEvery is how often a counted step says how far it has
// come: under Valgrind a step of a heavy transaction runs for minutes,
// and without -P nothing else is printed meanwhile.
const countProgressEvery = 30 * time.Second

// CountProgress returns what a counted step on the target named name
// (empty: run's) does with each engine interval: every
// countProgressEvery, it notices the transactions done in the step's
// warm-up or its counted window (of perClient transactions a client).
func CountProgress(name string, perClient int, notice func(string)) func(engine.Progress) {
	var (
		last      time.Duration // the step's elapsed time at the last notice
		prev      time.Duration
		warm, win int64
	)
	return func(pr engine.Progress) {
		if pr.Elapsed < prev { // a new step
			last, warm, win = 0, 0, 0
		}
		prev = pr.Elapsed
		if pr.Warmup {
			warm += pr.Counts.Transactions
		} else {
			win += pr.Counts.Transactions
		}
		if pr.Elapsed-last < countProgressEvery {
			return
		}
		last = pr.Elapsed
		per := int64(pr.Clients * perClient)
		what := fmt.Sprintf("%d transactions of the warm-up (not counted)", warm)
		if !pr.Warmup {
			what = fmt.Sprintf("%d of %d transactions counted", win, per)
		}
		line := fmt.Sprintf("counting instructions: %s, %s: %s, %v into the step",
			prose.Count(pr.Clients, "client"), what, rate(win+warm, pr.Elapsed), pr.Elapsed.Round(time.Second))
		if name != "" {
			line = "target " + name + ": " + line
		}
		notice(line)
	}
}

// rate is n transactions in d, per second, as a counted step's progress
// says it.
func rate(n int64, d time.Duration) string {
	if d <= 0 {
		return "0 tps"
	}
	return fmt.Sprintf("%.1f tps", float64(n)/d.Seconds())
}
