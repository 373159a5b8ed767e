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
	Baseline  int    `json:"baseline,omitempty"`
	Paragraph string `json:"paragraph"`
}

// StepVerdict is one step's bottleneck and the evidence for it.
type StepVerdict struct {
	Clients int `json:"clients"`
	// Verdict is one of rate-limited, pooler-bound, cpu-bound,
	// lwlock-bound, lock-bound, io-bound, client-bound, under-loaded,
	// unclear.
	Verdict string `json:"verdict"`
	// Detail names what within the verdict: the LWLock, the lock type,
	// or why the step is unclear.
	Detail   string   `json:"detail,omitempty"`
	Evidence []string `json:"evidence,omitempty"`
}
