package diagnose_test

import (
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
)

// pooled is step with the pooler probe's evidence: waiting clients on
// average, a pool of servers server connections all active.
func pooled(s result.Step, waiting, servers, maxWaitMs, waitPerTxnUS float64) result.Step {
	zero := result.Gauge{}
	s.Probes.SetPooler(&result.Pools{Program: "pgbouncer", Samples: 10, WindowS: 10, Total: result.PoolFigures{
		ClientsActive:  &result.Gauge{Mean: float64(s.Clients) - waiting, Max: float64(s.Clients)},
		ClientsWaiting: &result.Gauge{Mean: waiting, Max: waiting + 1},
		ServersActive:  &result.Gauge{Mean: servers, Max: servers}, ServersIdle: &zero, ServersUsed: &zero,
		MaxWaitMs: &maxWaitMs, WaitPerTxnUS: &waitPerTxnUS}})
	return s
}

// inXact gives a pooled step's pool active server connections of
// servers on the gauge's samples, and the pooler's time in transactions
// over its window: inXact connections in one on average.
func inXact(s result.Step, active, servers, inXact float64) result.Step {
	p := s.Probes.Pooler()
	p.Total.ServersActive = &result.Gauge{Mean: active, Max: 4}
	p.Total.ServersIdle = &result.Gauge{Mean: servers - active, Max: 4}
	x := inXact * p.WindowS * 1e6
	p.Total.XactUS = &x
	return s
}

// queued gives a step's client backends (n of them) their time on a CPU
// and waiting for one, in seconds of its 10.
func queued(s result.Step, n int, onCPU, runQueue float64) result.Step {
	ps := s.Probes.Process()
	ps.Server.ByKind = append(ps.Server.ByKind, result.ProcGroup{Kind: "client backend", Processes: n, OnCPUS: onCPU, RunQueueWaitS: runQueue})
	return s
}

