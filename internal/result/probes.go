package result

// Probes is the server-side evidence gathered beside a step: process
// accounting, hardware counters, wait events, locks, statements and an
// optional CPU profile. A probe that was turned off is absent; a probe that
// could not run is listed in Unavailable with the reason.
//
// Each probe's evidence is a pointer field named in JSON by the probe's
// name, its type in evidence_NAME.go and its schema in
// evidence_NAME.schema.json.
type Probes struct {
	// ElapsedS is the probes' own window: from the start of the step's
	// measured window to the moment the probes stopped.
	ElapsedS   float64       `json:"elapsed_s"`
	Process    *ProcessStats `json:"process,omitempty"`
	Counters   *Counters     `json:"counters,omitempty"`
	Waits      *Waits        `json:"waits,omitempty"`
	Locks      *Locks        `json:"locks,omitempty"`
	Statements *Statements   `json:"statements,omitempty"`
	Profile    *Profile      `json:"profile,omitempty"`
	// Instructions are the server's instructions counted under Valgrind
	// (--count instructions).
	Instructions *Instructions `json:"instructions,omitempty"`
	// Upstreams are the servers behind the target, when there are several
	// (shards, a primary and its replicas): their share of the work and
	// the replicas' lag.
	Upstreams   *Upstreams         `json:"upstreams,omitempty"`
	Costs       []ProbeCost        `json:"costs,omitempty"`       // what each probe cost
	Unavailable []ProbeUnavailable `json:"unavailable,omitempty"` // probes asked for that could not run
}

// ProbeUnavailable names a probe that was asked for but could not run.
type ProbeUnavailable struct {
	Probe  string `json:"probe"`
	Reason string `json:"reason"`
}

// ProbeCost is what one probe cost during the step: CPU on this host
// outside the server (pgscale's own threads, a perf process) and, when the
// server's processes are visible, in the server (the backends of the
// probe's connections, pg_wait_sampling's collector).
type ProbeCost struct {
	Probe       string  `json:"probe"`
	LocalCPUS   float64 `json:"local_cpu_s"`
	InProcessS  float64 `json:"in_process_cpu_s"` // the part of LocalCPUS inside pgscale's process
	ServerCPUS  float64 `json:"server_cpu_s"`
	ServerKnown bool    `json:"server_known"` // false: the server's processes are not on this host
	Queries     int64   `json:"queries,omitempty"`
}
