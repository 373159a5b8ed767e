package integration_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/cli"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/target/targettest"
	"github.com/pgscale/pgscale/internal/testenv"
	"github.com/pgscale/pgscale/internal/workload"
)

// cluster is the package's one real server, which every test that needs a
// server of no particular kind shares: pgbench data at scale 1 in
// database postgres, TCP on, and role "bench" that must give a password.
var cluster *target.Cluster

func TestMain(m *testing.M) {
	code := targettest.Run(m, target.Options{TCP: true, HBA: []string{"host all bench 127.0.0.1/32 scram-sha-256"}},
		func(c *target.Cluster) {
			cluster = c
			connect := func(ctx context.Context) (*pgconn.PgConn, error) {
				return pgconn.Connect(ctx, c.ConnString("postgres"))
			}
			if _, err := workload.Init(context.Background(), connect, workload.InitOptions{Scale: 1}, io.Discard); err != nil {
				panic(err)
			}
		})
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	printTimes()
	os.Exit(code)
}

// pgscale runs the CLI in-process and returns its exit code and output.
func pgscale(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

func dsn(db string) string { return cluster.ConnString(db) }

func sql(t *testing.T, db, q string) string {
	t.Helper()
	ctx := context.Background()
	c, err := pgconn.Connect(ctx, dsn(db))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	res, err := c.Exec(ctx, q).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	var b strings.Builder
	for _, r := range res {
		for _, row := range r.Rows {
			for i, v := range row {
				if i > 0 {
					b.WriteByte('\t')
				}
				b.Write(v)
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func createDB(t *testing.T, name string) {
	t.Helper()
	sql(t, "postgres", "DROP DATABASE IF EXISTS "+name)
	// template0: autovacuum may be working in template1, and CREATE DATABASE
	// refuses a template someone is connected to.
	sql(t, "postgres", "CREATE DATABASE "+name+" TEMPLATE template0")
}

func pgEnv() []string {
	return append(os.Environ(), "PGHOST="+cluster.SocketDir, "PGPORT="+strconv.Itoa(cluster.Port), "PGUSER="+cluster.User)
}

// readResult reads a result file the way every reader does: schema-checked.
func readResult(t *testing.T, path string) *result.File {
	t.Helper()
	f, err := result.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestRunSweepWritesAValidResult(t *testing.T) {
	trackTime(t)
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := pgscale(t, "run", "--dsn", dsn("postgres"), "-c", "1,2", "-T", "1", "-P", "0.5", "-S", "-r", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	f := readResult(t, out)
	if !f.Complete || len(f.Steps) != 2 || f.Steps[1].Clients != 2 {
		t.Fatalf("result: complete %v, %d steps", f.Complete, len(f.Steps))
	}
	s := f.Steps[1].Summary
	if s.TPS <= 0 || s.Speedup <= 0 || s.Efficiency <= 0 || s.ClientCPU.PerTxnUS <= 0 {
		t.Errorf("step 2 summary not filled: %+v", s)
	}
	if len(f.Steps[0].Commands) != 2 {
		t.Errorf("-r: %d command rows, want 2", len(f.Steps[0].Commands))
	}
	for _, want := range []string{"clients", "speedup", "efficiency", "client cpu/txn", "statement latencies"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "progress: 0.5 s, ") || !strings.Contains(stderr, " tps, lat ") {
		t.Errorf("no pgbench-style progress lines:\n%s", stderr)
	}
	if f.Target.ServerVersion == "" || f.Environment.CPUs == 0 || f.Workload.Scale != 1 {
		t.Errorf("environment/target/workload not recorded: %+v %+v %+v", f.Target, f.Environment, f.Workload)
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	trackTime(t)
	for _, args := range [][]string{
		{"run", "--no-such-flag"},
		{"run", "-T", "1", "-t", "5"},
		{"run", "-c", "0"},
		{"run", "-c", "x"},
		{"run", "-M", "telepathy"},
		{"run", "-b", "nope"},
		{"run", "-f", "/does/not/exist.sql"},
		{"run", "--dsn", "postgres://x", "--tmpfs"},
		{"run", "--set", "nonsense"},
		{"run", "--dsn", "port=notanumber"},
		{"init", "-s", "0", "--dsn", "host=/tmp"},
		{"init"},
		{"foo"},
		{"report", "--format", "pdf", "x.json"},
		{"bisect", "--good", "a", "--bad", "b", "src:x", "y", "z"}, // too many arguments: exited 3
		{"run", "stray"},
	} {
		code, _, stderr := pgscale(t, args...)
		if code != cli.ExitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, cli.ExitUsage, stderr)
		}
		if lines := strings.Count(strings.TrimSpace(stderr), "\n"); lines > 0 && !strings.Contains(stderr, "^") {
			t.Errorf("%v: want one line of error, got:\n%s", args, stderr)
		}
		if strings.Contains(stderr, "goroutine ") {
			t.Errorf("%v: a stack trace for a user error:\n%s", args, stderr)
		}
	}
}

func TestScriptSyntaxErrorShowsThePlace(t *testing.T) {
	trackTime(t)
	f := filepath.Join(t.TempDir(), "bad.sql")
	os.WriteFile(f, []byte("\\set x 1\n\\set y random(1, \nSELECT 1;\n"), 0o644)
	code, _, stderr := pgscale(t, "run", "--dsn", dsn("postgres"), "-f", f, "-T", "1")
	if code != cli.ExitUsage || !strings.Contains(stderr, "bad.sql:2:") || !strings.Contains(stderr, "^") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 2 naming bad.sql:2 with a caret", code, stderr)
	}
}

func TestDescribeRunsNothing(t *testing.T) {
	trackTime(t)
	code, stdout, _ := pgscale(t, "run", "-b", "tpcb-like", "--describe")
	if code != 0 || !strings.Contains(stdout, "pgbench_tellers") || !strings.Contains(stdout, "$1") {
		t.Errorf("exit %d, describe output:\n%s", code, stdout)
	}
}

func TestMissingTablesOnADSN(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	createDB(t, "empty")
	code, _, stderr := pgscale(t, "run", "--dsn", dsn("empty"), "-S", "-T", "1")
	if code != cli.ExitUsage || !strings.Contains(stderr, "pgbench_accounts") || !strings.Contains(stderr, "--init") {
		t.Errorf("exit %d, stderr %s: want exit 2 naming the missing tables and the fix", code, stderr)
	}
	out := filepath.Join(t.TempDir(), "r.json")
	code, _, stderr = pgscale(t, "run", "--dsn", dsn("empty"), "--init", "-S", "-T", "0.5", "-c", "1", "--out", out)
	if code != 0 {
		t.Fatalf("--init: exit %d: %s", code, stderr)
	}
	readResult(t, out)
}

func TestWrongPasswordExit2WithoutThePassword(t *testing.T) {
	trackTime(t)
	sql(t, "postgres", "DROP ROLE IF EXISTS bench; CREATE ROLE bench LOGIN PASSWORD 'right-horse'")
	url := "postgres://bench:Battery-Staple-9@127.0.0.1:" + strconv.Itoa(cluster.Port) + "/postgres?sslmode=disable"
	code, stdout, stderr := pgscale(t, "run", "--dsn", url, "-S", "-T", "1")
	if code != cli.ExitUsage {
		t.Errorf("exit %d, want 2", code)
	}
	if strings.Contains(stdout+stderr, "Battery-Staple-9") {
		t.Errorf("the password was printed:\n%s%s", stdout, stderr)
	}
	if !strings.Contains(stderr, "password authentication failed") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("want one line naming the cause, got:\n%s", stderr)
	}
}

func TestUnreachableServerExit3(t *testing.T) {
	trackTime(t)
	code, _, stderr := pgscale(t, "run", "--dsn", "host=127.0.0.1 port=1 user=x dbname=y connect_timeout=2", "-S", "-T", "1")
	if code != cli.ExitIncomplete || !strings.Contains(stderr, "no server is listening") {
		t.Errorf("exit %d, stderr %s: want 3 and the cause", code, stderr)
	}
}

// pgbench runs on data made by pgscale init, and pgscale on data made by pgbench -i.
func TestDataInteroperatesWithPgbench(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	createDB(t, "ours")
	if code, _, stderr := pgscale(t, "init", "--dsn", dsn("ours"), "-s", "2"); code != 0 {
		t.Fatalf("pgscale init: exit %d: %s", code, stderr)
	}
	pgbench := exec.Command(filepath.Join(cluster.BinDir, "pgbench"), "-n", "-b", "tpcb-like", "-t", "50", "ours")
	pgbench.Env = pgEnv()
	if out, err := pgbench.CombinedOutput(); err != nil || !strings.Contains(string(out), "scaling factor: 2") {
		t.Errorf("pgbench on pgscale's data: %v\n%s", err, out)
	}
	createDB(t, "theirs")
	initCmd := exec.Command(filepath.Join(cluster.BinDir, "pgbench"), "-i", "-s", "3", "-q", "theirs")
	initCmd.Env = pgEnv()
	if out, err := initCmd.CombinedOutput(); err != nil {
		t.Fatalf("pgbench -i: %v\n%s", err, out)
	}
	out := filepath.Join(t.TempDir(), "r.json")
	if code, _, stderr := pgscale(t, "run", "--dsn", dsn("theirs"), "-b", "tpcb-like", "-t", "50", "-c", "2", "--out", out); code != 0 {
		t.Fatalf("pgscale on pgbench's data: exit %d: %s", code, stderr)
	}
	f := readResult(t, out)
	if f.Workload.Scale != 3 || f.Steps[0].Summary.Transactions != 100 || f.Steps[0].Summary.Failed != 0 {
		t.Errorf("scale %d, %d transactions, %d failed; want scale read from the data (3), 100, 0",
			f.Workload.Scale, f.Steps[0].Summary.Transactions, f.Steps[0].Summary.Failed)
	}
}

// Weighted scripts run in their proportions and are reported per script.
func TestWeightedScripts(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := pgscale(t, "run", "--dsn", dsn("postgres"), "-n", "-c", "1", "-t", "400", "--random-seed", "7",
		"-b", "select-only@9", "-b", "simple-update@1", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f := readResult(t, out)
	sc := f.Steps[0].Scripts
	if len(sc) != 2 || sc[0].Transactions+sc[1].Transactions != 400 {
		t.Fatalf("per-script figures %+v", sc)
	}
	// Binomial(400, 0.9): mean 360, standard deviation 6.
	if n := sc[0].Transactions; n < 335 || n > 385 {
		t.Errorf("select-only ran %d of 400 transactions at weight 9 of 10", n)
	}
	if !strings.Contains(stdout, "SQL script 2: builtin:simple-update") || !strings.Contains(stdout, "weight: 1 (targets 10.0% of total)") {
		t.Errorf("no pgbench-style per-script lines:\n%s", stdout)
	}
}

// What run prints on stdout — each step's line with its evidence, the
// per-script and per-command tables, the disturbance's before, during and
// after, the sweep table and the diagnosis — is what report prints of the
// result file it wrote: one renderer, read live or later.
func TestRunPrintsWhatReportShows(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := pgscale(t, "run", "--dsn", dsn("postgres"), "-n", "-c", "1,2", "-T", "3", "-P", "1", "-r",
		"-b", "select-only@9", "-b", "simple-update@1", "--disturb", "checkpoint=1s@1s-2s", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, shown, stderr := pgscale(t, "report", out)
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	printed := strings.TrimSuffix(stdout, "result: "+out+"\n")
	if printed == stdout {
		t.Fatalf("run's output does not end with the result line:\n%s", stdout)
	}
	if printed != shown {
		t.Errorf("run printed:\n%s\nreport shows:\n%s", printed, shown)
	}
	for _, want := range []string{"2 clients: ", "  cpu: ", "SQL script 2: builtin:simple-update", "statement latencies",
		"disturbance checkpoint=1s@1s-2s", "  during ", "during/before", "diagnosis:", "initial connection time"} {
		if !strings.Contains(printed, want) {
			t.Errorf("the output lacks %q", want)
		}
	}
	if strings.Contains(printed, "progress: ") {
		t.Errorf("progress lines reached stdout")
	}
}
