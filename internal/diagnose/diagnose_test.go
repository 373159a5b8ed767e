package diagnose_test

import (
	"math"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/result"
)

// step builds a 10 s step on a 2-core machine: tps, machine busy share,
// server and generator CPU seconds, run-queue wait seconds (server), and
// wait samples by "Type:Event" ("CPU" for on-CPU samples).
func step(clients int, tps, busy, serverCPU, genCPU, runQueue float64, waits map[string]int64) result.Step {
	s := result.Step{Clients: clients, Complete: true, ElapsedS: 10}
	s.Summary.TPS = tps
	s.Summary.Transactions = int64(tps * 10)
	s.Summary.Latency.MeanMs = float64(clients) / tps * 1000
	w := &result.Waits{Source: "pg_wait_sampling"}
	for k, n := range waits {
		w.Samples += n
		if k == "CPU" {
			w.CPUSamples += n
			continue
		}
		typ, ev, _ := strings.Cut(k, ":")
		w.Events = append(w.Events, result.WaitEvent{Type: typ, Event: ev, Samples: n})
	}
	s.Probes = &result.Probes{ElapsedS: 10}
	s.Probes.SetProcess(&result.ProcessStats{CPUs: 2, Host: result.HostStat{BusyShare: busy},
		Server:    &result.ProcGroup{CPUS: serverCPU, RunQueueWaitS: runQueue},
		Generator: result.ProcGroup{CPUS: genCPU}})
	s.Probes.SetWaits(w)
	return s
}

func TestVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		s      result.Step
		want   string
		detail string
	}{
		// The trap: a saturated machine where 90% of samples say ClientRead.
		{"client-read trap is cpu-bound", step(8, 30000, 0.99, 14, 5, 40, map[string]int64{"Client:ClientRead": 900, "CPU": 100}), diagnose.CPUBound, "mostly the server"},
		// Clients = cores: saturated, one runnable task per core, no queue.
		{"saturated without a queue is cpu-bound", step(2, 30000, 0.95, 14, 5, 0.1, map[string]int64{"CPU": 500, "Client:ClientRead": 500}), diagnose.CPUBound, "mostly the server (70% of the machine), saturated without a queue"},
		{"generator largest on a saturated machine", step(8, 30000, 0.99, 6, 12, 40, map[string]int64{"CPU": 100, "Client:ClientRead": 900}), diagnose.ClientBound, "the load generator is saturated: it takes 60%"},
		{"lwlock", step(8, 9000, 0.6, 8, 2, 1, map[string]int64{"LWLock:WALInsert": 500, "CPU": 400, "Lock:tuple": 100}), diagnose.LWLockBound, "WALInsert"},
		{"hot rows on a saturated machine", step(8, 1300, 0.99, 3, 2, 30, map[string]int64{"Lock:transactionid": 600, "Lock:tuple": 100, "CPU": 300}), diagnose.LockBound, "hot rows"},
		{"relation locks", step(8, 1300, 0.3, 3, 2, 0, map[string]int64{"Lock:relation": 600, "CPU": 400}), diagnose.LockBound, "DDL"},
		{"io", step(4, 500, 0.2, 1, 1, 0, map[string]int64{"IO:DataFileRead": 700, "CPU": 300}), diagnose.IOBound, "DataFileRead"},
		{"sleep", step(2, 190, 0.05, 0.1, 0.5, 0, map[string]int64{"Timeout:PgSleep": 990, "CPU": 10}), diagnose.UnderLoaded, "PgSleep"},
		{"sleep on a machine busy with others", step(2, 190, 1.0, 0.1, 0.5, 0.1, map[string]int64{"Timeout:PgSleep": 990, "CPU": 10}), diagnose.UnderLoaded, "other processes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := diagnose.Compute(tc.s)
			v := diagnose.Step(f, f)
			if v.Verdict != tc.want || !strings.Contains(v.Detail, tc.detail) {
				t.Errorf("verdict %s (%s), want %s (%s…)", v.Verdict, v.Detail, tc.want, tc.detail)
			}
		})
	}
}

