package plan_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/load"
	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/plan"
	"github.com/pgscale/pgscale/internal/probeopt"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/suite"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/target/targettest"
	"github.com/pgscale/pgscale/internal/testenv"
	"github.com/pgscale/pgscale/internal/usage"
	"github.com/pgscale/pgscale/internal/workload"
)

// cluster is the package's one server: the runners' tests reach it as a
// dsn: target, so that each run prepares its data rather than starting a
// cluster of its own.
var cluster *target.Cluster

func TestMain(m *testing.M) {
	os.Exit(targettest.Run(m, target.Options{MaxConnections: 40, DataSizeHint: workload.DataBytes(1)}, func(c *target.Cluster) { cluster = c }))
}

// dsn is the package's server as a --dsn value.
func dsn() string { return cluster.ConnString("postgres") }

// events records what a runner emits.
type events struct{ got []observe.Event }

func (e *events) Observe(ev observe.Event) { e.got = append(e.got, ev) }

// count is how many events of e's kind were emitted.
func count[T observe.Event](e *events) int {
	n := 0
	for _, ev := range e.got {
		if _, ok := ev.(T); ok {
			n++
		}
	}
	return n
}

// common is a small run's settings: select-only, the clients given, a
// half-second step on pgbench's data made on the dsn target (--init).
func common(obs observe.Observer, clients ...int) plan.Common {
	probes := probeopt.DefaultOptions()
	return plan.Common{Argv: []string{"pgscale", "test"}, Version: "test",
		Workload: workload.Spec{Scripts: []workload.ScriptArg{{Kind: "b", Arg: "select-only"}}},
		Data:     plan.Data{Init: workload.InitOptions{Scale: 1, Fillfactor: 100, PartitionMethod: "range"}, Create: true},
		Load:     plan.Load{Clients: clients, Settings: load.Settings{Duration: 500 * time.Millisecond, MaxTries: 1, Interval: 250 * time.Millisecond}},
		Probes:   &probes, Observer: obs}
}

// A run that cannot work is a usage error before anything starts: no
// event, no result file, the server untouched.
func TestRunRefusesBeforeStarting(t *testing.T) {
	for name, edit := range map[string]func(*plan.RunSpec){
		"-T and -t":       func(s *plan.RunSpec) { s.Load.Transactions = 10 },
		"no clients":      func(s *plan.RunSpec) { s.Load.Clients = nil },
		"a bad --io":      func(s *plan.RunSpec) { s.Load.IO = "fast" },
		"unlimited tries": func(s *plan.RunSpec) { s.Load.Duration, s.Load.Transactions, s.Load.MaxTries = 0, 10, 0 },
		"a bad probe":     func(s *plan.RunSpec) { s.Probes.WaitSource = "guess" },
		"a bad window":    func(s *plan.RunSpec) { s.Disturb.Builtins = []string{"ddl-churn@9s-10s"} },
		"a bad script":    func(s *plan.RunSpec) { s.Workload.Scripts = []workload.ScriptArg{{Kind: "b", Arg: "nope"}} },
	} {
		t.Run(name, func(t *testing.T) {
			var ev events
			out := filepath.Join(t.TempDir(), "r.json")
			spec := plan.RunSpec{Common: common(&ev, 1), Target: target.Existing("host=/nonexistent port=1"), Out: out}
			edit(&spec)
			f, path, err := plan.Run(context.Background(), spec)
			if !usage.Is(err) || f != nil || path != "" {
				t.Errorf("%s: %v (usage error %v), file %v at %q; want a usage error and nothing written", name, err, usage.Is(err), f != nil, path)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: the error is more than one line: %q", name, err)
			}
			if _, serr := os.Stat(out); !errors.Is(serr, os.ErrNotExist) || len(ev.got) > 0 {
				t.Errorf("%s: result file %v, %d events: want none", name, serr, len(ev.got))
			}
		})
	}
}

