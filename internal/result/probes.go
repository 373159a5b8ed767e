package result

// Probes is the server-side evidence gathered beside a step: process
// accounting, hardware counters, wait events, locks, statements and an
// optional CPU profile. A probe that was turned off is absent; a probe that
// could not run is listed in Unavailable with the reason.
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
	Instructions *Instructions      `json:"instructions,omitempty"`
	Costs        []ProbeCost        `json:"costs,omitempty"`       // what each probe cost
	Unavailable  []ProbeUnavailable `json:"unavailable,omitempty"` // probes asked for that could not run
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

// ProcessStats is process accounting from /proc over the probes' window.
type ProcessStats struct {
	CPUs int      `json:"cpus"` // cores the machine has
	Host HostStat `json:"host"`
	// Server is the postmaster and its children; nil when the server runs
	// on another host.
	Server *ProcGroup `json:"server,omitempty"`
	// Generator is pgscale's own process: clients, collector and the
	// in-process part of the probes (ProbeCost.ClientCPUS).
	Generator ProcGroup  `json:"generator"`
	Pooler    *ProcGroup `json:"pooler,omitempty"`
	// ServerNote says how the server's processes were found, or why not.
	ServerNote string `json:"server_note,omitempty"`
}

// HostStat is the whole machine: /proc/stat and pressure stall information.
type HostStat struct {
	BusyShare   float64 `json:"busy_share"` // non-idle time / (elapsed × CPUs), 0..1
	UserShare   float64 `json:"user_share"`
	SystemShare float64 `json:"system_share"` // system + irq + softirq
	IOWaitShare float64 `json:"iowait_share"`
	StealShare  float64 `json:"steal_share"`
	// PSI "some" shares: the fraction of wall time in which at least one
	// task was stalled on the resource. Absent without /proc/pressure.
	PSI *PSI `json:"psi,omitempty"`
}

// PSI is pressure stall information over the window, as fractions of wall time.
type PSI struct {
	CPUSome    float64 `json:"cpu_some"`
	IOSome     float64 `json:"io_some"`
	IOFull     float64 `json:"io_full"`
	MemorySome float64 `json:"memory_some"`
}

// ProcGroup is a set of processes accounted together.
type ProcGroup struct {
	Processes int     `json:"processes"` // seen during the window
	CPUS      float64 `json:"cpu_s"`     // user + system seconds
	// UserS and SysS split CPUS into user and kernel time (absent in files
	// written before pgscale recorded them).
	UserS float64 `json:"user_s,omitempty"`
	SysS  float64 `json:"sys_s,omitempty"`
	// OnCPUS and RunQueueWaitS come from schedstat: time running, and
	// time runnable but waiting for a CPU. Processes that exited during
	// the window are missing from both (their CPU is still in CPUS).
	OnCPUS         float64     `json:"on_cpu_s"`
	RunQueueWaitS  float64     `json:"run_queue_wait_s"`
	VoluntaryCtx   int64       `json:"voluntary_ctx"`
	InvoluntaryCtx int64       `json:"involuntary_ctx"`
	ByKind         []ProcGroup `json:"by_kind,omitempty"`
	Kind           string      `json:"kind,omitempty"` // in ByKind: "client backend", "background", "probe"
}

// Counters are hardware counters over the whole machine, from
// perf_event_open. When Supported is false the figures are absent, never 0.
type Counters struct {
	Supported    bool   `json:"supported"`
	Reason       string `json:"reason,omitempty"` // why not supported
	Scope        string `json:"scope,omitempty"`  // "machine"
	Cycles       uint64 `json:"cycles,omitempty"`
	Instructions uint64 `json:"instructions,omitempty"`
	// Scaled is true when the kernel multiplexed the counters and the
	// figures are estimates.
	Scaled bool `json:"scaled,omitempty"`
}

// Waits is the wait-event profile of the client backends during the step.
type Waits struct {
	Source   string  `json:"source"` // "pg_wait_sampling" or "pg_stat_activity"
	PeriodMs float64 `json:"period_ms"`
	// Samples counts every client-backend sample with a place in Events or
	// on CPU (active with no wait event: running or runnable).
	Samples    int64 `json:"samples"`
	CPUSamples int64 `json:"cpu_samples"`
	// IdleSamples (pg_stat_activity only) are samples of idle sessions,
	// left out of Samples. pg_wait_sampling cannot tell idle from a
	// wait for the client, so there idleness is in Client:ClientRead.
	IdleSamples int64       `json:"idle_samples,omitempty"`
	Events      []WaitEvent `json:"events,omitempty"` // by samples, descending
	// Background are the waits of the server's other processes
	// (pg_wait_sampling only), by samples, descending.
	Background []WaitEvent `json:"background,omitempty"`
	Note       string      `json:"note,omitempty"`
}