func TestClientBound(t *testing.T) {
	s := step(4, 20000, 0.6, 4, 6, 0, map[string]int64{"Client:ClientRead": 800, "CPU": 200})
	s.Probes.Process().Generator.RunQueueWaitS = 2 // 0.2 s per second
	f := diagnose.Compute(s)
	if v := diagnose.Step(f, f); v.Verdict != diagnose.ClientBound {
		t.Errorf("verdict %s (%s), want client-bound", v.Verdict, v.Detail)
	}
}

func TestNoProbesIsUnclear(t *testing.T) {
	f := diagnose.Compute(result.Step{Clients: 1, Summary: result.Summary{TPS: 100}})
	if v := diagnose.Step(f, f); v.Verdict != diagnose.Unclear || !strings.Contains(v.Detail, "no process accounting") {
		t.Errorf("verdict %s (%s), want unclear for lack of evidence", v.Verdict, v.Detail)
	}
}

func TestKnee(t *testing.T) {
	mk := func(tps ...float64) []result.Step {
		var s []result.Step
		for i, x := range tps {
			s = append(s, result.Step{Clients: 1 << i, Complete: true, Summary: result.Summary{TPS: x}})
		}
		return s
	}
	for _, tc := range []struct {
		tps  []float64
		want int
	}{
		{[]float64{100, 190, 370, 700}, -1},
		{[]float64{100, 190, 260, 265}, 2},
		{[]float64{100, 180, 185, 270}, -1}, // a dip is not a knee when a later step gains
		{[]float64{100, 105, 103, 106}, 0},
		{[]float64{100, 190, 200, 150}, 1},
		{[]float64{100}, -1},
	} {
		if got := diagnose.Knee(mk(tc.tps...)); got != tc.want {
			t.Errorf("Knee(%v) = %d, want %d", tc.tps, got, tc.want)
		}
	}
}

// TestCutShortLeftOut: a step cut short (its window did not run to the
// end; its throughput can be anything) counts in neither the peak nor the
// knee, and the paragraph says so.
func TestCutShortLeftOut(t *testing.T) {
	f := &result.File{Steps: []result.Step{
		step(1, 10000, 0.55, 3, 2, 0.1, map[string]int64{"CPU": 600, "Client:ClientRead": 400}),
		step(2, 19000, 0.92, 7.5, 6, 6, map[string]int64{"CPU": 900, "Client:ClientRead": 1100}),
		step(4, 20000, 0.99, 9, 6, 20, map[string]int64{"CPU": 800, "Client:ClientRead": 3200}),
		step(8, 40000, 0.99, 9, 6, 40, map[string]int64{"CPU": 700, "Client:ClientRead": 7300}),
	}}
	f.Steps[3].Complete, f.Steps[3].Reason = false, "interrupted"
	if k := diagnose.Knee(f.Steps); k != 1 {
		t.Errorf("Knee = %d, want 1 (2 clients; the cut-short 8 clients left out)", k)
	}
	d := diagnose.Sweep(f)
	if d.Peak != 2 || d.Knee != 1 || d.PeakTPS != 20000 {
		t.Errorf("peak %d (%v tps) knee %d, want 2 (20000) and 1", d.Peak, d.PeakTPS, d.Knee)
	}
	for _, want := range []string{"peaks at 4 clients", "stops growing at 2 clients (4 clients: +5%)", "The step at 8 clients was cut short"} {
		if !strings.Contains(d.Paragraph, want) {
			t.Errorf("paragraph lacks %q:\n%s", want, d.Paragraph)
		}
	}
	// With no step complete every step counts: there is nothing better.
	for i := range f.Steps {
		f.Steps[i].Complete = false
	}
	if d := diagnose.Sweep(f); d.Peak != 3 || strings.Contains(d.Paragraph, "cut short") {
		t.Errorf("no step complete: peak %d, paragraph %q", d.Peak, d.Paragraph)
	}
}

