package result_test

import "github.com/pgscale/pgscale/internal/result"

// The counters probe's evidence, as the schema tests check it; breaking it
// gives counts said unsupported.
func init() {
	registerEvidenceCase("counters", evidenceCase{
		set: func(p *result.Probes) {
			p.SetCounters(&result.Counters{Supported: true, Cycles: 10, Instructions: 20})
		},
		breaks: func(e map[string]any) { e["supported"] = false },
	})
}
