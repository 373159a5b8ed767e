package compare

import (
	"fmt"
	"math"
	"slices"

	"github.com/pgscale/pgscale/internal/stats"
)

// measuredBounds returns the bounds that apply to a row of the comparison,
// noting each bound on a known measure that these files did not measure
// (probes off, no hardware counters): it judges nothing, and says so
// instead of failing the comparison. A bound on an unknown measure is
// kept, for stats.Evaluate to refuse.
func measuredBounds(rep *Comparison, bounds stats.Bounds) stats.Bounds {
	known := map[string]bool{}
	for _, md := range Measures() {
		known[md.Name] = true
	}
	var out stats.Bounds
	for _, b := range bounds {
		matched := false
		for _, row := range rep.Rows {
			if row.Measure.Name == b.Measure && (b.Step == "" || b.Step == row.Measure.Step) {
				matched = true
				break
			}
		}
		if !matched && known[b.Measure] && (b.Step == "" || stepKnown(rep, b.Step)) {
			why := "was not measured in these files"
			if rep.Counted && slices.Contains(rep.Slowed, b.Measure) {
				why = "is not compared under Valgrind, which slows " + rep.Valgrind + " 20 to 50 times"
			}
			rep.Notes = append(rep.Notes, fmt.Sprintf("bound %s judges nothing: %s %s", b, b.Measure, why))
			continue
		}
		out = append(out, b)
	}
	return out
}

// stepKnown reports whether some row is at the step ("c=4").
func stepKnown(rep *Comparison, step string) bool {
	for _, row := range rep.Rows {
		if row.Measure.Step == step {
			return true
		}
	}
	return false
}

// CheckBounds finds the bounds that would be a *stats.BoundError for a
// sweep over clients, before anything runs.
func CheckBounds(clients []int, bounds stats.Bounds, opt stats.Options) error {
	var cs []stats.Comparison
	for _, c := range clients {
		for _, md := range Measures() {
			m := md.Measure(StepLabel(c))
			cs = append(cs, stats.Comparison{Measure: m, Change: math.NaN(), P: math.NaN()})
		}
	}
	_, err := stats.Evaluate(cs, bounds, opt)
	return err
}

// CountedAutoMax is the most rounds a counted run given no bounds rounds
// until decided (ab --count without --bound): a count decides in three
// layouts or so; a step left to the spread (several clients) would
// otherwise keep a run of new layouts going where the spread is near
// what the most rounds could decide.
const CountedAutoMax = 10

// CountedLimit is the limit of the bounds a counted run decides on when
// given none (CountedBounds), in per cent: 1 % more instructions per
// transaction than the baseline's.
const CountedLimit = 1

// CountedBounds are the bounds a counted A/B run decides on when given
// none (ab --count without --bound), as a simulation-mode CI does: the
// client backends' instructions per transaction, and with a pooler in
// front the pooler's, at one client, CountedLimit; at the other client
// counts the same bounds "if decidable" — reported, and bounded only
// where this runner's spread can decide them (several clients meet on
// locks, and a pooler's event loop batches their packets by timing).
// Without a step of one client every bound is "if decidable". With
// poolerOnly (--count pooler) the servers are not counted: the pooler's
// bounds alone.
func CountedBounds(clients []int, pooler, poolerOnly bool) stats.Bounds {
	var measures []string
	if !poolerOnly {
		measures = append(measures, "instr/txn")
	}
	if pooler {
		measures = append(measures, "pooler-instr/txn")
	}
	one, others := slices.Contains(clients, 1), slices.ContainsFunc(clients, func(c int) bool { return c != 1 })
	var out stats.Bounds
	for _, m := range measures {
		if one {
			out = append(out, stats.Bound{Measure: m, Step: StepLabel(1), Percent: CountedLimit})
		}
		if others {
			out = append(out, stats.Bound{Measure: m, Percent: CountedLimit, IfDecidable: true})
		}
	}
	return out
}