func TestPoolBound(t *testing.T) {
	sleepy := map[string]int64{"CPU": 50, "Timeout:PgSleep": 900, "Client:ClientRead": 50}
	file := &result.File{Target: result.Target{Kind: "pgbouncer", Pooler: &result.Pooler{Settings: map[string]string{"default_pool_size": "4"}}}}
	for _, tc := range []struct {
		name, want string
		s          result.Step
		detail     []string
	}{
		// The case: most clients wait for one of 4 server
		// connections, the machine has room.
		{"waits for the pool", diagnose.PoolBound, pooled(step(32, 900, 0.3, 0.5, 1, 0, sleepy), 28, 4, 12, 30000),
			[]string{"on average 28.0 of 32 clients waited for one of 4 server connections (default_pool_size=4), 88% of their time", "longest wait 12.0 ms", "the pool, not the server, is the limit"}},
		// A pool large enough: a few wait at moments, no verdict of it.
		{"a pool large enough", diagnose.UnderLoaded, pooled(step(32, 6000, 0.4, 0.5, 1, 0, sleepy), 2, 30, 1, 100), nil},
		// A saturated machine stays CPU-bound: a larger pool would not
		// help, and the detail says the clients waited.
		{"saturated machine", diagnose.CPUBound, pooled(step(32, 20000, 0.99, 16, 3, 8, map[string]int64{"CPU": 900, "Client:ClientRead": 100}), 26, 4, 2, 900),
			[]string{"26.0 of 32 clients waited for a server connection, which a larger pool would not help"}},
		// A machine saturated by other processes, with a queue: the
		// backends of a pool of 20 split their time between waiting for
		// a CPU (44 %) and for pgbouncer, itself short of CPU (two CPU
		// hogs beside the catalogue's pgbouncer case).
		{"waiting for the pooler on a crowded machine", diagnose.CPUBound, pooled(queued(step(100, 5000, 1.0, 0.8, 3, 40, map[string]int64{"CPU": 10, "Client:ClientRead": 990}), 20, 2, 88), 72, 20, 112, 30000),
			[]string{"mostly other processes", "72.0 of 100 clients waited for a server connection, which a larger pool would not help"}},
		// The same machine, the pool's backends in their transactions'
		// sleeps: the pool is the limit (two CPU hogs beside
		// TestPoolBoundThroughPgBouncer: on a CPU 1 %, waiting for one
		// 48 %, sleeping 36 %, waiting for the client 15 %).
		{"holding the pool on a crowded machine", diagnose.PoolBound, pooled(queued(step(32, 900, 1.0, 0.1, 0.5, 40, map[string]int64{"CPU": 10, "Timeout:PgSleep": 700, "Client:ClientRead": 290}), 4, 0.4, 19.2), 28, 4, 12, 30000), nil},
		// Waiting for a CPU more than half of their time, the others'
		// queue: on a CPU 1 %, waiting for one 54 %, sleeping 25 %,
		// waiting for the client 20 % (other processes 93 % of the
		// machine). It was called cpu-bound.
		{"holding the pool behind the others' queue", diagnose.PoolBound, pooled(queued(step(32, 900, 1.0, 0.1, 0.5, 40, map[string]int64{"CPU": 10, "Timeout:PgSleep": 560, "Client:ClientRead": 430}), 4, 0.4, 21.6), 28, 4, 12, 30000), nil},
		// The active gauge is a moment at each of a few samples: under six
		// CPU hogs it read 2.5 active of 3.5 in TestPoolBoundThroughPgBouncer
		// (other processes 93 %, backends on a CPU 1 %, waiting for one
		// 37 %, sleeping 32 %, waiting for the client 30 %). pgbouncer's own
		// time in transactions over the window says the pool was busy.
		{"busy by the pooler's time, not the gauge's moments", diagnose.PoolBound, inXact(pooled(queued(step(32, 900, 1.0, 0.1, 0.5, 40, map[string]int64{"CPU": 10, "Timeout:PgSleep": 520, "Client:ClientRead": 470}), 4, 0.4, 14.8), 18, 4, 12, 30000), 2.5, 3.5, 3.4), nil},
		// The same gauge with the pooler's time saying the connections
		// were mostly out of a transaction: not all busy.
		{"idle by the pooler's time", diagnose.CPUBound, inXact(pooled(queued(step(32, 900, 1.0, 0.1, 0.5, 40, map[string]int64{"CPU": 10, "Timeout:PgSleep": 520, "Client:ClientRead": 470}), 4, 0.4, 14.8), 18, 4, 12, 30000), 2.5, 3.5, 2.0), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := diagnose.ComputeIn(file, tc.s)
			v := diagnose.Step(f, f)
			if v.Verdict != tc.want {
				t.Fatalf("verdict %s (%s), want %s", v.Verdict, v.Detail, tc.want)
			}
			for _, w := range tc.detail {
				if !strings.Contains(v.Detail, w) {
					t.Errorf("detail %q lacks %q", v.Detail, w)
				}
			}
			if !strings.Contains(strings.Join(v.Evidence, "\n"), "pools: on average") {
				t.Errorf("evidence lacks the pools: %q", v.Evidence)
			}
		})
	}
}

// A candidate slower because its transactions wait longer for the pool
// says so, first when the wait is most of what the median latency moved
// (the figures of ab with pools of 4 and 16 before 32 clients).
func TestExplainPoolWait(t *testing.T) {
	s := func(r int) result.Step {
		return step(32, 1000, 0.3, 0.5, 1, 0, map[string]int64{"CPU": 50, "Client:ClientRead": 950})
	}
	ds := diagnose.DiffStep{Clients: 32, Base: rounds(6, s), Cand: rounds(6, s), Changes: map[string]diagnose.Change{
		"tps":             change(4000, -0.7, 0.05),
		"server-cpu/txn":  {Known: true, Base: 40, Cand: 40, Change: 0.01, Lo: -0.03, Hi: 0.05},
		"pooler-wait/txn": change(4865, 6.145, 1.0),
		"p50":             change(8.82, 3.093, 0.37),
		"server-user/txn": change(30, 0.3, 0.1),
	}}
	d := diagnose.Explain([]diagnose.DiffStep{ds}, stats.Options{}, nil)
	got := strings.Join(d.Sentences(), " ")
	if !strings.Contains(got, "because each transaction waits 614% longer for one of the pool's server connections (+29895 µs ± 4865), against the median latency's +27.3 ms") ||
		!strings.HasSuffix(got, ": the wait for the pool is most of the change in latency.") {
		t.Errorf("differential does not name the pool's wait:\n%s", got)
	}
	if len(d.Steps) != 1 || len(d.Steps[0].Causes) == 0 || d.Steps[0].Causes[0].Kind != diagnose.CausePool {
		t.Errorf("causes %+v, want the pool's", d.Steps)
	}
}

