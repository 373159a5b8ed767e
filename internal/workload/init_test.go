package workload_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/target/targettest"
	"github.com/pgscale/pgscale/internal/testenv"
	"github.com/pgscale/pgscale/internal/workload"
)

var cluster *target.Cluster

func TestMain(m *testing.M) {
	os.Exit(targettest.Run(m, target.Options{}, func(c *target.Cluster) { cluster = c }))
}

func connector(db string) workload.Connector {
	return func(ctx context.Context) (*pgconn.PgConn, error) {
		return pgconn.Connect(ctx, cluster.ConnString(db))
	}
}

func createDB(t *testing.T, name string) {
	t.Helper()
	ctx := context.Background()
	c, err := connector("postgres")(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	c.Exec(ctx, "DROP DATABASE IF EXISTS "+name).Close()
	// template0: template1 may hold an autovacuum worker, and CREATE DATABASE
	// refuses a template someone is connected to.
	if err := c.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE template0").Close(); err != nil {
		t.Fatal(err)
	}
}

func pgbin(name string) string { return cluster.BinDir + "/" + name }

// pgEnv points pgbench, psql and pg_dump at the cluster.
func pgEnv() []string {
	return append(os.Environ(), "PGHOST="+cluster.SocketDir, "PGPORT="+itoa(cluster.Port), "PGUSER="+cluster.User)
}

func itoa(i int) string { return strconv.Itoa(i) }

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(pgbin(name), args...)
	cmd.Env = pgEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

var dumpNoise = regexp.MustCompile(`(?m)^(--.*|SET .*|SELECT pg_catalog.*|\\(un)?restrict .*|)\n`)

func schema(t *testing.T, db string) string {
	return dumpNoise.ReplaceAllString(run(t, "pg_dump", "-s", db), "")
}

// content fingerprints every pgbench table's rows, order-independently.
func content(t *testing.T, db string) string {
	var b strings.Builder
	for _, tbl := range []string{"pgbench_branches", "pgbench_tellers", "pgbench_accounts", "pgbench_history"} {
		b.WriteString(run(t, "psql", "-XAtq", "-d", db, "-c",
			"SELECT '"+tbl+"', count(*), coalesce(sum(hashtext(t::text)::numeric), 0) FROM "+tbl+" t"))
	}
	return b.String()
}

// pgscale init and pgbench -i make the same schema and the same rows.
func TestInitMatchesPgbench(t *testing.T) {
	testenv.Slow(t)
	for _, tc := range []struct {
		name   string
		opts   workload.InitOptions
		pgArgs []string
	}{
		{"default", workload.InitOptions{Scale: 2}, []string{"-s", "2"}},
		{"range-partitions", workload.InitOptions{Scale: 2, Partitions: 3, Fillfactor: 90, Unlogged: true},
			[]string{"-s", "2", "--partitions", "3", "-F", "90", "--unlogged-tables"}},
		{"hash-partitions", workload.InitOptions{Scale: 1, Partitions: 4, PartitionMethod: "hash"},
			[]string{"-s", "1", "--partitions", "4", "--partition-method", "hash"}},
		{"foreign-keys", workload.InitOptions{Scale: 1, ForeignKeys: true}, []string{"-s", "1", "-I", "dtgvpf"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			createDB(t, "ours")
			createDB(t, "theirs")
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			var log bytes.Buffer
			if _, err := workload.Init(ctx, connector("ours"), tc.opts, &log); err != nil {
				t.Fatalf("Init: %v\n%s", err, log.String())
			}
			run(t, "pgbench", append([]string{"-i", "-q"}, append(tc.pgArgs, "theirs")...)...)
			if a, b := schema(t, "ours"), schema(t, "theirs"); a != b {
				t.Errorf("schema differs from pgbench -i's:\n--- pgscale\n%s\n--- pgbench\n%s", a, b)
			}
			if a, b := content(t, "ours"), content(t, "theirs"); a != b {
				t.Errorf("rows differ from pgbench -i's:\n--- pgscale\n%s--- pgbench\n%s", a, b)
			}
			c, err := connector("ours")(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close(ctx)
			d, err := workload.Inspect(ctx, c)
			if err != nil || !d.Complete() || d.Scale != tc.opts.Scale || d.Partitions != tc.opts.Partitions {
				t.Errorf("Inspect = %+v, %v; want scale %d, %d partitions", d, err, tc.opts.Scale, tc.opts.Partitions)
			}
		})
	}
}

func TestInspectMissingTables(t *testing.T) {
	createDB(t, "empty")
	ctx := context.Background()
	c, err := connector("empty")(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	d, err := workload.Inspect(ctx, c)
	if err != nil || d.Complete() || len(d.Missing) != 4 {
		t.Errorf("Inspect(empty db) = %+v, %v; want 4 missing tables", d, err)
	}
}

func TestInitRejectsBadOptions(t *testing.T) {
	for _, o := range []workload.InitOptions{{Scale: -1}, {Fillfactor: 5}, {PartitionMethod: "list", Partitions: 2}} {
		if _, err := workload.Init(context.Background(), connector("postgres"), o, io.Discard); err == nil {
			t.Errorf("Init(%+v) accepted", o)
		}
	}
}