// WaitEvent is one wait event's samples.
type WaitEvent struct {
	Type    string `json:"type"`
	Event   string `json:"event"`
	Samples int64  `json:"samples"`
}

// Locks summarises the pg_locks snapshots taken during the step.
type Locks struct {
	Snapshots int `json:"snapshots"`
	// Backends is the most client backends seen holding locks in one
	// snapshot.
	Backends int `json:"backends"`
	// MaxSlowWeak is the most weak (AccessShare, RowShare, RowExclusive)
	// relation locks one backend held outside the fast path; MeanSlowWeak
	// averages it over backends holding locks, over snapshots.
	MaxSlowWeak  int     `json:"max_slow_weak_relation_locks"`
	MeanSlowWeak float64 `json:"mean_slow_weak_relation_locks"`
	MaxFastPath  int     `json:"max_fast_path_locks"`
	// FastPathSlots is the number of fast-path slots per backend for this
	// server version (16 before PostgreSQL 18).
	FastPathSlots int `json:"fast_path_slots"`
	// Exhausted counts backend snapshots whose fast-path slots were full
	// and that held weak relation locks in the main lock table.
	Exhausted int `json:"fast_path_exhausted"`
	// Waiting are the ungranted locks seen, by lock type and mode, summed
	// over snapshots.
	Waiting []LockWait `json:"waiting,omitempty"`
}

// LockWait is the number of ungranted locks of one type and mode.
type LockWait struct {
	LockType string `json:"locktype"`
	Mode     string `json:"mode"`
	Count    int    `json:"count"`
}

// Statements is the pg_stat_statements difference over the step.
type Statements struct {
	// ServerMs is the server time of every statement in the step
	// (execution + planning), and Calls the calls.
	ServerMs float64     `json:"server_ms"`
	Calls    int64       `json:"calls"`
	Top      []Statement `json:"top,omitempty"` // by total time, descending
	// Dealloc is true when pg_stat_statements evicted entries during the
	// step, so the difference may miss statements.
	Dealloc bool `json:"dealloc,omitempty"`
}

// Statement is one normalised statement's difference over the step.
type Statement struct {
	QueryID string  `json:"queryid"`
	Query   string  `json:"query"` // normalised text, shortened
	Calls   int64   `json:"calls"`
	TotalMs float64 `json:"total_ms"` // execution + planning
	Rows    int64   `json:"rows"`
}

// Profile is a CPU profile of the server's processes during the step.
type Profile struct {
	// File is the pprof file: relative to the result file's directory
	// when it is inside that directory, else an absolute path. (Files
	// written before this was so hold the path relative to the directory
	// pgscale ran in.)
	File    string        `json:"file"`
	Samples int64         `json:"samples"`
	Top     []ProfileFunc `json:"top,omitempty"` // by self samples, descending
	// Unit is what Samples, Self and Total count: empty for perf's
	// samples, "instructions" for a profile of the instructions counted
	// under Valgrind.
	Unit string `json:"unit,omitempty"`
}

// Instructions are the instructions the server's processes executed in
// the step's measured window, counted under Valgrind's callgrind. The
// window's edges fall between transactions, so every instruction counted
// belongs to one of the Transactions counted. Valgrind sees user space
// only: kernel instructions are not counted, the system calls made are.
type Instructions struct {
	Tool         string `json:"tool"`         // "callgrind"
	Transactions int64  `json:"transactions"` // the window's, every one counted
	// ClientBackends are the client backends' instructions, PerTxn them
	// per transaction (the instr/txn measure), ClientSyscalls their
	// system calls.
	ClientBackends uint64  `json:"client_backends"`
	PerTxn         float64 `json:"per_txn"`
	ClientSyscalls uint64  `json:"client_syscalls"`
	// ByKind are the counts per backend type (pg_stat_activity's), the
	// background processes included: they work to the clock, not per
	// transaction.
	ByKind []InstructionGroup `json:"by_kind"`
	// NotCounted are processes that could not be counted, and why;
	// StartedInWindow counts those that started during the window (not
	// counted).
	NotCounted      []string `json:"not_counted,omitempty"`
	StartedInWindow int      `json:"started_in_window,omitempty"`
	// Kernel says what of the kernel's part is counted.
	Kernel string `json:"kernel"`
	// Without names what the client backends' counts leave out.
	Without string `json:"without,omitempty"`
}

// InstructionGroup is one backend type's instructions.
type InstructionGroup struct {
	Kind         string `json:"kind"`
	Processes    int    `json:"processes"`
	Instructions uint64 `json:"instructions"`
	Syscalls     uint64 `json:"syscalls"`
}

// ProfileFunc is one function's share of the profile.
type ProfileFunc struct {
	Function string `json:"function"`
	Self     int64  `json:"self"`
	Total    int64  `json:"total"`
}
