package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/engine"
	"github.com/pgscale/pgscale/internal/load"
	"github.com/pgscale/pgscale/internal/testenv"
)

// cpuMasks is each thread's Cpus_allowed_list of this process.
func cpuMasks(t *testing.T) map[string]string {
	t.Helper()
	tasks, err := filepath.Glob("/proc/self/task/*/status")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the thread has exited
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				m[filepath.Base(filepath.Dir(f))] = strings.TrimSpace(v)
			}
		}
	}
	return m
}

// startCPUs is the process's CPUs, read before any test ran a step (a
// thread's list read later could be one a step left pinned).
var startCPUs = func() string {
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}()

// With several clients on a local server, each client's thread is pinned to
// its backend's CPU while the step runs, and every thread has the process's
// CPUs back when it ends; with one client (auto) or off, nothing is pinned.
func TestColocate(t *testing.T) {
	testenv.Slow(t)
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: nothing to choose")
	}
	all := startCPUs
	if all == "" {
		t.Fatal("no Cpus_allowed_list in /proc/self/status at the start")
	}
	for _, tc := range []struct {
		clients int
		mode    engine.Colocate
		want    int
	}{{2, engine.ColocateAuto, 2}, {1, engine.ColocateAuto, 0}, {1, engine.ColocateOn, 1}, {2, engine.ColocateOff, 0}} {
		var pinned atomic.Int32
		cfg := engine.Config{Settings: load.Settings{Duration: 1500 * time.Millisecond, Interval: 500 * time.Millisecond, IO: "raw", Colocate: tc.mode.String(), MaxTries: 1}, Conn: connConfig(t), Program: program(t, tc.clients, "select-only"), Clients: tc.clients, Protocol: engine.Prepared, Progress: func(engine.Progress) {
			n := 0
			for _, m := range cpuMasks(t) {
				if m != all {
					n++
				}
			}
			pinned.Store(int32(max(int(pinned.Load()), n)))
		}}
		r, err := engine.Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if r.Colocated != tc.want {
			t.Errorf("%d clients, colocate %v: %d clients followed their backend, want %d", tc.clients, tc.mode, r.Colocated, tc.want)
		}
		// (A client that moved threads leaves its old one pinned until the
		// step ends: more pinned threads than clients can be.)
		if got := int(pinned.Load()); (got > 0) != (tc.want > 0) {
			t.Errorf("%d clients, colocate %v: %d threads pinned while running, want them pinned: %v", tc.clients, tc.mode, got, tc.want > 0)
		}
		for tid, m := range cpuMasks(t) {
			if m != all {
				t.Errorf("%d clients, colocate %v: thread %s left on CPUs %s after the step, want %s", tc.clients, tc.mode, tid, m, all)
			}
		}
	}
}
