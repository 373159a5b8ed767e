package result_test

import "github.com/pgscale/pgscale/internal/result"

// The profile probe's evidence, as the schema tests check it; breaking it
// gives a unit no profile has.
func init() {
	registerEvidenceCase("profile", evidenceCase{
		set: func(p *result.Probes) {
			p.SetProfile(&result.Profile{File: "p.pprof", Samples: 3, Hz: 99, Work: 2,
				Objects: []result.ProfileObject{{Object: "/usr/lib/postgresql/15/bin/postgres", Self: 2, Unnamed: 1,
					Symbols: &result.Symbols{Source: "dynamic symbols", BuildID: "a6ade789", Package: "postgresql-15"}}},
				Functions: []result.ProfileFunc{{Function: "ExecScan", Self: 1, Total: 2, Object: "/usr/lib/postgresql/15/bin/postgres"}}})
		},
		breaks: func(e map[string]any) {
			e["objects"].([]any)[0].(map[string]any)["symbols"].(map[string]any)["source"] = "guessed"
		},
	})
}
