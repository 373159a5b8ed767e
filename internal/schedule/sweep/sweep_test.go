package sweep_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/experiment"
	"github.com/pgscale/pgscale/internal/load"
	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/probeopt"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/schedule/sweep"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/target/targettest"
	"github.com/pgscale/pgscale/internal/testenv"
	"github.com/pgscale/pgscale/internal/usage"
	"github.com/pgscale/pgscale/internal/workload"
)

// cluster is the package's one server: the sweeps reach it as a dsn:
// target, so that each run prepares its data rather than starting a
// cluster of its own.
var cluster *target.Cluster

func TestMain(m *testing.M) {
	os.Exit(targettest.Run(m, target.Options{MaxConnections: 40, DataSizeHint: workload.DataBytes(1)}, func(c *target.Cluster) { cluster = c }))
}

// dsn is the package's server as a --dsn value.
func dsn() string { return cluster.ConnString("postgres") }

// events records what a schedule emits.
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

// experimentOf is a small run's experiment: select-only, the clients
// given, a half-second step on pgbench's data made on the dsn target.
func experimentOf(t *testing.T, obs observe.Observer, clients ...int) experiment.Common {
	t.Helper()
	wl, err := workload.Load(workload.Spec{Scripts: []workload.ScriptArg{{Kind: "b", Arg: "select-only"}}})
	if err != nil {
		t.Fatal(err)
	}
	return experiment.Common{Argv: []string{"pgscale", "test"}, Version: "test", Workload: wl,
		Data:   experiment.Data{Init: workload.InitOptions{Scale: 1, Fillfactor: 100, PartitionMethod: "range"}, Create: true, Pgbench: true, SetupName: "the test's setup"},
		Load:   experiment.Load{Clients: clients, Settings: load.Settings{Duration: 500 * time.Millisecond, MaxTries: 1, Interval: 250 * time.Millisecond}},
		Probes: probeopt.DefaultOptions(), Observer: obs}
}

// Run sweeps the clients on the target: it makes the data, emits a start,
// intervals and an end per step, diagnoses, and writes a complete result
// file that reads back as the file it returns.
func TestRunSweep(t *testing.T) {
	var ev events
	out := filepath.Join(t.TempDir(), "r.json")
	spec := sweep.Spec{Common: experimentOf(t, &ev, 1, 2), Target: target.Existing(dsn()), Out: out}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	f, path, err := sweep.Run(ctx, spec)
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
	spec := sweep.Spec{Common: experimentOf(t, obs, 1, 2, 4), Target: target.Existing(dsn()), Out: out}
	_, path, err := sweep.Run(ctx, spec)
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