// Run sweeps the clients on the target: it makes the data, emits a start,
// intervals and an end per step, diagnoses, and writes a complete result
// file that reads back as the file it returns.
func TestRunSweep(t *testing.T) {
	var ev events
	out := filepath.Join(t.TempDir(), "r.json")
	spec := plan.RunSpec{Common: common(&ev, 1, 2), Target: target.Existing(dsn()), Out: out}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	f, path, err := plan.Run(ctx, spec)
	if err != nil || path != out || f == nil {
		t.Fatalf("run: %v, file %v at %q", err, f != nil, path)
	}
	back, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Complete || len(back.Steps) != 2 || back.Steps[0].Clients != 1 || back.Steps[1].Clients != 2 || back.Diagnosis == nil {
		t.Fatalf("result: complete %v, %d steps, diagnosis %v", back.Complete, len(back.Steps), back.Diagnosis != nil)
	}
	for _, s := range back.Steps {
		if s.Summary.Transactions <= 0 || s.Probes == nil || s.Probes.Process() == nil {
			t.Errorf("%d clients: %d transactions, probes %v", s.Clients, s.Summary.Transactions, s.Probes)
		}
	}
	if back.Target.Kind != "dsn" || back.Workload.Name != "select-only" || back.Workload.Scale != 1 {
		t.Errorf("target %q, workload %q at scale %d", back.Target.Kind, back.Workload.Name, back.Workload.Scale)
	}
	if n, m := count[observe.StepStart](&ev), count[observe.StepEnd](&ev); n != 2 || m != 2 {
		t.Errorf("%d step starts and %d ends, want 2 each", n, m)
	}
	if n := count[observe.Interval](&ev); n < 2 {
		t.Errorf("%d intervals over two half-second steps of 250 ms intervals", n)
	}
	if n := count[observe.RunEnd](&ev); n != 1 {
		t.Errorf("%d run ends", n)
	}
}

// A run cancelled during a step writes what it measured, marked
// incomplete, and says it was interrupted (not a usage error: exit 3).
func TestRunCancelledWritesIncomplete(t *testing.T) {
	testenv.Slow(t) // runs a sweep
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	steps := 0
	obs := observe.Func(func(e observe.Event) {
		if _, ok := e.(observe.StepEnd); ok {
			if steps++; steps == 1 {
				cancel() // during the second step's start
			}
		}
	})
	out := filepath.Join(t.TempDir(), "r.json")
	spec := plan.RunSpec{Common: common(obs, 1, 2, 4), Target: target.Existing(dsn()), Out: out}
	_, path, err := plan.Run(ctx, spec)
	if err == nil || usage.Is(err) || !strings.Contains(err.Error(), "interrupted") || path != out {
		t.Fatalf("run: %v, path %q; want it interrupted and the file written", err, path)
	}
	f, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if f.Complete || f.Reason == "" || len(f.Steps) == 0 || len(f.Steps) == 3 && f.Steps[2].Complete {
		t.Errorf("complete %v (%q), %d steps: want the steps measured, the file incomplete", f.Complete, f.Reason, len(f.Steps))
	}
}

