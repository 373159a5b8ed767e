package report_test

import (
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/result"
)

// A pool's line says the figures its mapping gave and leaves out the
// others, never writing a zero for a figure it does not have.
func TestPoolLine(t *testing.T) {
	n, w, longest := int64(1000), 744000.0, 13.5
	per := w / float64(n)
	full := result.PoolFigures{ClientsActive: &result.Gauge{Mean: 6.3, Max: 9}, ClientsWaiting: &result.Gauge{Mean: 25.7, Max: 28},
		ServersActive: &result.Gauge{Mean: 4, Max: 4}, ServersIdle: &result.Gauge{}, MaxWaitMs: &longest, Transactions: &n, WaitUS: &w, WaitPerTxnUS: &per}
	got := report.PoolLine(full)
	for _, want := range []string{"clients 6.3 active (at most 9), 25.7 waiting (at most 28)", "server connections 4.0 active, 0.0 idle",
		"longest wait 13.5 ms", "0.744 ms waited per transaction", "counted 1000 transactions"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	// pgpool-II's mapping: processes counted, queries per node, no wait.
	q := int64(500)
	got = report.PoolLine(result.PoolFigures{ClientsActive: &result.Gauge{Mean: 4, Max: 4}, Queries: &q})
	if got != "clients 4.0 active; counted 500 queries" {
		t.Errorf("pgpool-II's figures: %q", got)
	}
	if got := report.PoolLine(result.PoolFigures{}); got != "no figures" {
		t.Errorf("no figures: %q", got)
	}
}
