package result

import "github.com/pgscale/pgscale/internal/probeid"

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
	// PausedS (pg_stat_activity only) is how long sampling stopped while
	// the server was away (a restart), until it was connected to again.
	PausedS float64 `json:"paused_s,omitempty"`
}

// WaitEvent is one wait event's samples.
type WaitEvent struct {
	Type    string `json:"type"`
	Event   string `json:"event"`
	Samples int64  `json:"samples"`
}

func init() { registerEvidence[Waits](probeid.Waits) }

// Waits is the step's waits evidence, or nil (none recorded, or p nil).
func (p *Probes) Waits() *Waits { return getEvidence[Waits](p, probeid.Waits) }

// SetWaits records the step's waits evidence (nil removes it).
func (p *Probes) SetWaits(v *Waits) { setEvidence(p, probeid.Waits, v) }
