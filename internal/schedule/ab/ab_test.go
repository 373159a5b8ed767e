package ab_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/experiment"
	"github.com/pgscale/pgscale/internal/load"
	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/probeopt"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/schedule/ab"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/target/targettest"
	"github.com/pgscale/pgscale/internal/testenv"
	"github.com/pgscale/pgscale/internal/workload"
)

// cluster is the package's one server, for its full-tier tests: none in
// -short, where its tests need none.
var cluster *target.Cluster

func TestMain(m *testing.M) {
	if testenv.Short() {
		os.Exit(m.Run())
	}
	os.Exit(targettest.Run(m, target.Options{MaxConnections: 40, DataSizeHint: workload.DataBytes(1)}, func(c *target.Cluster) { cluster = c }))
}

// rounds counts the round starts a run emits.
type rounds struct{ n int }

func (r *rounds) Observe(e observe.Event) {
	if _, ok := e.(observe.RoundStart); ok {
		r.n++
	}
}

// Run runs the targets in interleaved rounds, every target in every
// round, and writes a file per target that names the others.
func TestRunRounds(t *testing.T) {
	testenv.Slow(t) // runs rounds on two targets
	dsn := cluster.ConnString("postgres")
	targets, err := target.ParseSpecs([]string{"x=dsn:" + dsn, "y=dsn:" + dsn}, "", 2)
	if err != nil {
		t.Fatal(err)
	}
	wl, err := workload.Load(workload.Spec{Scripts: []workload.ScriptArg{{Kind: "b", Arg: "select-only"}}})
	if err != nil {
		t.Fatal(err)
	}
	var ev rounds
	dir := filepath.Join(t.TempDir(), "ab")
	spec := ab.Spec{Common: experiment.Common{Argv: []string{"pgscale", "test"}, Version: "test", Workload: wl,
		Data:   experiment.Data{Init: workload.InitOptions{Scale: 1, Fillfactor: 100, PartitionMethod: "range"}, Create: true, Pgbench: true},
		Load:   experiment.Load{Clients: []int{1}, Settings: load.Settings{Duration: 500 * time.Millisecond, MaxTries: 1, Interval: 250 * time.Millisecond}},
		Probes: probeopt.DefaultOptions(), Observer: &ev},
		Targets: targets, Rounds: 2, OrderSeed: 7, Out: dir}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	files, out, err := ab.Run(ctx, spec)
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
	if ev.n < 2 {
		t.Errorf("%d round starts", ev.n)
	}
}
