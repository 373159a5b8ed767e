package micro

// The measures of a counted run (Run.Counted), per iteration: the
// instructions, and with the cache simulation the estimated cycles and
// the simulated misses, named as the server's counts per transaction are.
const (
	UnitInstructions = "instr/op"
	UnitEstCycles    = "est-cycles/op"
	UnitL1IMisses    = "l1i-miss/op"
	UnitL1DMisses    = "l1d-miss/op"
	UnitLLMisses     = "ll-miss/op"
	UnitBranchMisses = "branch-miss/op"
)

// countedMinChange is each counted measure's smallest change of interest:
// a significant change smaller than it is negligible, never a
// regression. A C or C++ program's count repeats to the instruction; a Go
// program's moves by up to ±0.5 % from one process to the next, the work
// its runtime's scheduler does as the wall clock runs (a goroutine
// preempted every 10 ms, 50 times as often per iteration under
// callgrind) and its collector's (docs/micro.md measures it): twice that
// is of interest.
var countedMinChange = map[string]float64{
	UnitInstructions: 0.01,
	UnitEstCycles:    0.01,
	UnitL1IMisses:    0.03,
	UnitL1DMisses:    0.03,
	UnitLLMisses:     0.03,
	UnitBranchMisses: 0.03,
}

// CountedUnit reports whether a unit is a counted measure, and its smallest
// change of interest.
func CountedUnit(unit string) (minChange float64, ok bool) {
	m, ok := countedMinChange[unit]
	return m, ok
}
