package result

import "github.com/pgscale/pgscale/internal/probeid"

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

func init() { registerEvidence[Counters](probeid.Counters) }

// Counters is the step's counters evidence, or nil (none recorded, or p nil).
func (p *Probes) Counters() *Counters { return getEvidence[Counters](p, probeid.Counters) }

// SetCounters records the step's counters evidence (nil removes it).
func (p *Probes) SetCounters(v *Counters) { setEvidence(p, probeid.Counters, v) }
