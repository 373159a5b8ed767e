// Package diagnose explains a sweep: for every step a bottleneck verdict
// with its evidence (rate-limited, pooler-bound, cpu-bound, lwlock-bound,
// lock-bound, io-bound, client-bound, under-loaded or unclear), where the
// backends' time went, the knee where throughput stops growing and the
// verdict that changed there, the peak, the figures a decision rule reads,
// and a paragraph in plain English; and, for an A/B comparison, why a
// candidate is slower or faster (Differential). It reads only result types,
// so a result file can be diagnosed again later, anywhere.
package diagnose

import (
	"fmt"
	"sort"

	"github.com/pgscale/pgscale/internal/result"
)

// Figures are the per-step quantities the verdicts and the reports use,
// derived from a step's summary and probes. A field whose evidence is
// missing is NaN-free: the matching Has flag is false instead.
type Figures struct {
	Clients      int
	TPS          float64
	Transactions int64
	ElapsedS     float64 // the probes' window
	CPUs         int

	// Machine CPU, as shares of all cores (0..1).
	HasHost        bool
	MachineBusy    float64
	HasServer      bool
	ServerShare    float64 // the server's processes, without the probes' backends
	GeneratorShare float64 // pgscale, without the probes' in-process threads
	ProbeShare     float64 // every probe, in pgscale, perf and the server
	OtherShare     float64 // the rest of the machine's busy time
	// HasPooler is true when a pooler was accounted (a pgbouncer target,
	// or --pooler-pid); PoolerShare is its part of the machine, counted
	// inside OtherShare (Elsewhere leaves it out), and PoolerCPUPerTxnUS
	// its CPU per transaction, PoolerCtxPerTxn its processes' context
	// switches per transaction (0 where they were not kept).
	HasPooler         bool
	PoolerShare       float64
	PoolerCPUPerTxnUS float64
	PoolerCtxPerTxn   float64
	// PoolerBusy is the share of the step in which the pooler's process
	// was on a CPU or runnable and waiting for one (schedstat, per
	// process: pgbouncer runs one thread), when HasPoolerBusy. Near 1 its
	// thread never waits for work: every transaction queues in it.
	HasPoolerBusy bool
	PoolerBusy    float64
	PoolerOnCPU   float64 // the part of PoolerBusy on a CPU
	// RunQueuePerCore is the average number of runnable tasks (server and
	// generator) waiting for a CPU, per core.
	RunQueuePerCore float64
	// GeneratorRunQueue is the generator's run-queue wait per second of
	// wall time (0.1 = its threads waited 10% of the time in all).
	GeneratorRunQueue float64
	PSI               *result.PSI

	// RateTPS is the workload's -R schedule over all clients (0: none);
	// Skipped and LagMeanMs say how the clients kept to it. Compute
	// leaves RateTPS 0; ComputeIn reads it from the file.
	RateTPS   float64
	Skipped   int64
	LagMeanMs float64

	// Per transaction. ServerUserPerTxnUS and ServerSysPerTxnUS split the
	// server's CPU into user and kernel time when HasServerSplit. With an
	// A/B run's slices (step.Costs) there are no probes: HasServer and
	// the per-transaction server figures come from the slices' costs.
	HasServerSplit       bool
	ServerUserPerTxnUS   float64
	ServerSysPerTxnUS    float64
	ServerCPUPerTxnUS    float64
	GeneratorCPUPerTxnUS float64
	CtxPerTxn            float64 // context switches, server and generator
	ServerCtxPerTxn      float64

	// Wait samples of the client backends, as shares of every sample
	// (idle sessions included, counted as Client:ClientRead as
	// pg_wait_sampling counts them), so that CPUSample and the classes add
	// up to 1.
	HasWaits   bool
	WaitSource string
	Samples    int64   // every sample, idle included
	CPUSample  float64 // active with no wait event: on a CPU or runnable
	ClassShare map[string]float64
	TopEvents  []EventShare

	// Time is where the client backends' time went (time.go).
	Time BackendTime

	// Locks.
	HasLocks bool
	Locks    *result.Locks

	// Statements.
	HasStatements  bool
	ServerMsPerTxn float64
	// NetworkMs is the client-observed latency less the server's time per
	// transaction and, when PoolWaitMs is known, less the pool's wait:
	// the round trips through the network, a pooler and the client.
	NetworkMs float64
	LatencyMs float64
	// PoolWaitMs is the time a transaction waited in the pooler for a
	// server connection, as the pooler counted it (Pool.WaitPerTxnUS),
	// when HasPoolWait: a part of the latency that is neither the server's
	// nor the network's.
	HasPoolWait bool
	PoolWaitMs  float64

	// Outages are the stretches in which the clients lost the server (a
	// restart): the step's figures then describe part of it only.
	Outages []result.Outage
	// Unavailable are the probes that could not run, and why, as the
	// reports say it: one that failed with the pooler or server an outage
	// lost refers to the outage (unavailable.go).
	Unavailable []result.ProbeUnavailable

	// Pool is what the pooler's admin console said (pool.go).
	Pool PoolFigures

	// Failed says what failed when the step completed no transaction
	// (failed.go): there is nothing to judge a bottleneck on. Empty when
	// some transaction completed.
	Failed string
	// Split divides the server's CPU (or counted instructions) per
	// transaction by object and function, from the step's profile
	// (cpusplit.go); nil without one.
	Split *CPUSplit
}

