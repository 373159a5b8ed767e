package html

func init() { registerView(instructionsView, 70) }

// instructionsView has no part under a step: an A/B run's comparison
// shows the counts per transaction as measures and says in its why which
// functions a change is in, and the Profiles section draws the
// instructions' profile as a flame graph.
var instructionsView = evidenceView{probe: "instructions",
	elsewhere: "the comparison's counted measures (instr/txn, syscalls/txn, clock-reads/txn and, with the cache simulation, the misses and est-cycles/txn), its why, and the flame graph of the instructions' profile"}
