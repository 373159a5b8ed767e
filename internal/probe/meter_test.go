package probe_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/probe"
)

// The meter sees the server's CPU and context switches: a backend that
// spins for a known time shows up in server_cpu_s, within what the query
// took, and the counters never go back.
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
	a := m.Read()
	t0 := time.Now()
	if _, err := conn.Exec(ctx, "SELECT count(*) FROM generate_series(1, 3000000)").ReadAll(); err != nil {
		t.Fatal(err)
	}
	took := time.Since(t0).Seconds()
	b := m.Read()
	cpu := b[probe.MeterServerCPU] - a[probe.MeterServerCPU]
	t.Logf("query took %.3f s; server cpu %.3f s (user %.2f, sys %.2f), %v context switches", took, cpu,
		b[probe.MeterServerUser]-a[probe.MeterServerUser], b[probe.MeterServerSys]-a[probe.MeterServerSys], b[probe.MeterServerCtx]-a[probe.MeterServerCtx])
	if cpu < 0.3*took || cpu > took+0.1 {
		t.Errorf("server cpu %.3f s for a query that took %.3f s", cpu, took)
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
