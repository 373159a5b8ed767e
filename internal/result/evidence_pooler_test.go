package result_test

import "github.com/pgscale/pgscale/internal/result"

// The pooler probe's evidence, as the schema tests check it; breaking it
// gives a negative mean of waiting clients.
func init() {
	n, w := int64(100), 250.0
	registerEvidenceCase("pooler", evidenceCase{
		set: func(p *result.Probes) {
			p.SetPooler(&result.Pools{Program: "pgbouncer", Commands: []string{"SHOW POOLS", "SHOW STATS"}, Samples: 3, WindowS: 2,
				LoadTransactions: 100, Total: result.PoolFigures{ClientsWaiting: &result.Gauge{Mean: 1.5, Max: 3}, Transactions: &n, WaitUS: &w},
				Pools:  []result.PoolFigures{{Pool: "pgbench/postgres", Transactions: &n}},
				Series: []result.PoolSample{{TS: 0}, {TS: 1, Transactions: &n}}})
		},
		breaks: func(e map[string]any) { e["total"].(map[string]any)["clients_waiting"].(map[string]any)["mean"] = -1 },
	})
}
