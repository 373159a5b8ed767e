package sweep_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/procfs"

	"github.com/pgscale/pgscale/internal/experiment"
	"github.com/pgscale/pgscale/internal/load"
	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/probeopt"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/schedule/sweep"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/testenv"
	"github.com/pgscale/pgscale/internal/usage"
	"github.com/pgscale/pgscale/internal/workload"
)

// needServerAndPgBouncer skips the test without the server binaries or
// pgbouncer, unless CI=true, where that is a failure.
func needServerAndPgBouncer(t *testing.T) {
	t.Helper()
	_, err := target.FindBinDir("", target.Words{})
	if err == nil {
		_, err = target.FindPgBouncer("")
	}
	testenv.Need(t, err)
}

// childPgBouncers returns the pgbouncer processes this test process started.
func childPgBouncers(t *testing.T) []int {
	t.Helper()
	procs, err := procfs.AllProcs()
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, p := range procs {
		st, err := p.Stat()
		if err == nil && st.PPID == os.Getpid() && st.Comm == "pgbouncer" && st.State != "Z" {
			out = append(out, p.PID)
		}
	}
	return out
}

// A run in which no client ever connects — the pooler is gone when the
// step's clients try — still writes its incomplete result file, keeps the
// pooler's log beside it, and says why in one line; the cluster behind the
// pooler is stopped and removed.
func TestNoClientConnectsThroughADeadPooler(t *testing.T) {
	testenv.Slow(t) // starts a cluster and a pooler of its own
	needServerAndPgBouncer(t)
	out := filepath.Join(t.TempDir(), "r.json")
	var killed []int
	obs := observe.Func(func(e observe.Event) {
		if _, ok := e.(observe.StepStart); ok && killed == nil {
			killed = childPgBouncers(t)
			for _, pid := range killed {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	probes := probeopt.DefaultOptions()
	probes.None = true
	wl, err := workload.Load(workload.Spec{Protocol: "simple"})
	if err != nil {
		t.Fatal(err)
	}
	front, err := target.WithPooler(target.ForRun(""), "pgbouncer")
	if err != nil {
		t.Fatal(err)
	}
	spec := sweep.Spec{
		Common: experiment.Common{Argv: []string{"pgscale", "run", "--pooler", "pgbouncer"}, Version: "test", Workload: wl,
			Data: experiment.Data{Init: workload.InitOptions{Scale: 1, Fillfactor: 100, PartitionMethod: "range"}, Pgbench: true},
			// No vacuum before the step: the clients are the first to find
			// the pooler gone.
			Load:   experiment.Load{Clients: []int{8}, NoVacuum: true, Settings: load.Settings{Duration: 2 * time.Second, MaxTries: 1}},
			Probes: probes, Observer: obs},
		Target: front, Out: out,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	file, path, err := sweep.Run(ctx, spec)
	if len(killed) != 1 {
		t.Fatalf("killed pgbouncer processes %v at the step's start, want one (run: %v)", killed, err)
	}
	if err == nil || usage.Is(err) || errors.Is(err, context.Canceled) {
		t.Fatalf("run: %v, want the run to fail (exit 3)", err)
	}
	msg := err.Error()
	t.Logf("run: %s", msg)
	if strings.Contains(msg, "\n") || !strings.Contains(msg, "pgbouncer") || !strings.Contains(msg, "killed by signal 9") {
		t.Errorf("error %q: want one line naming the killed pgbouncer", msg)
	}
	if file == nil || path != out {
		t.Fatalf("no result file written (path %q)", path)
	}
	f, rerr := result.Read(out)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if f.Complete || !strings.Contains(f.Reason, "killed by signal 9") || len(f.Steps) != 1 {
		t.Fatalf("result: complete %v, reason %q, %d steps", f.Complete, f.Reason, len(f.Steps))
	}
	s := f.Steps[0]
	if s.Complete || s.Summary.Transactions != 0 || !strings.Contains(s.Reason, "pgbouncer") || !strings.Contains(s.Reason, "connect") {
		t.Errorf("step: complete %v, %d transactions, reason %q", s.Complete, s.Summary.Transactions, s.Reason)
	}
	logPath := strings.TrimSuffix(out, ".json") + ".pgbouncer.log"
	if b, err := os.ReadFile(logPath); err != nil || len(b) == 0 || !strings.Contains(f.Reason, logPath) {
		t.Errorf("pooler log %s (%v): %d bytes; reason %q should name it", logPath, err, len(b), f.Reason)
	}
	if f.Target.Kind != "pgbouncer" || f.Target.Pooler == nil || f.Target.Pooler.ServerKind != "ephemeral" {
		t.Errorf("target %+v", f.Target)
	}
	dir := strings.Fields(strings.TrimPrefix(f.Target.Pooler.Server, "host="))[0]
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the cluster's directory %s is left (%v)", dir, err)
	}
	if left := childPgBouncers(t); len(left) > 0 {
		t.Errorf("pgbouncer processes left: %v", left)
	}
}
