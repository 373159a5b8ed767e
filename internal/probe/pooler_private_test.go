package probe

import (
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/watch"
)

// adminResult builds an admin command's answer as the console sends it.
func adminResult(cols []string, rows ...[]string) *pgconn.Result {
	r := &pgconn.Result{}
	for _, c := range cols {
		r.FieldDescriptions = append(r.FieldDescriptions, pgconn.FieldDescription{Name: c})
	}
	for _, row := range rows {
		var vals [][]byte
		for _, v := range row {
			vals = append(vals, []byte(v))
		}
		r.Rows = append(r.Rows, vals)
	}
	return r
}

// Rows of one command that name the same pool add up (a server per row),
// the longest wait is the longest; a pool named by fewer columns joins the
// one pool that agrees; the console's own pool is left out.
func TestPoolRowsMerge(t *testing.T) {
	pools := watch.AdminCommand{Command: "SHOW POOLS", Pool: []string{"database", "user"},
		Columns: map[string]string{watch.ClientsWaiting: "cl_waiting", watch.MaxWaitSeconds: "maxwait", watch.MaxWaitMicros: "maxwait_us"}}
	stats := watch.AdminCommand{Command: "SHOW STATS", Pool: []string{"database"},
		Columns: map[string]string{watch.Transactions: "total_xact_count", watch.WaitMicroTotals: "total_wait_time"},
		Scale:   map[string]float64{watch.WaitMicroTotals: 1000}}
	a, err := commandRows(pools, adminResult([]string{"database", "user", "cl_waiting", "maxwait", "maxwait_us"},
		[]string{"pgbench", "postgres", "3", "0", "12500"}, []string{"pgbench", "postgres", "2", "1", "0"},
		[]string{"pgbouncer", "pgbouncer", "0", "0", "0"}), "pgbouncer", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 1 || a[0].name() != "pgbench/postgres" || a[0].figs[watch.ClientsWaiting] != 5 || waitMs(a[0].figs) != 1000 {
		t.Fatalf("pools %+v: want pgbench/postgres alone, 5 waiting, longest wait 1000 ms", a)
	}
	b, err := commandRows(stats, adminResult([]string{"database", "total_xact_count", "total_wait_time"},
		[]string{"pgbench", "10", "1.5"}, []string{"pgbench", "20", "2.5"}, []string{"pgbouncer", "7", "0"}), "pgbouncer", false)
	if err != nil {
		t.Fatal(err)
	}
	m := mergePools(a, b)
	if len(m) != 1 || m[0].figs[watch.Transactions] != 30 || m[0].figs[watch.WaitMicroTotals] != 4000 || m[0].figs[watch.ClientsWaiting] != 5 {
		t.Fatalf("merged %+v: want one pool, 30 transactions, 4000 µs waited (ms scaled), 5 waiting", m)
	}
	if _, err := commandRows(stats, adminResult([]string{"database", "total_xact_count", "total_wait_time"}, []string{"pgbench", "ten", "0"}), "", false); err == nil {
		t.Errorf("a figure that is not a number was taken")
	}
}

// count: rules count a process list's rows; a console that is one of the
// clients' sessions takes itself off; free processes' empty columns are
// no figure.
func TestPoolRowsCount(t *testing.T) {
	procs := watch.AdminCommand{Command: "SHOW POOL_PROCESSES", Count: map[string]watch.RowMatch{
		watch.ClientsActive: {Column: "status", Value: "Wait for connection", Not: true},
		watch.ServersActive: {Column: "status", Value: "Execute command"}}}
	rows, err := commandRows(procs, adminResult([]string{"pool_pid", "database", "status"},
		[]string{"1", "pgbench", "Execute command"}, []string{"2", "pgbench", "Idle"}, []string{"3", "", "Wait for connection"},
		[]string{"4", "pgbench", "Execute command"}), "pgbench", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].figs[watch.ClientsActive] != 3 || rows[0].figs[watch.ServersActive] != 2 {
		t.Fatalf("rows %+v: want 3 clients, 2 active server connections", rows)
	}
	takeOwn(rows, []string{"pgbench", "postgres", ""})
	if rows[0].figs[watch.ClientsActive] != 2 || rows[0].figs[watch.ServersActive] != 1 {
		t.Errorf("after the probe's own session: %+v, want 2 and 1", rows[0].figs)
	}
}
