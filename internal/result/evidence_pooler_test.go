package result_test

import "github.com/pgscale/pgscale/internal/result"

func init() {
	n, w := int64(100), 250.0
	evidenceExamples["pooler"] = evidenceExample{
		set: func(p *result.Probes) {
			p.SetPooler(&result.Pools{Program: "pgbouncer", Commands: []string{"SHOW POOLS", "SHOW STATS"}, Samples: 3, WindowS: 2,
				LoadTransactions: 100, Total: result.PoolFigures{ClientsWaiting: &result.Gauge{Mean: 1.5, Max: 3}, Transactions: &n, WaitUS: &w},
				Pools:  []result.PoolFigures{{Pool: "pgbench/postgres", Transactions: &n}},
				Series: []result.PoolSample{{TS: 0}, {TS: 1, Transactions: &n}}})
		},
		spoil: func(e map[string]any) { e["total"].(map[string]any)["clients_waiting"].(map[string]any)["mean"] = -1 },
	}
}
