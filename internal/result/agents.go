package result

// Coordination says how a run spread its clients over agents (pgscale run
// --agents): the coordination database (described, never with a
// password), the job name the agents joined under, and the run's number
// in that database.
type Coordination struct {
	Database string `json:"database"`
	Job      string `json:"job"`
	Run      int64  `json:"run"`
	// StartLeadMs is how far ahead of its setting each step's start
	// instant was put, so that every agent learns it in time.
	StartLeadMs float64 `json:"start_lead_ms"`
}

// Agent is one agent of a run, over all its steps.
type Agent struct {
	Index         int    `json:"index"`
	Host          string `json:"host"`
	SourceAddress string `json:"source_address,omitempty"`
	PID           int    `json:"pid"`
	// File is the agent's own result file (its share of every step),
	// relative to the directory of this file.
	File         string `json:"file,omitempty"`
	Transactions int64  `json:"transactions"` // over all steps
	// Offset is the agent's clock against the coordination database
	// server's, from its most certain estimate of the run.
	Offset Offset `json:"offset"`
}

// Offset is a clock's offset to the coordination database server's: the
// server's clock reads Ms more, within UncertaintyMs (half the round trip
// of the query the estimate came from).
type Offset struct {
	Ms            float64 `json:"ms"`
	UncertaintyMs float64 `json:"uncertainty_ms"`
}

// StepAgent is one agent's part of a step: which clients it ran, what it
// counted, and how its start and clock compare with the others'. The
// step's summary, intervals and histogram are the agents' added exactly.
type StepAgent struct {
	Index         int    `json:"index"`
	Host          string `json:"host"`
	SourceAddress string `json:"source_address,omitempty"`
	// FirstClient and Clients are its client ids: FirstClient to
	// FirstClient+Clients-1 (Clients 0: none in this step).
	FirstClient  int     `json:"first_client"`
	Clients      int     `json:"clients"`
	Transactions int64   `json:"transactions"`
	TPS          float64 `json:"tps"`
	// Offset is its clock against the coordination database server's,
	// estimated at this step's barrier.
	Offset Offset `json:"offset"`
	// StartLateMs is how long after the agreed instant its clients
	// started; StartSkewMs how long after the earliest agent's clients
	// (both on the server's clock, within the offsets' uncertainties).
	StartLateMs float64 `json:"start_late_ms"`
	StartSkewMs float64 `json:"start_skew_ms"`
	// ClientCPU is its own process's CPU during its measured window.
	ClientCPU CPU    `json:"client_cpu"`
	Complete  bool   `json:"complete"`
	Reason    string `json:"incomplete_reason,omitempty"`
}