func TestSweepParagraph(t *testing.T) {
	f := &result.File{Steps: []result.Step{
		step(1, 10000, 0.55, 3, 2, 0.1, map[string]int64{"CPU": 600, "Client:ClientRead": 400}),
		step(2, 18000, 0.92, 7.5, 6, 6, map[string]int64{"CPU": 900, "Client:ClientRead": 1100}),
		step(4, 26000, 0.99, 9, 6, 20, map[string]int64{"CPU": 800, "Client:ClientRead": 3200}),
		step(8, 26500, 0.99, 9, 6, 40, map[string]int64{"CPU": 700, "Client:ClientRead": 7300}),
	}}
	d := diagnose.Sweep(f)
	if d.Peak != 3 || d.Knee != 2 {
		t.Errorf("peak %d knee %d, want 3 and 2", d.Peak, d.Knee)
	}
	for _, want := range []string{"peaks at 8 clients", "2.6× 1 client", "stops growing at 4 clients", "From 2 clients the machine's CPU is saturated",
		"CPU-bound, not lock-bound", "Client:ClientRead", "At 1 client the verdict was"} {
		if !strings.Contains(d.Paragraph, want) {
			t.Errorf("paragraph lacks %q:\n%s", want, d.Paragraph)
		}
	}
}

// TestPoolerShare: a pooler accounted with --pooler-pid gets its share of
// the machine and its CPU per transaction, inside OtherShare.
func TestPoolerShare(t *testing.T) {
	s := step(4, 10000, 0.9, 8, 4, 1, map[string]int64{"CPU": 500, "Client:ClientRead": 500})
	s.Probes.Process().Pooler = &result.ProcGroup{CPUS: 2}
	f := diagnose.Compute(s)
	if !f.HasPooler || math.Abs(f.PoolerShare-0.1) > 1e-9 || math.Abs(f.PoolerCPUPerTxnUS-20) > 1e-9 {
		t.Errorf("pooler share %v, %v µs per transaction (has %v), want 0.1 and 20 µs", f.PoolerShare, f.PoolerCPUPerTxnUS, f.HasPooler)
	}
	if f.OtherShare < f.PoolerShare-1e-9 {
		t.Errorf("other share %v does not hold the pooler's %v", f.OtherShare, f.PoolerShare)
	}
	if g := diagnose.Compute(step(4, 10000, 0.9, 8, 4, 1, nil)); g.HasPooler {
		t.Error("a pooler without --pooler-pid")
	}
}

// TestSharesAddUp: the issue's contradiction ("on CPU in 100% of samples
// and waiting for the client in 98%") came from two denominators. Idle
// samples of pg_stat_activity now count as waits for the client, and the
// backends' time adds up to one whole, from the samples alone and from
// schedstat split by the samples.
func TestSharesAddUp(t *testing.T) {
	s := step(1, 5000, 0.49, 2, 1, 0.1, map[string]int64{"CPU": 10})
	s.Probes.Waits().Source, s.Probes.Waits().IdleSamples = "pg_stat_activity", 490
	f := diagnose.Compute(s)
	if math.Abs(f.CPUSample-0.02) > 1e-9 || math.Abs(f.ClassShare["Client"]-0.98) > 1e-9 {
		t.Errorf("CPU %v, Client %v of the samples: want 0.02 and 0.98", f.CPUSample, f.ClassShare["Client"])
	}
	sum := func(bt diagnose.BackendTime) float64 {
		x := bt.OnCPU + bt.CPUWait
		for _, v := range bt.Waits {
			x += v
		}
		return x
	}
	if x := sum(f.Time); math.Abs(x-1) > 1e-9 || f.Time.Schedstat {
		t.Errorf("backends' time from the samples adds up to %v (schedstat %v)", x, f.Time.Schedstat)
	}
	v := diagnose.Step(f, f)
	if v.Verdict != diagnose.UnderLoaded || !strings.Contains(v.Detail, "backends waiting for the client 98% of their time, on a CPU or waiting for one 2%") {
		t.Errorf("verdict %s (%s)", v.Verdict, v.Detail)
	}
	// With schedstat: 2 backends × 10 s, 6 s on a CPU, 2 s runnable; the
	// other 12 s split 3:1 between ClientRead and Lock:tuple.
	s = step(2, 5000, 0.8, 6, 1, 2, map[string]int64{"CPU": 400, "Client:ClientRead": 450, "Lock:tuple": 150})
	s.Probes.Process().Server.ByKind = []result.ProcGroup{{Kind: "client backend", Processes: 2, CPUS: 6, OnCPUS: 6, RunQueueWaitS: 2}}
	f = diagnose.Compute(s)
	bt := f.Time
	if !bt.Schedstat || math.Abs(sum(bt)-1) > 1e-9 || math.Abs(bt.OnCPU-0.3) > 1e-9 || math.Abs(bt.CPUWait-0.1) > 1e-9 ||
		math.Abs(bt.In("Client")-0.45) > 1e-9 || math.Abs(bt.Contention()-0.15) > 1e-9 {
		t.Errorf("backends' time %+v", bt)
	}
	if got := bt.String(); !strings.Contains(got, "on a CPU 30%, waiting for a CPU 10%, waiting for the client 45%, lock waits 15%") {
		t.Errorf("backends' time reads %q", got)
	}
}

