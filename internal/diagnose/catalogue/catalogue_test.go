package catalogue_test

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/cli"
	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/golden"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/report/remedy"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/target/targettest"
	"github.com/pgscale/pgscale/internal/testenv"
	"github.com/pgscale/pgscale/internal/workload"
)

var record = flag.Bool("record", false, "keep each case's result files in testdata (the recordings the wording's golden files are made from)")

// cluster is the package's server: pgbench data at scale 1.
var cluster *target.Cluster

func TestMain(m *testing.M) {
	golden.RegisterFlag()
	if testenv.Short() {
		os.Exit(m.Run()) // only the full suite's tests run cases on the cluster: none started
	}
	os.Exit(targettest.Run(m, target.Options{MaxConnections: 60, DataSizeHint: workload.DataBytes(1)}, func(c *target.Cluster) {
		cluster = c
		connect := func(ctx context.Context) (*pgconn.PgConn, error) {
			return pgconn.Connect(ctx, c.ConnString("postgres"))
		}
		if _, err := workload.Init(context.Background(), connect, workload.InitOptions{Scale: 1}, io.Discard); err != nil {
			panic(err)
		}
		// The probes use on a --dsn server what it has: give it what an
		// ephemeral cluster gets where the extensions are installed.
		if conn, err := connect(context.Background()); err == nil {
			for _, ext := range []string{"pg_wait_sampling", "pg_stat_statements"} {
				conn.Exec(context.Background(), "CREATE EXTENSION IF NOT EXISTS "+ext).ReadAll()
			}
			conn.Close(context.Background())
		}
	}))
}

// want is the verdict a step of a case must get, and words its detail
// must hold (any of them).
type want struct {
	clients int
	verdict string
	detail  []string
}

// A case is a pgscale run and the verdicts it must get.
type kase struct {
	name  string
	setup string // SQL run first
	file  string // a script written to a file and given with -f
	args  []string
	want  []want
	// pooler says the case runs through a pgbouncer, which must be
	// installed (targettest.NeedPgBouncer).
	pooler bool
	// crowded, when set, are the verdicts also accepted at a step whose
	// own figures say other processes crowded the workload out
	// (diagnose.Figures.Crowded). A limit of the workload's own (the
	// pooler's one thread) is then not what its figures show: under two
	// CPU hogs (load average 13-24) the pgbouncer case's steps had other
	// processes using 57-74 % of the machine against the workload's
	// 26-43 %, runnable tasks queued (9.96 per core in one), and the
	// backends waiting for a CPU 44-69 % of their time; the sleep case's
	// backends sleep under half their time when a load generator short of
	// CPU keeps them idle (probe's TestSleepIsUnderLoaded: 25-70 % idle at
	// other processes' 97-99 %). On a quiet machine other processes use a
	// few per cent.
	crowded []want
}

// cases are the known bottlenecks. Short steps: the whole set runs in
// about a minute on 2 cores.
var cases = []kase{
	{name: "select-only", args: []string{"-S", "-c", "2,8", "-T", "2"},
		// Clients = cores (this machine's 2): saturated without a queue on a
		// quiet machine; 4× cores: a queue.
		want: []want{{2, diagnose.CPUBound, nil}, {8, diagnose.CPUBound, nil}}},
	{name: "hot-row", setup: "DROP TABLE IF EXISTS hot; CREATE TABLE hot (id int PRIMARY KEY, n bigint); INSERT INTO hot VALUES (1, 0)",
		file: "UPDATE hot SET n = n + 1 WHERE id = 1;\n", args: []string{"-c", "16", "-T", "2"},
		want: []want{{16, diagnose.LockBound, []string{"transactionid: hot rows", "tuple: hot rows"}}}},
	{name: "partitions", setup: `DROP TABLE IF EXISTS parts;
		CREATE TABLE parts (id int, v int) PARTITION BY HASH (id);
		DO $$ BEGIN FOR i IN 0..31 LOOP
			EXECUTE format('CREATE TABLE parts_%s PARTITION OF parts FOR VALUES WITH (MODULUS 32, REMAINDER %s)', i, i);
		END LOOP; END $$;
		INSERT INTO parts SELECT g, g FROM generate_series(1, 3200) g; ANALYZE parts`,
		file: "SELECT count(*) FROM parts;\n", args: []string{"-c", "4", "-T", "2"},
		want: []want{{4, "", []string{"fast-path slots exhausted"}}}},
	{name: "sleep", file: "SELECT pg_sleep(0.01);\n", args: []string{"-c", "2", "-T", "2"},
		want:    []want{{2, diagnose.UnderLoaded, []string{"Timeout:PgSleep"}}},
		crowded: []want{{2, diagnose.CPUBound, []string{"mostly other processes on the machine"}}}},
	{name: "rate", args: []string{"-S", "-R", "200", "-c", "2", "-T", "3"},
		want: []want{{2, diagnose.RateLimited, []string{"the -R schedule's 200"}}}},
	// Many clients through one pgbouncer in transaction mode, sending the
	// empty query: the server has almost nothing to do per transaction,
	// pgbouncer's one thread has its usual work. On 2 cores shared by
	// server, pooler and load generator this is how pgbouncer becomes
	// the limit; on a big machine select-only does it, at one core.
	{name: "pgbouncer", file: ";\n", args: []string{"--pooler", "pgbouncer", "-M", "simple", "-c", "100", "-T", "3"},
		want:    []want{{100, diagnose.PoolerBound, []string{"the pooler's process never waits for work"}}},
		crowded: []want{{100, diagnose.CPUBound, []string{"mostly other processes on the machine"}}}, pooler: true},
}

