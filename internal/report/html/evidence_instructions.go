package html

import "github.com/pgscale/pgscale/internal/probeid"

func init() { registerView(probeid.Instructions, instructionsView) }

// instructionsView has no part under a step: an A/B run's comparison
// shows the counts per transaction as measures and says in its why which
// functions a change is in, and the Profiles section draws the
// instructions' profile as a flame graph.
var instructionsView = evidenceView{elsewhere: "the comparison's counted measures (instr/txn, syscalls/txn, clock-reads/txn and, with the cache simulation, the misses and est-cycles/txn), its why, and the flame graph of the instructions' profile"}