// Through a pool the clients waited in, the latency beyond the server's
// time is the pool's wait (as the pooler counted it) and the rest, not
// all "network + client".
func TestPoolWaitInLatency(t *testing.T) {
	s := pooled(step(8, 16000, 0.99, 16, 3, 2, map[string]int64{"CPU": 900, "Client:ClientRead": 100}), 4, 2, 0.6, 289)
	s.Probes.SetStatements(&result.Statements{Calls: 160000, ServerMs: 160000 * 0.007})
	s.Summary.Latency.MeanMs = 0.477
	f := diagnose.Compute(s)
	if got, want := f.LatencySplit(), "pool wait 0.289 ms, network + client 0.181 ms"; got != want {
		t.Errorf("latency split %q, want %q", got, want)
	}
	v := diagnose.Step(f, f)
	if ev := strings.Join(v.Evidence, "\n"); !strings.Contains(ev, "0.477 ms latency: pool wait 0.289 ms, network + client 0.181 ms") {
		t.Errorf("evidence %q", ev)
	}
	// Without the pooler's count it is what it was.
	s.Probes.SetPooler(nil)
	if got := diagnose.Compute(s).LatencySplit(); got != "network + client 0.470 ms" {
		t.Errorf("without a pool: %q", got)
	}
}

// A pooler that died is named as the pooler's death, not as a server lost
// for 0.0 s, and the verdict says it ended the step.
func TestPoolerLost(t *testing.T) {
	o := result.Outage{AtS: 10.5, ServerS: 0, BackS: 0, Clients: 4, Failed: 4, Pooler: "pgbouncer (pid 7314) was killed by signal 9 (killed)"}
	want := "pooler lost at 10.5 s: pgbouncer (pid 7314) was killed by signal 9 (killed), which ended the step; 4 clients lost their connections, 4 transactions failed"
	if got := diagnose.OutageLine(o); got != want {
		t.Errorf("%q\nwant %q", got, want)
	}
	s := step(4, 14000, 0.99, 8, 2, 1, map[string]int64{"CPU": 500, "Client:ClientRead": 500})
	s.Outages = []result.Outage{o}
	f := diagnose.Compute(s)
	if v := diagnose.Step(f, f); v.Verdict != diagnose.Unclear || !strings.HasPrefix(v.Detail, "the pooler exited during the step (at 10.5 s: pgbouncer (pid 7314) was killed") {
		t.Errorf("verdict %s (%s)", v.Verdict, v.Detail)
	}
}

// A pool still filling is not the limit: the clients waited for the
// server connections the pooler was still opening (pgbouncer had opened 6
// of a pool of 32 in a 3 s step under two CPU hogs).
func TestPoolFilling(t *testing.T) {
	sleepy := map[string]int64{"CPU": 50, "Timeout:PgSleep": 900, "Client:ClientRead": 50}
	file := &result.File{Target: result.Target{Kind: "pgbouncer", Pooler: &result.Pooler{Settings: map[string]string{"default_pool_size": "32"}}}}
	f := diagnose.ComputeIn(file, pooled(step(32, 600, 0.3, 0.5, 1, 0, sleepy), 27.8, 6, 67, 30000))
	v := diagnose.Step(f, f)
	if v.Verdict == diagnose.PoolBound || !strings.Contains(v.Detail, "27.8 of 32 clients waited for a server connection while the pooler had opened 6 of its 32 (default_pool_size=32): it was still opening them") {
		t.Errorf("verdict %s (%s): want no pool-bound, and the pool's filling said", v.Verdict, v.Detail)
	}
}
