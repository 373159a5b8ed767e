package result_test

import "github.com/pgscale/pgscale/internal/result"

// The upstreams probe's evidence, as the schema tests check it; breaking it
// gives a server of a role no topology has.
func init() {
	registerEvidenceCase("upstreams", evidenceCase{
		set: func(p *result.Probes) {
			p.SetUpstreams(&result.Upstreams{Servers: []result.UpstreamStat{{Name: "a", Role: "primary", Transactions: 5, Share: 0.5},
				{Name: "a-replica1", Role: "replica", Transactions: 5, Share: 0.5}}})
		},
		breaks: func(e map[string]any) { e["servers"].([]any)[1].(map[string]any)["role"] = "standby" },
	})
}
