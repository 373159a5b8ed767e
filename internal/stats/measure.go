package stats

import "fmt"

// Direction says which way a measure gets better.
type Direction int

const (
	// HigherIsBetter marks measures such as throughput (tps).
	HigherIsBetter Direction = iota + 1
	// LowerIsBetter marks measures such as latency, cpu/txn or ctx/txn.
	LowerIsBetter
)

// String returns "higher is better" or "lower is better".
func (d Direction) String() string {
	switch d {
	case HigherIsBetter:
		return "higher is better"
	case LowerIsBetter:
		return "lower is better"
	}
	return fmt.Sprintf("Direction(%d)", int(d))
}

// Measure names what a series of values is: "tps" at step "c=16" in tx/s,
// higher is better.
type Measure struct {
	// Name is the measure's short name as bounds refer to it: "tps", "p50",
	// "p99", "cpu/txn", "ctx/txn".
	Name string
	// Step is the step of a sweep the values belong to, such as "c=16";
	// empty when the comparison is not per step.
	Step string
	// Unit is the unit of the values, for display only ("tx/s", "ms").
	Unit string
	// Direction says which way is better; Evaluate needs it.
	Direction Direction
	// MinChange is the smallest relative change of interest (0.001 for
	// 0.1 %): Evaluate calls a significant change smaller than it
	// Negligible rather than Improved or Regressed. A bound on the
	// measure closer to zero takes its place. 0: every significant
	// change is of interest.
	MinChange float64
	// Counted marks a count made under Valgrind (instructions per
	// transaction): deterministic within a cluster to a few events, so a
	// failure needs no distribution-free cross-check of its few rounds
	// (MinFailRounds); the t interval decides it.
	Counted bool
	// Timing, when set, says why the measure depends on timing at its
	// step ("event-loop batching: ..."): a count that moves with how
	// events bunch. A bound for every step of the measure applies to such
	// a step only where the runner's spread can decide it, as "if
	// decidable" makes any bound; one naming the step applies as given.
	Timing string
}

// Key returns the name bounds and reports use: "tps@c=16", or "tps" when
// Step is empty.
func (m Measure) Key() string {
	if m.Step == "" {
		return m.Name
	}
	return m.Name + "@" + m.Step
}

// better reports whether a relative change is in the good direction.
func (m Measure) better(change float64) bool {
	if m.Direction == LowerIsBetter {
		return change < 0
	}
	return change > 0
}
