package result

// Probes is the server-side evidence gathered beside a step: process
// accounting, hardware counters, wait events, locks, statements, an
// optional CPU profile and whatever else a probe gathers. A probe that was
// turned off is absent; a probe that could not run is listed in
// Unavailable with the reason.
//
// Each probe's evidence is its own file, evidence_NAME.go: its type, its
// accessors on Probes (Waits, SetWaits...) and the init function that
// registers it under the probe's name, which is also its property in the
// file and its schema's name (evidence_NAME.schema.json). Nothing here
// changes when a probe is added.
type Probes struct {
	// ElapsedS is the probes' own window: from the start of the step's
	// measured window to the moment the probes stopped.
	ElapsedS    float64
	Costs       []ProbeCost        // what each probe cost
	Unavailable []ProbeUnavailable // probes asked for that could not run
	// evidence holds each probe's evidence by its name: a pointer to its
	// registered type.
	evidence map[string]any
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