func pgscale(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

func exec(t *testing.T, sql string) {
	t.Helper()
	ctx := context.Background()
	c, err := pgconn.Connect(ctx, cluster.ConnString("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, sql).ReadAll(); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// out is where a case's result goes: testdata with -record, else a
// temporary directory.
func out(t *testing.T, name string) string {
	if *record {
		return filepath.Join("testdata", name)
	}
	return filepath.Join(t.TempDir(), name)
}

// TestCatalogue runs every case and checks its verdicts.
func TestCatalogue(t *testing.T) {
	testenv.Slow(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.pooler {
				targettest.NeedPgBouncer(t)
			}
			if c.setup != "" {
				exec(t, c.setup)
			}
			args := append([]string{"run", "--dsn", cluster.ConnString("postgres"), "-P", "0", "--out", out(t, c.name+".json")}, c.args...)
			if c.file != "" {
				path := filepath.Join(t.TempDir(), c.name+".sql")
				if err := os.WriteFile(path, []byte(c.file), 0o644); err != nil {
					t.Fatal(err)
				}
				args = append(args, "-f", path)
			}
			code, stdout, stderr := pgscale(t, args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			f, err := result.Read(strings.TrimSpace(strings.TrimPrefix(lastLine(stdout), "result: ")))
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range c.want {
				v, ok := verdictAt(f, w.clients)
				if !ok {
					t.Fatalf("no step with %d clients", w.clients)
				}
				if fig, ok := figuresAt(f, w.clients); ok && c.crowded != nil && fig.Crowded() && c.crowded[i].matches(v) {
					// On a crowded machine the others' load may be what
					// shows, or still the workload's own limit (below).
					t.Logf("%d clients: other processes used %.0f%% of the machine, the workload %.0f%%, with a run queue: %s", w.clients,
						100*fig.Elsewhere(), 100*(fig.MachineBusy-fig.Elsewhere()), v.Verdict)
					continue
				}
				if !w.matches(v) {
					t.Errorf("%d clients: %s (%s), want %s %q\n%s", w.clients, v.Verdict, v.Detail, w.verdict, w.detail, diagnosisOf(stdout))
				}
			}
		})
	}
}

// TestExpectExitCodes: a decision rule that holds exits 0, one that fails
// exits 1, on the recorded select-only sweep.
func TestExpectExitCodes(t *testing.T) {
	path := filepath.Join("testdata", "select-only.json")
	if code, stdout, stderr := pgscale(t, "report", path, "--expect", "efficiency@c=8>=1%", "--expect", "waits@c=8<20%"); code != 0 || !strings.Contains(stdout, "waits@c=8<20%: 0%, holds") {
		t.Errorf("holding rules: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, stdout, stderr := pgscale(t, "report", path, "--expect", "efficiency@c=8>=1000%"); code != cli.ExitRegression || !strings.Contains(stdout, "fails") {
		t.Errorf("a failing rule: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, _, stderr := pgscale(t, "report", path, "--expect", "efficiency@c=8>=1000"); code != cli.ExitUsage || !strings.Contains(stderr, "is a share") {
		t.Errorf("a bad rule: exit %d\n%s", code, stderr)
	}
}

// TestDifferential: planning every execution anew (force_custom_plan) of
// a three-table join is slower because each transaction costs more
// server CPU. In slices (the least noisy turns on a shared machine) the
// meter measures that cost and no probe runs, so the differential also
// says that contention could not be judged.
func TestDifferential(t *testing.T) {
	testenv.Slow(t)
	path := filepath.Join(t.TempDir(), "join.sql")
	os.WriteFile(path, []byte(joinScript), 0o644)
	dir := out(t, "ab")
	if *record {
		os.RemoveAll(dir)
	}
	code, stdout, stderr := pgscale(t, "ab", "--target", "base=settings:", "--target", "custom=settings:plan_cache_mode=force_custom_plan",
		"-f", path, "-c", "2", "-T", "1", "--rounds", "5", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, lastLines(stderr, 10))
	}
	cmp := abComparison(t, dir)
	if len(cmp.Why) != 1 || len(cmp.Why[0].Steps) != 1 {
		t.Fatalf("no differential diagnosis of a significant change:\n%s", stdout)
	}
	s := cmp.Why[0].Steps[0]
	if !s.Slower || len(s.Causes) == 0 || s.Causes[0].Kind != diagnose.CauseWork || !strings.Contains(s.Text, "more server CPU") {
		t.Errorf("differential %+v, want slower because of server CPU per transaction\n%s", s, stdout)
	}
	if !strings.Contains(cmp.Why[0].Unjudged, "contention could not be judged") {
		t.Errorf("unjudged %q", cmp.Why[0].Unjudged)
	}
	if !strings.Contains(stdout, "  why: Slower at 2 clients") {
		t.Errorf("the text report does not say why:\n%s", stdout)
	}
}

const joinScript = `\set aid random(1, 100000)
SELECT a.abalance FROM pgbench_accounts a JOIN pgbench_branches b ON b.bid = a.bid JOIN pgbench_tellers t ON t.bid = b.bid WHERE a.aid = :aid LIMIT 1;
`

// TestWording checks the words of each recorded case against its golden
// file: the diagnosis of a sweep, the comparison's headline and why.
func TestWording(t *testing.T) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := result.Read(filepath.Join("testdata", c.name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			text, _ := report.Lookup("text")
			if err := text.Write(&b, report.NewDoc(compare.Analyze([]compare.Input{{Name: c.name, File: f}}, compare.Compared{}))); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, c.name, []byte(diagnosisOf(b.String())))
		})
	}
	t.Run("ab", func(t *testing.T) {
		cmp := abComparison(t, filepath.Join("testdata", "ab"))
		var b bytes.Buffer
		for i, w := range cmp.Why {
			b.WriteString(cmp.CandidateHeadline(i) + "\n")
			for _, s := range w.Sentences() {
				b.WriteString(s + "\n")
			}
		}
		golden.Check(t, "ab", b.Bytes())
	})
}

func abComparison(t *testing.T, dir string) *compare.Comparison {
	t.Helper()
	var inputs []compare.Input
	for _, name := range []string{"base.json", "custom.json"} {
		f, err := result.Read(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, compare.Input{Name: f.Target.Name, File: f})
	}
	cmp, _, err := compare.OfRun(inputs, remedy.Say)
	if err != nil {
		t.Fatal(err)
	}
	return cmp
}

func verdictAt(f *result.File, clients int) (result.StepVerdict, bool) {
	for _, v := range f.Diagnosis.Steps {
		if v.Clients == clients {
			return v, true
		}
	}
	return result.StepVerdict{}, false
}

// matches says v is the verdict w wants, with one of its words.
func (w want) matches(v result.StepVerdict) bool {
	return (w.verdict == "" || v.Verdict == w.verdict) && containsAny(v.Detail, w.detail)
}

// figuresAt computes the figures of the step with that many clients.
func figuresAt(f *result.File, clients int) (diagnose.Figures, bool) {
	for _, s := range f.Steps {
		if s.Clients == clients {
			return diagnose.ComputeIn(f, s), true
		}
	}
	return diagnose.Figures{}, false
}

func containsAny(s string, subs []string) bool {
	if len(subs) == 0 {
		return true
	}
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// diagnosisOf is a report's diagnosis, from "diagnosis:" to the end
// (without the result line run prints).
func diagnosisOf(s string) string {
	if i := strings.Index(s, "diagnosis:"); i >= 0 {
		s = s[i:]
	}
	if i := strings.Index(s, "\nresult: "); i >= 0 {
		s = s[:i+1]
	}
	return s
}

func lastLine(s string) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return ls[len(ls)-1]
}

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}
