package diagnose

import (
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
)

// A pooler counted under Valgrind does two kinds of work in a window: per
// transaction (reading, routing and writing its packets) and per second
// of wall time (its timers: pgbouncer's maintenance three times a second,
// and the turns of its event loop they wake). The second moves its count
// per transaction with how long the window lasted — under Valgrind, on a
// shared machine, by tens of per cent from round to round — and with it
// the measure, by about 0.8 % here, hiding changes smaller than that.
// PoolerTime separates them by regressing each step's count on its
// transactions and its window's wall time (stats.FitTime: one rate per
// second for every target, a work per transaction for each); the
// per-transaction part is the pooler-instr/txn measure and what the
// per-function tests compare.

// PoolerPoint is a step's pooler count as the fit takes it; ok is false
// when the step counted no pooler or did not record its window's wall
// time (files written before it was).
func PoolerPoint(s result.Step) (stats.TimePoint, bool) {
	in := counts(s)
	if in == nil || in.Pooler == nil || !(in.PoolerWindowS > 0) {
		return stats.TimePoint{}, false
	}
	return stats.TimePoint{Count: float64(in.Pooler.Instructions), Events: float64(in.Transactions), Seconds: in.PoolerWindowS}, true
}

// PoolerTime fits the pooler's time-driven work over the steps of every
// target at one client count (sides[t] are target t's steps).
func PoolerTime(sides [][]result.Step) stats.TimeFit {
	groups := make([][]stats.TimePoint, len(sides))
	for i, steps := range sides {
		for _, s := range steps {
			if p, ok := PoolerPoint(s); ok {
				groups[i] = append(groups[i], p)
			}
		}
	}
	return stats.FitTime(groups)
}

// poolerFunctionTime fits each of the pooler's functions' own counts the
// same way: the functions whose work runs to the clock (pgbouncer's
// do_full_maint) have a rate and nothing per transaction. A function a
// step does not list (below the file's floor) counted nothing there.
func poolerFunctionTime(base, cand []result.Step) map[fnKey]stats.TimeFit {
	type step struct {
		p   stats.TimePoint
		own map[fnKey]float64
	}
	var sides [2][]step
	keys := map[fnKey]bool{}
	for side, steps := range [][]result.Step{base, cand} {
		for _, s := range steps {
			p, ok := PoolerPoint(s)
			if !ok {
				continue
			}
			st := step{p: p, own: map[fnKey]float64{}}
			for _, f := range counts(s).PoolerFunctions {
				k := fnKey{f.Function, f.Object}
				st.own[k] += float64(f.Self)
				keys[k] = true
			}
			sides[side] = append(sides[side], st)
		}
	}
	out := map[fnKey]stats.TimeFit{}
	for k := range keys {
		var groups [2][]stats.TimePoint
		for side, steps := range sides {
			for _, st := range steps {
				groups[side] = append(groups[side], stats.TimePoint{Count: st.own[k], Events: st.p.Events, Seconds: st.p.Seconds})
			}
		}
		out[k] = stats.FitTime(groups[:])
	}
	return out
}

// fnKey is a function as the counts name it: its name and its file.
type fnKey struct{ fn, ob string }
