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
//
// The timers are the same at every client count, so the rate is one for
// all of them too: the fits at each are combined (stats.CombineTimeFits),
// and at 4 clients, where the event loop's turns per transaction move
// with how the clients' packets bunch, the fit at 1 client, whose windows
// tell the rate within a few per cent, decides it (measured on pgbouncer
// 1.18, 6 layouts: 4377 ± 257 a second at 1 client, 41210 ± 36815 at 4;
// its maintenance alone, do_full_maint, 527 ± 17 and 560 ± 17).
func poolerTimeFits(inputs []Input, clients []int) map[int]stats.TimeFit {
	out := map[int]stats.TimeFit{}
	var all []stats.TimeFit
	for _, c := range clients {
		sides := make([][]result.Step, len(inputs))
		for i, in := range inputs {
			for _, s := range stepsOf(in.File, c) {
				sides[i] = append(sides[i], *s)
			}
		}
		if f := diagnose.PoolerTime(sides); f.Points > 0 {
			out[c] = f
			all = append(all, f)
		}
	}
	if rate, se, ok := stats.CombineTimeFits(all); ok {
		for c, f := range out {
			out[c] = f.WithRate(rate, se)
		}
	}
	return out
}

// timeSeparated is md with, for pooler-instr/txn, each step's value its
// per-transaction part under the fit (its count less the fit's work per
// second times the window's seconds, per transaction); md as it is for
// any other measure, when the fit could not tell time from transactions,
// or when it found no time-driven work beyond its own uncertainty
// (stats.TimeFit.Clear, as the per-function tests take a function's):
// nothing is then taken off, and the note says so in words.
func timeSeparated(md MeasureDef, fit stats.TimeFit, ok bool) MeasureDef {
	if md.Name != "pooler-instr/txn" || !ok {
		return md
	}
	if !fit.Determined {
		// Its timers' work stays in the count: it moves with the
		// window's wall time.
		batching := md.Timing
		md.Timing = func(clients int) string {
			if why := batching(clients); why != "" {
				return why
			}
			return "the pooler's time-driven work (its timers) is in the count, which the windows' lengths could not tell apart from its work per transaction"
		}
		return md
	}
	if !fit.Clear() {
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
// taken off and its share of the count, per client count; where the
// windows could not tell, that the measure is the whole count; and where
// the fit found no time-driven work beyond its own uncertainty (a rate
// of "0 ± 53002 a second" tells nothing), that in words, with no figure.
func poolerTimeNote(inputs []Input, fits map[int]stats.TimeFit, clients []int) string {
	var parts, whole, unseen []string
	var rate string
	for _, c := range clients {
		f, ok := fits[c]
		if !ok {
			continue
		}
		if !f.Determined {
			whole = append(whole, StepLabel(c))
			continue
		}
		if !f.Clear() {
			unseen = append(unseen, StepLabel(c))
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
		rate = fmt.Sprintf("%.0f ± %.0f instructions a second of wall time", f.PerSecond, f.SE)
		parts = append(parts, fmt.Sprintf("%.2f%% of its count at %s", 100*share, StepLabel(c)))
	}
	var notes []string
	if len(parts) > 0 {
		notes = append(notes, "pooler-instr/txn is the pooler's work per transaction: its count less its time-driven work (timers, maintenance), "+
			rate+", fitted from every target's steps' transactions and wall times: "+strings.Join(parts, ", "))
	}
	if len(whole) > 0 {
		notes = append(notes, fmt.Sprintf("pooler-instr/txn at %s is the pooler's whole count per transaction, its time-driven work in it: the windows' wall times did not vary enough to tell it apart", strings.Join(whole, ", ")))
	}
	if len(unseen) > 0 {
		notes = append(notes, fmt.Sprintf("pooler-instr/txn at %s is the pooler's whole count per transaction: fitted from the windows' wall times, its time-driven work (timers, maintenance) was not told apart from none (the rate fitted from the windows' wall times was within three of its standard errors of zero), so nothing is taken off", strings.Join(unseen, ", ")))
	}
	return strings.Join(notes, "; ")
}
