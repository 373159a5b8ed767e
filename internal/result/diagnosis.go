package result

// Diagnosis is the scaling analysis of a sweep: each step's bottleneck
// verdict, the knee, the peak and a paragraph in plain English. It is
// computed from the rest of the file (internal/diagnose) and stored so that
// readers without pgscale see it too.
type Diagnosis struct {
	Steps []StepVerdict `json:"steps"`
	// Knee is the index of the last step before throughput stopped
	// growing, or -1 when it grew to the end.
	Knee int `json:"knee"`
	// Peak is the index of the step with the highest throughput.
	Peak        int     `json:"peak"`
	PeakTPS     float64 `json:"peak_tps"`
	PeakSpeedup float64 `json:"peak_speedup"` // peak TPS / the baseline step's TPS
	// Baseline is the index of the step that speedup and efficiency are
	// against: the first, unless a later step does more per client (a
	// first step held back by its own latency), as the paragraph says.
	Baseline int `json:"baseline,omitempty"`
	// PerCPU says speedup and efficiency are of throughput per CPU-second
	// the system (the server and the load generator) had, not of
	// throughput: other processes took the machine's CPU unevenly across
	// the steps, so each step's system had a different machine
	// (StepVerdict.SystemCPUs).
	PerCPU    bool   `json:"per_cpu,omitempty"`
	Paragraph string `json:"paragraph"`
}

// StepVerdict is one step's bottleneck and the evidence for it.
type StepVerdict struct {
	Clients int `json:"clients"`
	// Verdict is one of rate-limited, pooler-bound, cpu-bound, pool-bound,
	// lwlock-bound, lock-bound, io-bound, client-bound, under-loaded,
	// unclear, or failed: the step completed no transaction, and Detail
	// says what failed.
	Verdict string `json:"verdict"`
	// Detail names what within the verdict: the LWLock, the lock type,
	// or why the step is unclear.
	Detail   string   `json:"detail,omitempty"`
	Evidence []string `json:"evidence,omitempty"`
	// SystemCPUs is how many of the machine's cores the server and the
	// load generator had in the step: the cores less what other processes
	// used (0: not measured); TPSPerCPU the step's throughput per
	// CPU-second of those, the throughput a whole core of the machine
	// would have given the system.
	SystemCPUs float64 `json:"system_cpus,omitempty"`
	TPSPerCPU  float64 `json:"tps_per_cpu,omitempty"`
	// CPUShift, when set, says how the CPU the system had in this step
	// differs from the baseline step's, at a step where other processes
	// took or left it ("the server and load generator had 1.6 of 2 cores,
	// 0.4 at 1 client").
	CPUShift string `json:"cpu_shift,omitempty"`
}
