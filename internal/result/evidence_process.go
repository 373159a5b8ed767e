package result

import "github.com/pgscale/pgscale/internal/probeid"

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
	// PoolerNote says, when the pooler exited during the step, how much
	// of it Pooler holds: its CPU until it was read last.
	PoolerNote string `json:"pooler_note,omitempty"`
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

// The kinds of a server's processes (ProcGroup.Kind).
const (
	KindClientBackend = "client backend"
	KindBackground    = "background"
	KindProbe         = "probe"
	// KindExited is the processes that exited during the step: their CPU
	// time, recovered from what their parent reaped, and how many of them
	// were seen at its start (one that came and went within the step is
	// in the time only); their run-queue wait is lost with them.
	KindExited = "exited during the step"
)

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

func init() { registerEvidence[ProcessStats](probeid.Process) }

// Process is the step's process evidence, or nil (none recorded, or p nil).
func (p *Probes) Process() *ProcessStats { return getEvidence[ProcessStats](p, probeid.Process) }

// SetProcess records the step's process evidence (nil removes it).
func (p *Probes) SetProcess(v *ProcessStats) { setEvidence(p, probeid.Process, v) }
