package probe_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/engine"
	"github.com/pgscale/pgscale/internal/load"
	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/probe"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/script"
	"github.com/pgscale/pgscale/internal/step"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/target/targettest"
	"github.com/pgscale/pgscale/internal/testenv"
)

// pooled runs clients through a pgbouncer with the given settings in
// front of the package's cluster, the probes beside them, and returns the
// step as the result file has it.
func pooled(t *testing.T, settings string, clients int, d time.Duration, src string) result.Step {
	t.Helper()
	targettest.NeedPgBouncer(t)
	spec, err := target.WithPooler(target.ForRun(cluster.ConnString("postgres")), "pgbouncer:"+settings)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := target.Open(ctx, spec, target.ClusterOptions{}, target.Needs{Clients: clients, Connections: clients}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	return through(t, srv, clients, d, src)
}

// proxied is pooled through the proxy definition examples/proxy/NAME.yaml.
func proxied(t *testing.T, name string, clients int, d time.Duration, src string) result.Step {
	t.Helper()
	specs, err := target.ParseSpecs([]string{"direct=dsn:" + cluster.ConnString("postgres"), "p=proxy:" + targettest.Example(t, name)}, "", 2)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var lines []string
	servers, err := target.OpenAll(ctx, specs, target.ClusterOptions{}, target.Needs{Clients: clients, Connections: clients}, func(s string) { lines = append(lines, s) })
	defer func() {
		for _, s := range servers {
			s.Close()
		}
	}()
	if err != nil {
		t.Fatal(err)
	}
	// Its start names the target it is.
	if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "starting "+name+" for p in front of ") }) {
		t.Errorf("no line names the target started: %q", lines)
	}
	return through(t, servers[1], clients, d, src)
}

// through runs clients through srv's pooler with the probes beside them.
func through(t *testing.T, srv *target.Server, clients int, d time.Duration, src string) result.Step {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := probe.DefaultConfig()
	cfg.Server = srv.Watch()
	set, err := probe.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	for _, u := range set.Unavailable() {
		if u.Probe == probeid.Pooler.Name {
			t.Fatalf("pooler probe unavailable: %s", u.Reason)
		}
	}
	sc, err := script.Parse("pooled", src)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := script.NewProgram([]*script.Script{sc}, script.Options{Scale: 1, Clients: clients})
	if err != nil {
		t.Fatal(err)
	}
	// A second's warm-up, as a run has: the clients' first server
	// connections are made in it. Without it the first sample saw 3
	// of 4 clients waiting for the server connections pgbouncer was still making on
	// CI's loaded machine, with a pool of 8.
	s, err := step.Run(ctx, step.Config{
		Engine: engine.Config{Settings: load.Settings{Duration: d, Warmup: time.Second, Interval: time.Second, MaxTries: 1}, Conn: srv.Config,
			Protocol: engine.Simple, Clients: clients, Program: prog},
		Info:     observe.StepInfo{Clients: clients},
		Watchers: []observe.Watcher{set},
	})
	if err != nil {
		t.Fatal(err)
	}
	return *s
}

