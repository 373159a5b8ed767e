package target_test

import (
	"context"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/target/targettest"
	"github.com/pgscale/pgscale/internal/watch"
)

// A pooled target tells its probes of the server behind the pooler and of
// the pooler: its process, and its admin console, whose commands answer
// with every column the pool figures are mapped to.
func TestWatchPooled(t *testing.T) {
	needPgBouncer(t)
	spec, err := target.WithPooler(target.ForRun(cluster.ConnString("postgres")), "pgbouncer:default_pool_size=2")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := target.Open(ctx, spec, target.ClusterOptions{}, target.Needs{Clients: 4, Connections: 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	w := srv.Watch()
	if w.Conn().Port != uint16(cluster.Port) || w.PID() != 0 || w.Ephemeral() || w.DataDir() != "" || w.Upstreams() != nil {
		t.Errorf("watched server: port %d (want %d), pid %d, ephemeral %v, data directory %q, upstreams %v; want the dsn server behind the pooler",
			w.Conn().Port, cluster.Port, w.PID(), w.Ephemeral(), w.DataDir(), w.Upstreams())
	}
	pl := w.Pooler()
	if pl == nil || pl.Program() != "pgbouncer" || pl.PID() == 0 || pl.PID() != srv.Pooler.PID() || pl.Callgrind() != nil {
		t.Fatalf("watched pooler %v", pl)
	}
	admin := pl.Admin()
	if admin == nil || len(admin.Commands) == 0 {
		t.Fatalf("pgbouncer's admin console: %+v", admin)
	}
	checkAdmin(t, ctx, admin)
}

// A proxy definition's admin: names the console (the repository's
// PgBouncer example): the same commands and columns answer.
func TestWatchProxyAdmin(t *testing.T) {
	needPgBouncer(t)
	servers, err := openProxy(t, targettest.Example(t, "pgbouncer"), 4)
	if err != nil {
		t.Fatal(err)
	}
	pl := servers[1].Watch().Pooler()
	if pl == nil || pl.Admin() == nil {
		t.Fatalf("the proxy's pooler %v: no admin console", pl)
	}
	if got, want := pl.Admin().Commands, target.PgBouncerAdmin().Commands; !reflect.DeepEqual(got, want) {
		t.Errorf("the example's commands %+v, want the built-in pgbouncer's %+v", got, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	checkAdmin(t, ctx, pl.Admin())
}

// checkAdmin connects to an admin console and runs its commands: each
// answers with every pool column and mapped column, counts in them.
func checkAdmin(t *testing.T, ctx context.Context, admin *watch.Admin) {
	t.Helper()
	conn, err := pgconn.ConnectConfig(ctx, admin.Conn)
	if err != nil {
		t.Fatalf("admin console: %v", err)
	}
	defer conn.Close(ctx)
	for _, c := range admin.Commands {
		res, err := conn.Exec(ctx, c.Command).ReadAll()
		if err != nil || len(res) != 1 || res[0].Err != nil {
			t.Errorf("%s: %v %+v", c.Command, err, res)
			continue
		}
		var cols []string
		for _, f := range res[0].FieldDescriptions {
			cols = append(cols, f.Name)
		}
		for _, p := range c.Pool {
			if !slices.Contains(cols, p) {
				t.Errorf("%s: no pool column %q in %v", c.Command, p, cols)
			}
		}
		for fig, col := range c.Columns {
			i := slices.Index(cols, col)
			if i < 0 {
				t.Errorf("%s: %s maps to %q, which is not among %v", c.Command, fig, col, cols)
				continue
			}
			for _, row := range res[0].Rows {
				if _, err := strconv.ParseInt(string(row[i]), 10, 64); err != nil {
					t.Errorf("%s: %s (%s) is %q, not a count", c.Command, fig, col, row[i])
				}
			}
		}
	}
}

// An admin: that cannot work is refused when the definition is read, in
// one line naming what is wrong.
func TestProxyAdminRefused(t *testing.T) {
	for def, want := range map[string]string{
		"command: pgbouncer x.ini\nadmin:\n  connect: dbname=pgbouncer\n":                                                                                         "admin: needs commands:",
		"command: pgbouncer x.ini\nadmin:\n  commands:\n    - command: SHOW STATS\n      columns: {wait_us_total: total_wait_time * ms}\n":                        "columns: wait_us_total",
		"command: pgbouncer x.ini\nadmin:\n  commands:\n    - command: SHOW POOL_PROCESSES\n      count: {clients_active: status}\n":                              "want COLUMN = VALUE",
		"command: pgbouncer x.ini\nadmin:\n  connect: dbname=pgbouncer\n  commands:\n    - command: SHOW POOLS\n      columns: {waiting: cl_waiting}\n":           `columns: "waiting" is no pool figure`,
		"command: pgbouncer x.ini\nadmin:\n  connect: dbname={{nothing}}\n  commands:\n    - command: SHOW POOLS\n      columns: {clients_waiting: cl_waiting}\n": "admin connect",
	} {
		_, err := target.ParseSpec("p=proxy:" + writeDef(t, def))
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line saying %q", def, err, want)
		}
	}
}

// An admin command may scale a column into the figure's unit (PgDog's
// milliseconds) and count the rows that match (pgpool-II's one row per
// process); a console without connect: is where the clients connect.
func TestProxyAdminScaleAndCount(t *testing.T) {
	def := "command: pgpool -n\nadmin:\n  commands:\n" +
		"    - command: SHOW STATS\n      pool: [database]\n      columns: {wait_us_total: total_wait_time * 1000, transactions: total_xact_count}\n" +
		"    - command: SHOW POOL_PROCESSES\n      count: {clients_active: status != Wait for connection, servers_active: status = Execute command}\n"
	spec, err := target.ParseSpec("p=proxy:" + writeDef(t, def))
	if err != nil {
		t.Fatal(err)
	}
	a := spec.Arg.(target.ProxyArg).Def.Admin
	if a == nil || len(a.Commands) != 2 || a.Connect != "" {
		t.Fatalf("admin %+v", a)
	}
	c := a.Commands[0]
	if c.Columns[watch.WaitMicroTotals] != "total_wait_time" || c.Scale[watch.WaitMicroTotals] != 1000 || c.Columns[watch.Transactions] != "total_xact_count" {
		t.Errorf("columns %v, scale %v", c.Columns, c.Scale)
	}
	if _, ok := c.Scale[watch.Transactions]; ok {
		t.Errorf("a column as it is has a scale: %v", c.Scale)
	}
	want := map[string]watch.RowMatch{watch.ClientsActive: {Column: "status", Value: "Wait for connection", Not: true},
		watch.ServersActive: {Column: "status", Value: "Execute command"}}
	if got := a.Commands[1].Count; !reflect.DeepEqual(got, want) {
		t.Errorf("count %+v, want %+v", got, want)
	}
}
