package probe

import (
	"strconv"
	"testing"

	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/target/targettest"
	"github.com/pgscale/pgscale/internal/watch"
)

// The columns PgCat and PgDog send for SHOW POOLS and SHOW STATS, as
// their sources write the row descriptions (PgCat 1.x: src/stats/pool.rs
// PoolStats::generate_header and src/admin.rs show_stats; PgDog:
// pgdog/src/admin/show_pools.rs and show_stats.rs). Neither program is a
// Debian package, so neither runs here: these tests check that the
// examples' mappings name columns the programs send and turn rows of
// that shape into the figures, not how the programs behave.
var (
	pgcatPools = []string{"database", "user", "pool_mode", "cl_idle", "cl_active", "cl_waiting", "cl_cancel_req",
		"sv_active", "sv_idle", "sv_used", "sv_tested", "sv_login", "maxwait", "maxwait_us"}
	pgcatStats = []string{"instance", "database", "user", "total_xact_count", "total_query_count", "total_received", "total_sent",
		"total_xact_time", "total_query_time", "total_wait_time", "total_errors", "avg_xact_count", "avg_query_count", "avg_recv",
		"avg_sent", "avg_errors", "avg_xact_time", "avg_query_time", "avg_wait_time"}
	pgdogPools = []string{"id", "database", "user", "addr", "port", "shard", "role", "cl_waiting", "sv_idle", "sv_active",
		"sv_idle_xact", "sv_total", "maxwait", "maxwait_us", "pool_mode", "paused", "banned", "healthy", "errors", "re_synced",
		"out_of_sync", "force_closed", "online", "schema_admin"}
	pgdogStats = func() []string {
		cols := []string{"database", "user", "addr", "port", "shard", "role"}
		for _, prefix := range []string{"total", "avg"} {
			for _, s := range []string{"xact_count", "xact_2pc_count", "query_count", "server_assignment_count", "received", "sent",
				"xact_time", "idle_xact_time", "query_time", "wait_time", "server_parse_count", "bind_count", "close_count", "errors",
				"cleaned", "rollbacks", "connect_time", "connect_count", "reads", "writes", "auth_attempts", "rows_inserted",
				"rows_updated", "rows_deleted"} {
				cols = append(cols, prefix+"_"+s)
			}
		}
		return cols
	}()
)

// exampleAdmin is the admin console of examples/proxy/NAME.yaml.
func exampleAdmin(t *testing.T, name string) []watch.AdminCommand {
	t.Helper()
	spec, err := target.ParseSpec("p=proxy:" + targettest.Example(t, name))
	if err != nil {
		t.Fatal(err)
	}
	a := spec.Arg.(target.ProxyArg).Def.Admin
	if a == nil {
		t.Fatalf("%s: no admin:", name)
	}
	return a.Commands
}

// row fills a row of cols: each named value where given, a count
// otherwise (every column of these commands but the names is a number).
func row(cols []string, vals map[string]string) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		if v, ok := vals[c]; ok {
			out[i] = v
		} else {
			out[i] = strconv.Itoa(i)
		}
	}
	return out
}

// samplePools runs an example's commands over the given answers, as a
// sample does.
func samplePools(t *testing.T, cmds []watch.AdminCommand, adminDB string, answers map[string][][]string, cols map[string][]string) []poolRow {
	t.Helper()
	var pools []poolRow
	for _, c := range cmds {
		rows, err := commandRows(c, adminResult(cols[c.Command], answers[c.Command]...), adminDB, false)
		if err != nil {
			t.Fatalf("%s: %v", c.Command, err)
		}
		pools = mergePools(pools, rows)
	}
	return pools
}

func TestPgCatMapping(t *testing.T) {
	cmds := exampleAdmin(t, "pgcat")
	cols := map[string][]string{"SHOW POOLS": pgcatPools, "SHOW STATS": pgcatStats}
	for _, c := range cmds {
		if _, err := commandRows(c, adminResult(cols[c.Command]), "pgcat", false); err != nil {
			t.Errorf("%s: %v", c.Command, err)
		}
	}
	name := map[string]string{"database": "postgres", "user": "postgres", "pool_mode": "transaction", "instance": "postgres_shard_0_primary"}
	with := func(m map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range name {
			out[k] = v
		}
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	pools := samplePools(t, cmds, "pgcat", map[string][][]string{
		"SHOW POOLS": {row(pgcatPools, with(map[string]string{"cl_active": "4", "cl_waiting": "28", "sv_active": "4", "sv_idle": "0", "maxwait": "0", "maxwait_us": "12000"}))},
		// One row per server address: a primary and a replica.
		"SHOW STATS": {row(pgcatStats, with(map[string]string{"total_xact_count": "600", "total_query_count": "600", "total_wait_time": "9000"})),
			row(pgcatStats, with(map[string]string{"instance": "postgres_shard_0_replica_0", "total_xact_count": "400", "total_query_count": "400", "total_wait_time": "1000"}))},
	}, cols)
	if len(pools) != 1 {
		t.Fatalf("pools %+v: want postgres/postgres", pools)
	}
	f := pools[0].figs
	if f[watch.ClientsWaiting] != 28 || f[watch.ServersActive] != 4 || waitMs(f) != 12 || f[watch.Transactions] != 1000 || f[watch.WaitMicroTotals] != 10000 {
		t.Errorf("figures %v: want 28 waiting, 4 active, 12 ms, 1000 transactions, 10000 µs waited", f)
	}
}

func TestPgDogMapping(t *testing.T) {
	cmds := exampleAdmin(t, "pgdog")
	cols := map[string][]string{"SHOW POOLS": pgdogPools, "SHOW STATS": pgdogStats}
	name := map[string]string{"database": "postgres", "user": "postgres", "addr": "127.0.0.1", "role": "primary", "pool_mode": "transaction",
		"paused": "f", "banned": "f", "healthy": "t", "online": "t", "schema_admin": "f"}
	with := func(m map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range name {
			out[k] = v
		}
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	pools := samplePools(t, cmds, "admin", map[string][][]string{
		"SHOW POOLS": {row(pgdogPools, with(map[string]string{"cl_waiting": "6", "sv_active": "2", "sv_idle": "0", "maxwait": "0", "maxwait_us": "3500"})),
			row(pgdogPools, with(map[string]string{"role": "replica", "cl_waiting": "2", "sv_active": "2", "sv_idle": "1", "maxwait": "0", "maxwait_us": "1500"}))},
		// Times in milliseconds, with decimals.
		"SHOW STATS": {row(pgdogStats, with(map[string]string{"total_xact_count": "100", "total_query_count": "100", "total_wait_time": "12.5",
			"total_xact_time": "50.25", "total_query_time": "40"}))},
	}, cols)
	if len(pools) != 1 {
		t.Fatalf("pools %+v: want postgres/postgres", pools)
	}
	f := pools[0].figs
	if f[watch.ClientsWaiting] != 8 || f[watch.ServersActive] != 4 || f[watch.ServersIdle] != 1 || waitMs(f) != 3.5 ||
		f[watch.Transactions] != 100 || f[watch.WaitMicroTotals] != 12500 || f[watch.TransactionUS] != 50250 {
		t.Errorf("figures %v: want 8 waiting, 4 active, 1 idle, 3.5 ms, 100 transactions, 12500 µs waited, 50250 µs in transactions", f)
	}
	if _, ok := f[watch.ClientsActive]; ok {
		t.Errorf("PgDog's SHOW POOLS has no active clients, yet the figure is there: %v", f)
	}
}
