package probe_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/prometheus/procfs"

	"github.com/pgscale/pgscale/internal/probe"
)

// The meter sees the server's CPU and context switches: a backend that
// spins shows up in server_cpu_s, at least what the kernel's tick
// accounting (/proc/PID/stat) charged that backend and at most what the
// query took, and the counters never go back. The lower bound is the
// backend's own time rather than a share of the query's, which a loaded
// machine does not give it.
func TestMeterCountsTheServer(t *testing.T) {
	ctx := context.Background()
	m, err := probe.NewMeter(ctx, probe.Config{Server: cluster.Watch()})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgconn.ConnectConfig(ctx, connConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	backend := ticksOf(t, int(conn.PID()))
	a := m.Read()
	t0 := time.Now()
	if _, err := conn.Exec(ctx, "SELECT count(*) FROM generate_series(1, 3000000)").ReadAll(); err != nil {
		t.Fatal(err)
	}
	took := time.Since(t0).Seconds()
	b := m.Read()
	backend = ticksOf(t, int(conn.PID())) - backend
	cpu := b[probe.MeterServerCPU] - a[probe.MeterServerCPU]
	t.Logf("query took %.3f s; server cpu %.3f s (user %.2f, sys %.2f), %v context switches; the backend's ticks %.2f s", took, cpu,
		b[probe.MeterServerUser]-a[probe.MeterServerUser], b[probe.MeterServerSys]-a[probe.MeterServerSys], b[probe.MeterServerCtx]-a[probe.MeterServerCtx], backend)
	if backend < 0.05 {
		t.Fatalf("the backend was charged %.3f s for the query: it did not spin", backend)
	}
	if cpu < backend-0.03 || cpu > took+0.1 {
		t.Errorf("server cpu %.3f s for a query that took %.3f s, of which the backend was charged %.3f s", cpu, took, backend)
	}
	for k, v := range b {
		if v < a[k] {
			t.Errorf("%s went back from %v to %v", k, a[k], v)
		}
	}
	if b[probe.MeterServerCtx] <= a[probe.MeterServerCtx] {
		t.Errorf("no context switch counted")
	}
}

// What one read of the server's processes costs: the meter is read twice
// per slice of an A/B run in slices.
func BenchmarkMeterRead(b *testing.B) {
	m, err := probe.NewMeter(context.Background(), probe.Config{Server: cluster.Watch()})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		m.Read()
	}
}

// ticksOf is the user and system time the kernel charged process pid
// (utime and stime of /proc/PID/stat), in seconds.
func ticksOf(t *testing.T, pid int) float64 {
	t.Helper()
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		t.Fatal(err)
	}
	p, err := fs.Proc(pid)
	if err != nil {
		t.Fatal(err)
	}
	st, err := p.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return st.CPUTime()
}
