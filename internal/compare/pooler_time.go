package compare

import (
	"fmt"
	"strings"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
)

// poolerTimeFits fits, at each client count, the pooler's time-driven work
// over the complete steps of every input (diagnose.PoolerTime): one rate
// of instructions per second of wall time for all targets, so that
// pooler-instr/txn compares what each does per transaction.
func poolerTimeFits(inputs []Input, clients []int) map[int]stats.TimeFit {
	out := map[int]stats.TimeFit{}
	for _, c := range clients {
		sides := make([][]result.Step, len(inputs))
		for i, in := range inputs {
			for _, s := range stepsOf(in.File, c) {
				sides[i] = append(sides[i], *s)
			}
		}
		if f := diagnose.PoolerTime(sides); f.Points > 0 {
			out[c] = f
		}
	}
	return out
}

// timeSeparated is md with, for pooler-instr/txn, each step's value its
// per-transaction part under the fit (its count less the fit's work per
// second times the window's seconds, per transaction); md as it is for
// any other measure, or when the fit could not tell time from
// transactions.
func timeSeparated(md MeasureDef, fit stats.TimeFit, ok bool) MeasureDef {
	if md.Name != "pooler-instr/txn" || !ok || !fit.Determined {
		return md
	}
	raw := md.Value
	md.Value = func(s *result.Step) float64 {
		if p, ok := diagnose.PoolerPoint(*s); ok {
			return fit.PerEventPart(p)
		}
		return raw(s)
	}
	return md
}

// poolerTimeNote says what pooler-instr/txn is under the fits: the rate
// taken off and its share of the count, per client count; and where the
// windows could not tell, that the measure is the whole count.
func poolerTimeNote(inputs []Input, fits map[int]stats.TimeFit, clients []int) string {
	var parts, whole []string
	for _, c := range clients {
		f, ok := fits[c]
		if !ok {
			continue
		}
		if !f.Determined {
			whole = append(whole, StepLabel(c))
			continue
		}
		var count, secs float64
		for _, in := range inputs {
			for _, s := range stepsOf(in.File, c) {
				if p, ok := diagnose.PoolerPoint(*s); ok {
					count += p.Count
					secs += p.Seconds
				}
			}
		}
		share := 0.0
		if count > 0 {
			share = f.PerSecond * secs / count
		}
		parts = append(parts, fmt.Sprintf("%s %.0f ± %.0f a second (%.2f%% of its count)", StepLabel(c), f.PerSecond, f.SE, 100*share))
	}
	var notes []string
	if len(parts) > 0 {
		notes = append(notes, "pooler-instr/txn is the pooler's work per transaction: its count less its time-driven work (timers, maintenance), fitted from each step's transactions and wall time over every target's steps: "+
			strings.Join(parts, ", "))
	}
	if len(whole) > 0 {
		notes = append(notes, fmt.Sprintf("pooler-instr/txn at %s is the pooler's whole count per transaction, its time-driven work in it: the windows' wall times did not vary enough to tell it apart", strings.Join(whole, ", ")))
	}
	return strings.Join(notes, "; ")
}