func TestRateLimited(t *testing.T) {
	s := step(2, 198, 0.1, 0.2, 0.2, 0, map[string]int64{"CPU": 10, "Client:ClientRead": 990})
	s.Summary.LagMeanMs = 0.05
	f := diagnose.ComputeIn(&result.File{Workload: result.Workload{RateTPS: 200}}, s)
	if v := diagnose.Step(f, f); v.Verdict != diagnose.RateLimited || !strings.Contains(v.Detail, "the -R schedule's 200") {
		t.Errorf("verdict %s (%s), want rate-limited", v.Verdict, v.Detail)
	}
	// Behind the schedule: the system, not the rate, is the limit.
	s.Summary.LagMeanMs = 800
	f = diagnose.ComputeIn(&result.File{Workload: result.Workload{RateTPS: 200}}, s)
	if v := diagnose.Step(f, f); v.Verdict == diagnose.RateLimited {
		t.Errorf("a step 800 ms behind its schedule is rate-limited")
	}
}

// TestPoolerBound: a pooler whose process is on a CPU or runnable all the
// step, with backends waiting for the client, is the limit; the same
// pooler idle half the time is not.
func TestPoolerBound(t *testing.T) {
	s := step(100, 30000, 0.99, 7, 3, 40, map[string]int64{"CPU": 100, "Client:ClientRead": 900})
	s.Probes.Process().Pooler = &result.ProcGroup{Processes: 1, CPUS: 4.6, OnCPUS: 4.6, RunQueueWaitS: 5.1}
	f := diagnose.Compute(s)
	v := diagnose.Step(f, f)
	if v.Verdict != diagnose.PoolerBound || !strings.Contains(v.Detail, "never waits for work (on a CPU 46%, waiting for one 51% of the step)") {
		t.Errorf("verdict %s (%s), want pooler-bound", v.Verdict, v.Detail)
	}
	d := diagnose.Sweep(&result.File{Steps: []result.Step{s}})
	if !strings.Contains(d.Paragraph, "the pooler is the limit") || !strings.Contains(d.Paragraph, "so_reuseport") {
		t.Errorf("paragraph: %s", d.Paragraph)
	}
	s.Probes.Process().Pooler.RunQueueWaitS = 0.5
	f = diagnose.Compute(s)
	if v := diagnose.Step(f, f); v.Verdict == diagnose.PoolerBound {
		t.Errorf("a pooler idle half the step is the limit: %s", v.Detail)
	}
}

