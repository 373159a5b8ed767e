package result_test

import "github.com/pgscale/pgscale/internal/result"

// The waits probe's evidence, as the schema tests check it; breaking it
// gives a source no probe samples.
func init() {
	registerEvidenceCase("waits", evidenceCase{
		set: func(p *result.Probes) {
			p.SetWaits(&result.Waits{Source: "pg_stat_activity", PeriodMs: 50, Samples: 1})
		},
		breaks: func(e map[string]any) { e["source"] = "guessed" },
	})
}
