package result_test

import "github.com/pgscale/pgscale/internal/result"

// The statements probe's evidence, as the schema tests check it; breaking it
// gives a negative count of calls.
func init() {
	registerEvidenceCase("statements", evidenceCase{
		set: func(p *result.Probes) {
			p.SetStatements(&result.Statements{ServerMs: 1, Calls: 1})
		},
		breaks: func(e map[string]any) { e["calls"] = -1 },
	})
}