// RunAB runs the targets in interleaved rounds, every target in every
// round, and writes a file per target that names the others.
func TestRunABRounds(t *testing.T) {
	testenv.Slow(t) // runs rounds on two targets
	var ev events
	dir := filepath.Join(t.TempDir(), "ab")
	targets, err := target.ParseSpecs([]string{"x=dsn:" + dsn(), "y=dsn:" + dsn()}, "", 2)
	if err != nil {
		t.Fatal(err)
	}
	spec := plan.ABSpec{Common: common(&ev, 1), Targets: targets, Rounds: 2, OrderSeed: "7", Out: dir}
	spec.Cluster.Separate = false
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	files, out, err := plan.RunAB(ctx, spec)
	if err != nil || out != dir || len(files) != 2 {
		t.Fatalf("ab: %v, dir %q, %d files", err, out, len(files))
	}
	for i, name := range []string{"x", "y"} {
		f, err := result.Read(filepath.Join(dir, name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		rounds := map[int]bool{}
		for _, s := range f.Steps {
			rounds[s.Round] = true
		}
		if f.Target.Name != name || f.AB == nil || f.AB.Baseline != "x" || len(rounds) != 2 || !f.Complete {
			t.Errorf("file %d: target %q, ab %+v, rounds %v, complete %v", i, f.Target.Name, f.AB, rounds, f.Complete)
		}
	}
	if n := count[observe.RoundStart](&ev); n < 2 {
		t.Errorf("%d round starts", n)
	}
}

// RunSuite runs every cell of a suite as an A/B run, with the cell's
// values in its setup and scripts, and writes the bundle's index.
func TestRunSuiteCells(t *testing.T) {
	testenv.Slow(t) // runs a matrix
	src := `name: tiny
targets: ["a=dsn:` + dsn() + `", "b=dsn:` + dsn() + `"]
matrix:
  rows: [10, 20]
setup: |
  DROP TABLE IF EXISTS tiny{{rows}};
  CREATE TABLE tiny{{rows}} AS SELECT generate_series(1, {{rows}}) AS id;
scripts:
  - sql: SELECT count(*) FROM tiny{{rows}};
init: false
clients: [1]
duration: 0.5s
rounds: 2
`
	s, err := suite.Parse("tiny.yaml", "", "tiny", []byte(src), false)
	if err != nil {
		t.Fatal(err)
	}
	targets, err := s.Resolve(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	var ev events
	dir := filepath.Join(t.TempDir(), "bundle")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run, err := plan.RunSuite(ctx, plan.SuiteSpec{Suite: s, Targets: targets, Argv: []string{"pgscale", "suite"}, Version: "test", Out: dir, Observer: &ev})
	if err != nil || run == nil || run.Index == nil {
		t.Fatalf("suite: %v", err)
	}
	if len(run.Index.Cells) != 2 || count[observe.CellStart](&ev) != 2 {
		t.Fatalf("%d cells in the index, %d cell starts", len(run.Index.Cells), count[observe.CellStart](&ev))
	}
	for _, c := range run.Index.Cells {
		if c.Status != "complete" || len(c.Files) != 2 {
			t.Errorf("cell %s: %s (%s), files %v", c.Key, c.Status, c.Reason, c.Files)
		}
	}
	conn, err := pgconn.Connect(ctx, dsn())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	res, err := conn.Exec(ctx, "SELECT string_agg(relname, ',' ORDER BY relname) FROM pg_class WHERE relname LIKE 'tiny%'").ReadAll()
	if err != nil || len(res) != 1 || string(res[0].Rows[0][0]) != "tiny10,tiny20" {
		t.Errorf("the cells' setup made %v (%v), want tiny10 and tiny20", res, err)
	}
}

// Init makes pgbench's tables and rows on the target, as pgbench -i.
func TestInit(t *testing.T) {
	testenv.Slow(t) // makes pgbench's data
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out strings.Builder
	if err := plan.Init(ctx, plan.InitSpec{Target: target.Existing(dsn()), Init: workload.InitOptions{Scale: 2, Fillfactor: 100, PartitionMethod: "range"}, Out: &out}); err != nil {
		t.Fatal(err)
	}
	conn, err := pgconn.Connect(ctx, dsn())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	res, err := conn.Exec(ctx, "SELECT count(*) FROM pgbench_accounts").ReadAll()
	if err != nil || string(res[0].Rows[0][0]) != "200000" {
		t.Errorf("pgbench_accounts after init -s 2: %v (%v)", res, err)
	}
	if !slices.ContainsFunc(strings.Split(out.String(), "\n"), func(l string) bool { return strings.Contains(l, "done in") }) {
		t.Errorf("init's account: %q", out.String())
	}
}
