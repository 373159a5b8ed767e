package html

import (
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/result"
)

// The pooler's part has a chart of the waiting clients beside the
// throughput (its data: the queue and the load per interval) and a row
// per pool, a pool's name escaped and a figure the mapping lacks as
// "–".
func TestPoolerView(t *testing.T) {
	n, w := int64(100), 4.0
	p := &result.Probes{}
	p.SetPooler(&result.Pools{Program: "pgbouncer", Commands: []string{"SHOW POOLS", "SHOW STATS"}, Samples: 3, WindowS: 2, LoadTransactions: 99,
		Total:  result.PoolFigures{ClientsWaiting: &result.Gauge{Mean: 3, Max: 4}, Transactions: &n},
		Pools:  []result.PoolFigures{{Pool: "<script>x</script>/u", Transactions: &n}, {Pool: "b/u"}},
		Series: []result.PoolSample{{TS: 0, ClientsWaiting: &w}, {TS: 1, ClientsWaiting: &w}, {TS: 2, ClientsWaiting: &w}}})
	s := result.Step{Clients: 8, Probes: p, Intervals: []result.Interval{{StartS: 0, LengthS: 1, TPS: 50}, {StartS: 1, LengthS: 1, TPS: 50}}}
	parts := evidenceParts(s, diagnose.Figures{})
	var out string
	for _, part := range parts {
		if part.view.probe != probeid.Pooler {
			continue
		}
		h, err := part.HTML(stepEvidence{})
		if err != nil {
			t.Fatal(err)
		}
		out = string(h)
		if d := part.data.(*poolerPools); len(d.Load) != 2 || d.Load[1].T != 1.5 || d.Load[1].TPS != 50 {
			t.Errorf("the load beside the queue: %+v, want the two intervals' throughput at their middles", d.Load)
		}
	}
	for _, want := range []string{`data-chart="pooler"`, "clients waiting", "&lt;script&gt;x&lt;/script&gt;/u", "the pooler counted 100 transactions, the load 99", "<td class=\"n\">–</td>"} {
		if !strings.Contains(out, want) {
			t.Errorf("the pooler's part lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "<script>") {
		t.Errorf("a pool's name is not escaped")
	}
}
