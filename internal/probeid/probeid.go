// Package probeid names each server-side probe and places it among the
// others, once. The probe (internal/probe), its options (internal/probeopt),
// its evidence and schema in result files (internal/result), and its text
// and HTML views (internal/report, internal/report/html) are each
// registered under the probe's ID, so no layer writes a probe's name or
// rank of its own. It imports nothing, so every layer may import it.
package probeid

// ID is one probe: its name and its place among the probes.
type ID struct {
	// Name is the probe's name: the property its evidence is written
	// under in a step's probes (so it never changes once files hold
	// it), the name its costs and unavailability are recorded by, the
	// key of its option, and the NAME of its files (evidence_NAME.go).
	Name string
	// Rank orders the probes: they open, run, record their evidence and
	// are shown in text and HTML in rising rank (process accounting,
	// which the others use, first).
	Rank int
}

// String returns the probe's name.
func (id ID) String() string { return id.Name }

// The probes, one line each, in rank order. Adding a probe is a line here
// and its own files in each layer (docs/architecture.md, "Adding things").
var (
	Process      = ID{Name: "process", Rank: 10}      // CPU and context switches from /proc
	Counters     = ID{Name: "counters", Rank: 20}     // hardware counters
	Waits        = ID{Name: "waits", Rank: 30}        // wait-event sampling
	Locks        = ID{Name: "locks", Rank: 40}        // pg_locks snapshots
	Statements   = ID{Name: "statements", Rank: 50}   // pg_stat_statements differences
	Checkpoints  = ID{Name: "checkpoints", Rank: 55}  // checkpoints, buffers written and WAL
	Profile      = ID{Name: "profile", Rank: 60}      // a CPU profile with perf (--profile)
	Instructions = ID{Name: "instructions", Rank: 70} // instructions counted under Valgrind (--count)
	Upstreams    = ID{Name: "upstreams", Rank: 80}    // the servers behind a pooler or proxy
	Pooler       = ID{Name: "pooler", Rank: 85}       // a pooler's admin console
)
