package probe

import (
	"context"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/procfs"

	"github.com/pgscale/pgscale/internal/result"
)

// A pooler that dies during the step (killed) leaves the CPU it used until
// it was read last, and a note that says so, instead of no pooler at all:
// its share of the machine went to "other". A busy shell stands in for the
// pooler (--pooler-pid). About 2 s.
func TestPoolerThatExitsKeepsItsCPU(t *testing.T) {
	busy := exec.Command("sh", "-c", "while :; do :; done")
	if err := busy.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = busy.Process.Kill(); _ = busy.Wait() }()
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		t.Skip("no /proc")
	}
	p := &procProbe{fs: fs, poolerPID: busy.Process.Pid, cpus: runtime.NumCPU(), probePIDs: func() map[int]string { return nil }}
	ctx := context.Background()
	loop, err := p.begin(ctx, nil)
	if err != nil || loop == nil {
		t.Fatalf("begin: %v (loop %v): want a loop reading the pooler", err, loop != nil)
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() { loop(stop); close(done) }()
	time.Sleep(1500 * time.Millisecond)
	_ = busy.Process.Kill()
	_ = busy.Wait()
	if err := p.capture(ctx, nil); err != nil {
		t.Fatal(err)
	}
	close(stop)
	<-done
	var out result.Probes
	if err := p.report(ctx, nil, &out); err != nil {
		t.Fatal(err)
	}
	ps := out.Process()
	if ps.Pooler == nil || ps.Pooler.CPUS < 0.1 || !strings.Contains(ps.PoolerNote, "exited during the step: its CPU until") {
		t.Errorf("pooler %+v, note %q: want its CPU until it was read last", ps.Pooler, ps.PoolerNote)
	}
}