// A pool of 2 server connections in front of 8 clients that each hold
// one for 2 ms: the console says 2 active server connections and the
// other clients waiting, waits per transaction, and counts the load's
// transactions; the text report says so.
func TestPoolerProbeSeesTheQueue(t *testing.T) {
	testenv.Slow(t) // 3 s of load through a pgbouncer of its own
	s := pooled(t, "default_pool_size=2", 8, 3*time.Second, "SELECT pg_sleep(0.002);\n")
	p := s.Probes.Pooler()
	if p == nil {
		t.Fatalf("no pooler evidence; unavailable: %+v", s.Probes.Unavailable)
	}
	tot := p.Total
	if p.Program != "pgbouncer" || p.Samples < 3 || len(p.Series) != p.Samples || p.WindowS < 2 {
		t.Errorf("program %q, %d samples (%d in the series) over %.1f s: want pgbouncer, about one a second", p.Program, p.Samples, len(p.Series), p.WindowS)
	}
	if tot.ServersActive == nil || tot.ServersActive.Max > 2 || tot.ServersActive.Mean < 1 {
		t.Errorf("server connections active %+v: want up to the pool's 2", tot.ServersActive)
	}
	if tot.ClientsWaiting == nil || tot.ClientsWaiting.Mean < 3 || tot.ClientsWaiting.Max > 8 {
		t.Errorf("clients waiting %+v: want most of the 8 clients", tot.ClientsWaiting)
	}
	if tot.WaitPerTxnUS == nil || *tot.WaitPerTxnUS < 2000 {
		t.Errorf("wait per transaction %v µs: want several 2 ms turns", tot.WaitPerTxnUS)
	}
	if tot.MaxWaitMs == nil || *tot.MaxWaitMs <= 0 {
		t.Errorf("longest wait %v: want one", tot.MaxWaitMs)
	}
	if tot.Transactions == nil || p.LoadTransactions == 0 || math.Abs(float64(*tot.Transactions-p.LoadTransactions)) > 0.1*float64(p.LoadTransactions) {
		t.Errorf("the pooler counted %v transactions, the load %d in the same window: want them within 10%%", tot.Transactions, p.LoadTransactions)
	}
	if len(p.Pools) != 0 && len(p.Pools) != 1 {
		t.Errorf("pools %+v: want the one the clients use (the console's own left out)", p.Pools)
	}
	for _, pl := range p.Pools {
		if strings.Contains(pl.Pool, "pgbouncer") {
			t.Errorf("the console's own pool %q is among the pools", pl.Pool)
		}
	}
	cost := false
	for _, c := range s.Probes.Costs {
		if c.Probe == probeid.Pooler.Name {
			cost = c.Queries >= int64(2*p.Samples)
		}
	}
	if !cost {
		t.Errorf("costs %+v: want the pooler probe's queries, two per sample", s.Probes.Costs)
	}
}

// A pool as large as the clients: none of them waits.
func TestPoolerProbeNoQueue(t *testing.T) {
	testenv.Slow(t)
	s := pooled(t, "default_pool_size=8", 4, 3*time.Second, "SELECT pg_sleep(0.002);\n")
	p := s.Probes.Pooler()
	if p == nil {
		t.Fatalf("no pooler evidence; unavailable: %+v", s.Probes.Unavailable)
	}
	if w := p.Total.ClientsWaiting; w == nil || w.Mean > 0.5 {
		t.Errorf("clients waiting %+v: want about none", w)
	}
	if w := p.Total.WaitPerTxnUS; w == nil || *w > 500 {
		t.Errorf("wait per transaction %v µs: want well under a 2 ms turn", w)
	}
}

// pgpool-II's mapping (examples/proxy/pgpool.yaml): its child processes
// counted as clients and server connections, the probe's own session
// taken off.
func TestPgpoolProbe(t *testing.T) {
	testenv.Slow(t)
	targettest.NeedPgpool(t)
	s := proxied(t, "pgpool", 4, 3*time.Second, "SELECT pg_sleep(0.002);\n")
	p := s.Probes.Pooler()
	if p == nil {
		t.Fatalf("no pooler evidence; unavailable: %+v", s.Probes.Unavailable)
	}
	if p.Program != "pgpool" || !p.OwnConnection || p.Samples < 3 {
		t.Errorf("program %q, own connection %v, %d samples: want pgpool's console in the clients' database", p.Program, p.OwnConnection, p.Samples)
	}
	if a := p.Total.ClientsActive; a == nil || a.Mean < 2 || a.Max > 4 {
		t.Errorf("clients active %+v: want up to the 4 clients, the probe's own left out", a)
	}
	if p.Total.ClientsWaiting != nil || p.Total.WaitPerTxnUS != nil {
		t.Errorf("pgpool-II shows no waits, yet the evidence has them: %+v", p.Total)
	}
	if s := p.Total.ServersActive; s == nil || s.Max > 4 {
		t.Errorf("server connections active %+v: want at most the 4 clients'", s)
	}
}
