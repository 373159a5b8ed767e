package result_test

import "github.com/pgscale/pgscale/internal/result"

// The locks probe's evidence, as the schema tests check it; breaking it
// gives no fast-path slots.
func init() {
	registerEvidenceCase("locks", evidenceCase{
		set: func(p *result.Probes) {
			p.SetLocks(&result.Locks{Snapshots: 1, FastPathSlots: 16})
		},
		breaks: func(e map[string]any) { e["fast_path_slots"] = 0 },
	})
}
