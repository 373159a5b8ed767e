package result_test

import "github.com/pgscale/pgscale/internal/result"

// The process probe's evidence, as the schema tests check it; breaking it
// gives no CPUs.
func init() {
	registerEvidenceCase("process", evidenceCase{
		set: func(p *result.Probes) {
			p.SetProcess(&result.ProcessStats{CPUs: 2})
		},
		breaks: func(e map[string]any) { e["cpus"] = 0 },
	})
}
