package report

import (
	"fmt"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/result"
)

func init() { registerWriter(probeid.Statements, writeStatements) }

// writeStatements writes the server's time per transaction against the
// latency the clients saw, and the statements that took it.
func writeStatements(pg page, s result.Step, f diagnose.Figures) {
	st := s.Probes.Statements()
	if st == nil || !f.HasStatements {
		return
	}
	pg.item("statements", fmt.Sprintf("server time %.3f ms per transaction, client-observed latency %.3f ms: %s",
		f.ServerMsPerTxn, f.LatencyMs, f.LatencySplit()))
	tx := f.TPS * f.ElapsedS
	var rows [][]string
	for _, q := range st.Top {
		share := 0.0
		if st.ServerMs > 0 {
			share = q.TotalMs / st.ServerMs
		}
		rows = append(rows, []string{fmt.Sprintf("%.2f", float64(q.Calls)/tx), fmt.Sprintf("%.3f", q.TotalMs/float64(q.Calls)),
			prose.Share(share), truncate(q.Query, 70)})
	}
	if len(rows) > 0 {
		t := newTable("calls/txn", "mean ms", "share", "statement").alignRight(0, 1, 2)
		for _, row := range rows {
			t.row(row...)
		}
		pg.subtable(t)
	}
	if st.Dealloc {
		pg.item("statements", "pg_stat_statements evicted entries during the step: the figures may miss some statements")
	}
}