// TestKneeNamesTheVerdictChange: the knee is explained by the verdict that
// changed at it.
func TestKneeNamesTheVerdictChange(t *testing.T) {
	f := &result.File{Steps: []result.Step{
		step(1, 10000, 0.45, 2, 1, 0.1, map[string]int64{"CPU": 500, "Client:ClientRead": 500}),
		step(2, 20000, 0.99, 9, 6, 1, map[string]int64{"CPU": 500, "Client:ClientRead": 500}),
		step(4, 20500, 0.99, 9, 6, 20, map[string]int64{"CPU": 300, "Client:ClientRead": 700}),
	}}
	d := diagnose.Sweep(f)
	for _, want := range []string{"It stops growing at 2 clients (4 clients: +2%), where the verdict changes from under-loaded (1 client) to cpu-bound.",
		"From 2 to 4 clients throughput gained 1.02× per doubling of clients (efficiency lost per doubling: 49%)"} {
		if !strings.Contains(d.Paragraph, want) {
			t.Errorf("paragraph lacks %q:\n%s", want, d.Paragraph)
		}
	}
	if strings.Contains(d.Paragraph, "At 1 client the verdict was") {
		t.Errorf("the first step's verdict said twice:\n%s", d.Paragraph)
	}
	sc := diagnose.ScalingOf(f.Steps)
	if len(sc) != 3 || !math.IsNaN(sc[0].LossPerDoubling) || math.Abs(sc[1].LossPerDoubling) > 1e-9 || math.Abs(sc[2].GainPerDoubling-1.025) > 1e-9 {
		t.Errorf("scaling %+v", sc)
	}
}

// A first step held back by its own latency — one client, its backend
// waiting for it most of the time, the CPUs mostly idle — is no baseline:
// 2 clients at 14× its throughput would be 707 % efficient. Speedup and
// efficiency are against the step doing the most per client, and the
// paragraph says why; from 1 to 2 no efficiency is lost or gained.
func TestSuperlinearFirstStepIsNoBaseline(t *testing.T) {
	f := &result.File{Steps: []result.Step{
		step(1, 9300, 0.34, 1, 1, 0, map[string]int64{"CPU": 200, "Client:ClientRead": 800}),
		step(2, 131500, 0.98, 9, 6, 1, map[string]int64{"CPU": 1400, "Client:ClientRead": 600}),
		step(4, 150000, 0.99, 9, 6, 20, map[string]int64{"CPU": 1600, "Client:ClientRead": 2400}),
	}}
	diagnose.Scaling(f.Steps)
	if b := diagnose.Baseline(f.Steps); b != 1 {
		t.Fatalf("baseline %d, want 1 (2 clients)", b)
	}
	for i, want := range []struct{ speedup, eff float64 }{{9300.0 / 131500, 9300.0 / 131500 * 2}, {1, 1}, {150000.0 / 131500, 150000.0 / 131500 / 2}} {
		s := f.Steps[i].Summary
		if math.Abs(s.Speedup-want.speedup) > 1e-9 || math.Abs(s.Efficiency-want.eff) > 1e-9 || s.Efficiency > 1 {
			t.Errorf("step %d: speedup %v efficiency %v, want %v and %v", i, s.Speedup, s.Efficiency, want.speedup, want.eff)
		}
	}
	d := diagnose.Sweep(f)
	if d.Baseline != 1 || math.Abs(d.PeakSpeedup-150000.0/131500) > 1e-9 {
		t.Errorf("diagnosis baseline %d, peak speedup %v", d.Baseline, d.PeakSpeedup)
	}
	for _, want := range []string{"1.1× 2 clients", "Speedup and efficiency are against 2 clients, not 1 client: 2 clients did 7.1× as much per client (707% efficiency against 1 client)",
		"because 1 client was latency-bound: its backends waited for the client 80% of their time and the CPUs were 66% idle"} {
		if !strings.Contains(d.Paragraph, want) {
			t.Errorf("paragraph lacks %q:\n%s", want, d.Paragraph)
		}
	}
	sc := diagnose.ScalingOf(f.Steps)
	if sc[1].Efficiency != 1 || !math.IsNaN(sc[1].LossPerDoubling) || math.Abs(sc[1].GainPerDoubling-131500.0/9300) > 1e-9 || math.IsNaN(sc[2].LossPerDoubling) {
		t.Errorf("scaling: %+v", sc)
	}
	// A first step within SuperlinearGain of the best per client stays
	// the baseline: noise is not superlinear scaling.
	f.Steps[1].Summary.TPS = 2 * 9300 * 1.09
	f.Steps[2].Summary.TPS = 4 * 9300 * 1.05
	if b := diagnose.Baseline(f.Steps); b != 0 {
		t.Errorf("baseline %d at 109%% efficiency, want the first step", b)
	}
}
