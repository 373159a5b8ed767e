package html

// instructionsView has no part under a step: an A/B run's comparison
// shows the instructions and system calls per transaction as measures,
// and the Profiles section draws their profile as a flame graph.
var instructionsView = evidenceView{probe: "instructions",
	elsewhere: "the comparison's instr/txn and syscalls/txn measures, and the flame graph of the instructions' profile"}
