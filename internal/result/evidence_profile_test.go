package result_test

import "github.com/pgscale/pgscale/internal/result"

// The profile probe's evidence, as the schema tests check it; breaking it
// gives a unit no profile has.
func init() {
	registerEvidenceCase("profile", evidenceCase{
		set: func(p *result.Probes) {
			p.SetProfile(&result.Profile{File: "p.pprof", Samples: 1})
		},
		breaks: func(e map[string]any) { e["unit"] = "furlongs" },
	})
}