// EventShare is one wait event and its share of the samples.
type EventShare struct {
	Name  string // Type:Event
	Type  string
	Share float64
}

// Elsewhere is the machine's busy time outside the system under test:
// OtherShare without the pooler, which a pooled target runs as part of it.
func (f Figures) Elsewhere() float64 { return max(f.OtherShare-f.PoolerShare, 0) }

// Crowded says other processes held the machine during the step: it was
// saturated with a run queue, and they used more of it than the system
// under test and the load generator (with the probes). The backends' wait
// for a CPU is then mostly the others' queue, not a sign that the
// workload itself is short of CPU.
func (f Figures) Crowded() bool {
	own := f.ServerShare + f.PoolerShare + f.GeneratorShare + f.ProbeShare
	return f.HasHost && f.MachineBusy >= CPUSaturated && f.RunQueuePerCore >= RunQueueSaturated && f.Elsewhere() > own
}

// ComputeIn derives a step's figures with what its file says of the whole
// run: the -R schedule.
func ComputeIn(file *result.File, s result.Step) Figures {
	f := Compute(s)
	f.RateTPS = file.Workload.RateTPS
	f.Pool.Setting, f.Pool.Size = poolSetting(file.Target.Pooler)
	return f
}

// Compute derives a step's figures.
func Compute(s result.Step) Figures {
	f := Figures{Clients: s.Clients, TPS: s.Summary.TPS, Transactions: s.Summary.Transactions,
		ElapsedS: s.ElapsedS, LatencyMs: s.Summary.Latency.MeanMs, ClassShare: map[string]float64{},
		Skipped: s.Summary.Skipped, LagMeanMs: s.Summary.LagMeanMs, Outages: s.Outages, Failed: whatFailed(s), Unavailable: unavailable(s)}
	p := s.Probes
	if p == nil {
		if c := s.Costs; c != nil && s.Summary.Transactions > 0 {
			n := float64(s.Summary.Transactions)
			f.HasServer, f.HasServerSplit = true, true
			f.ServerCPUPerTxnUS = c.ServerCPUS * 1e6 / n
			f.ServerUserPerTxnUS, f.ServerSysPerTxnUS = c.ServerUserS*1e6/n, c.ServerSysS*1e6/n
			f.ServerCtxPerTxn = float64(c.ServerCtx) / n
			f.CtxPerTxn = f.ServerCtxPerTxn
			if c.PoolerCPUS != nil {
				f.HasPooler = true
				f.PoolerCPUPerTxnUS = *c.PoolerCPUS * 1e6 / n
			}
			if c.PoolerCtx != nil {
				f.PoolerCtxPerTxn = float64(*c.PoolerCtx) / n
			}
		}
		return f
	}
	if p.ElapsedS > 0 {
		f.ElapsedS = p.ElapsedS
	}
	// The probes' window is a little shorter than the measured one (they
	// take their last snapshots before the clients disconnect): per
	// transaction figures divide by the transactions of their own window.
	txns := f.TPS * f.ElapsedS
	perTxn := func(x float64) float64 {
		if txns <= 0 {
			return 0
		}
		return x / txns
	}
	var probeLocal, probeInProc, probeServer float64
	for _, c := range p.Costs {
		probeLocal += c.LocalCPUS
		probeInProc += c.InProcessS
		probeServer += c.ServerCPUS
	}
	if ps := p.Process(); ps != nil && ps.CPUs > 0 && f.ElapsedS > 0 {
		f.CPUs = ps.CPUs
		machine := f.ElapsedS * float64(ps.CPUs)
		f.HasHost = ps.Host.BusyShare > 0
		f.MachineBusy = ps.Host.BusyShare
		f.PSI = ps.Host.PSI
		gen := max(ps.Generator.CPUS-probeInProc, 0)
		f.GeneratorShare = gen / machine
		f.GeneratorCPUPerTxnUS = perTxn(gen * 1e6)
		f.GeneratorRunQueue = ps.Generator.RunQueueWaitS / f.ElapsedS
		rq := ps.Generator.RunQueueWaitS
		ctx := ps.Generator.VoluntaryCtx + ps.Generator.InvoluntaryCtx
		f.ProbeShare = (probeLocal + probeServer) / machine
		if ps.Server != nil {
			f.HasServer = true
			srv := max(ps.Server.CPUS-probeServer, 0)
			f.ServerShare = srv / machine
			f.ServerCPUPerTxnUS = perTxn(srv * 1e6)
			if ps.Server.UserS+ps.Server.SysS > 0 {
				f.HasServerSplit = true
				f.ServerUserPerTxnUS = perTxn(ps.Server.UserS * 1e6)
				f.ServerSysPerTxnUS = perTxn(ps.Server.SysS * 1e6)
			}
			rq += ps.Server.RunQueueWaitS
			sctx := ps.Server.VoluntaryCtx + ps.Server.InvoluntaryCtx
			ctx += sctx
			f.ServerCtxPerTxn = perTxn(float64(sctx))
		}
		if ps.Pooler != nil {
			f.HasPooler = true
			f.PoolerShare = ps.Pooler.CPUS / machine
			f.PoolerCPUPerTxnUS = perTxn(ps.Pooler.CPUS * 1e6)
			f.PoolerCtxPerTxn = perTxn(float64(ps.Pooler.VoluntaryCtx + ps.Pooler.InvoluntaryCtx))
			if busy := ps.Pooler.OnCPUS + ps.Pooler.RunQueueWaitS; busy > 0 {
				f.HasPoolerBusy = true
				n := f.ElapsedS * float64(max(ps.Pooler.Processes, 1))
				f.PoolerBusy, f.PoolerOnCPU = busy/n, ps.Pooler.OnCPUS/n
			}
		}
		f.CtxPerTxn = perTxn(float64(ctx))
		f.RunQueuePerCore = rq / f.ElapsedS / float64(ps.CPUs)
		if f.HasHost {
			f.OtherShare = max(f.MachineBusy-f.ServerShare-f.GeneratorShare-f.ProbeShare, 0)
		}
	}
	if w := p.Waits(); w != nil && w.Samples+w.IdleSamples > 0 {
		f.HasWaits = true
		f.WaitSource = w.Source
		f.Samples = w.Samples + w.IdleSamples
		n := float64(f.Samples)
		f.CPUSample = float64(w.CPUSamples) / n
		idle := w.IdleSamples
		for _, e := range w.Events {
			k := e.Samples
			if e.Type == "Client" && e.Event == "ClientRead" {
				k, idle = k+idle, 0
			}
			f.ClassShare[e.Type] += float64(k) / n
			f.TopEvents = append(f.TopEvents, EventShare{Name: e.Type + ":" + e.Event, Type: e.Type, Share: float64(k) / n})
		}
		if idle > 0 {
			f.ClassShare["Client"] += float64(idle) / n
			f.TopEvents = append(f.TopEvents, EventShare{Name: "Client:ClientRead", Type: "Client", Share: float64(idle) / n})
		}
		if w.CPUSamples > 0 {
			f.TopEvents = append(f.TopEvents, EventShare{Name: "CPU", Share: f.CPUSample})
		}
		sort.SliceStable(f.TopEvents, func(i, j int) bool { return f.TopEvents[i].Share > f.TopEvents[j].Share })
	}
	f.Time = backendTime(s, f)
	f.Pool = poolFigures(p.Pooler())
	if p.Locks() != nil && p.Locks().Snapshots > 0 {
		f.HasLocks, f.Locks = true, p.Locks()
	}
	if st := p.Statements(); st != nil && st.Calls > 0 && txns > 0 {
		f.HasStatements = true
		f.ServerMsPerTxn = st.ServerMs / txns
		f.NetworkMs = f.LatencyMs - f.ServerMsPerTxn
		if f.Pool.HasWaitPerTxn && f.Pool.WaitPerTxnUS > 0 {
			// Measured by the pooler over nearly the same window: it may
			// exceed what is left of the latency by a little.
			f.HasPoolWait, f.PoolWaitMs = true, f.Pool.WaitPerTxnUS/1000
			f.NetworkMs = max(f.NetworkMs-f.PoolWaitMs, 0)
		}
	}
	f.Split = cpuSplit(p, f)
	return f
}

// LatencySplit says where a transaction's client-observed latency went
// beyond the server's time: "network + client 0.181 ms", or with clients
// that waited in a pool for a server connection "pool wait 0.289 ms,
// network + client 0.181 ms".
func (f Figures) LatencySplit() string {
	if f.HasPoolWait {
		return fmt.Sprintf("pool wait %.3f ms, network + client %.3f ms", f.PoolWaitMs, f.NetworkMs)
	}
	return fmt.Sprintf("network + client %.3f ms", f.NetworkMs)
}

// event returns one wait event's share of the samples.
func (f Figures) event(name string) (float64, bool) {
	for _, e := range f.TopEvents {
		if e.Name == name {
			return e.Share, true
		}
	}
	return 0, false
}

// topOf returns the most sampled event of a wait class.
func (f Figures) topOf(class string) (EventShare, bool) {
	for _, e := range f.TopEvents {
		if e.Type == class {
			return e, true
		}
	}
	return EventShare{}, false
}
