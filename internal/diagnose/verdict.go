package diagnose

import (
	"fmt"
	"strings"

	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/result"
)

// Verdicts, checked in this order.
const (
	RateLimited = "rate-limited"
	PoolerBound = "pooler-bound"
	// PoolBound: the clients spent most of their time waiting for one of
	// the pooler's server connections while the server had CPU to spare
	// (pool.go): the pool's size set the throughput.
	PoolBound   = "pool-bound"
	CPUBound    = "cpu-bound"
	LWLockBound = "lwlock-bound"
	LockBound   = "lock-bound"
	IOBound     = "io-bound"
	ClientBound = "client-bound"
	UnderLoaded = "under-loaded"
	Unclear     = "unclear"
	// Failed: the step completed no transaction (failed.go). No
	// bottleneck is judged on it: the detail says what failed instead.
	Failed = "failed"
)

// Thresholds. Each says what it separates and why it sits where it does.
const (
	// CPUSaturated is the machine's busy share at or above which its CPU
	// counts as saturated, whether or not tasks queue for it: with as
	// many clients as cores each core has its one runnable task and no
	// queue, and the machine is still CPU-bound. Not 1.0: /proc/stat
	// keeps some idle ticks even when every core is taken (interrupt
	// gaps, wake-up latency), and on a 2-core machine one idle tick in
	// ten is already 5 % of a core.
	CPUSaturated = 0.90
	// RunQueueSaturated is the average number of runnable tasks waiting
	// for a CPU, per core, above which a saturated machine has a queue
	// (more clients than cores: each added client only waits longer), and
	// below which a machine that is not saturated has room. A quarter of
	// a task per core is a queue that is there most of the time.
	RunQueueSaturated = 0.25
	// WaitDominant is the share of the backends' time one kind of wait
	// (LWLock, Lock, IO) needs to be the bottleneck. A quarter of all
	// backend time spent on one kind of wait is more than any healthy
	// workload shows (a few per cent), and leaves room for time on CPU
	// and waits for the client in the rest.
	WaitDominant = 0.25
	// SleepDominant is the share of the backends' time in the workload's
	// own sleeps (Timeout waits: pg_sleep) above which a saturated
	// machine is not this workload's limit: backends that sleep half
	// their time are not short of CPU, whatever fills the machine.
	SleepDominant = 0.50
	// IOPressure is the PSI io "some" share above which I/O stalls are
	// the bottleneck even when wait samples are thin (fsync in the
	// WAL writer, a checkpoint).
	IOPressure = 0.30
	// ClientDominant is the share of the backends' time spent waiting
	// for the client above which whatever sits between the backends and
	// the client's next query (the load generator, a pooler) is suspect.
	ClientDominant = 0.50
	// GeneratorDelayed is the load generator's run-queue wait per second
	// above which its threads are short of CPU: 5 % of the wall time in
	// all is more than a lightly loaded machine shows (under 1 %).
	GeneratorDelayed = 0.05
	// GeneratorSaturated is the share of the cores the load generator
	// can use (one per client, at most the machine's) that it must use to
	// be saturated on its own, its machine not full.
	GeneratorSaturated = 0.90
	// PoolerSaturated is the share of the step in which the pooler's
	// process must be on a CPU or runnable — never blocked waiting for
	// work — to be the limit. pgbouncer runs one thread: once it never
	// sleeps every transaction waits its turn in it, and more clients
	// only lengthen the queue. On a dedicated machine that is one whole
	// core; on a shared one it may be runnable part of that time.
	PoolerSaturated = 0.90
	// Underloaded is the machine's busy share below which it has room:
	// with no dominant wait, throughput is then bound by latency (sleeps,
	// network round trips), and more clients would go faster.
	Underloaded = 0.70
	// LockMajority is the share of the backends' time in heavyweight
	// lock waits that overrides CPU saturation, counted of the time they
	// were not runnable in a run queue (a backend woken by the lock's
	// release still shows the lock in its wait samples until it runs, and
	// an overloaded machine keeps it waiting there). Lock waits under CPU
	// pressure are often a symptom (holders descheduled), so CPU evidence
	// comes first; but when most of the backends' time is spent queued
	// behind one another on a row or a table, a faster CPU would not
	// help: the queue is serial. A hot-row UPDATE at 8 clients shows
	// 60-75 % here, with or without other load on the machine.
	LockMajority = 0.50
	// RateKept is the share of the -R schedule a step must reach to be
	// limited by it; below, the system could not keep up. A Poisson
	// schedule of 400 transactions (200 tps for 2 s) varies by 5 % (one
	// standard deviation), so 90 % is two of them.
	RateKept = 0.90
	// RateLagMs is the mean schedule lag, beyond the mean latency, above
	// which clients fell behind the schedule: a system that cannot keep
	// up lags more and more over the step (hundreds of ms), one that
	// keeps up lags by a fraction of a millisecond.
	RateLagMs = 10.0
)

// Step gives one step's verdict. first holds the first step's figures, to
// say how run-queue wait and CPU grew; it may be the step itself.
func Step(f, first Figures) result.StepVerdict {
	v := result.StepVerdict{Clients: f.Clients}
	var ev []string
	if f.RateTPS > 0 {
		ev = append(ev, fmt.Sprintf("rate: %.1f tps of the %g asked for with -R (%s), schedule lag %.3f ms on average, %d skipped",
			f.TPS, f.RateTPS, prose.Share(f.TPS/f.RateTPS), f.LagMeanMs, f.Skipped))
	}
	if f.HasHost {
		ev = append(ev, cpuEvidence(f))
		ev = append(ev, fmt.Sprintf("run queue: %.2f runnable tasks waiting per core (%.2f at %s)",
			f.RunQueuePerCore, first.RunQueuePerCore, prose.Count(first.Clients, "client")))
	}
	if f.HasPoolerBusy {
		ev = append(ev, fmt.Sprintf("pooler: its process on a CPU %s and waiting for one %s of the step (%.2f cores)",
			prose.Share(f.PoolerOnCPU), prose.Share(f.PoolerBusy-f.PoolerOnCPU), f.PoolerShare*float64(f.CPUs)))
	}
	if f.Time.Known {
		ev = append(ev, f.Time.String())
	}
	if f.HasWaits {
		ev = append(ev, fmt.Sprintf("wait samples (%d, of which these shares): %s", f.Samples, topEvents(f, 5)))
	}
	if f.HasLocks && f.Locks.MaxSlowWeak > 0 {
		ev = append(ev, lockEvidence(f.Locks))
	}
	if f.HasServer && f.Transactions > 0 {
		ev = append(ev, fmt.Sprintf("per transaction: server cpu %.1f µs, client cpu %.1f µs, %.1f context switches",
			f.ServerCPUPerTxnUS, f.GeneratorCPUPerTxnUS, f.CtxPerTxn))
	}
	if f.HasStatements {
		ev = append(ev, fmt.Sprintf("server time %.3f ms per transaction of %.3f ms latency: %s",
			f.ServerMsPerTxn, f.LatencyMs, f.LatencySplit()))
	}
	if line := poolEvidence(f); line != "" {
		ev = append(ev, line)
	}
	for _, o := range f.Outages {
		ev = append(ev, OutageLine(o))
	}
	v.Evidence = ev
	t := f.Time
	lw, lk, io := t.In("LWLock"), t.In("Lock"), t.In("IO")
	switch {
	case len(f.Outages) > 0:
		// No bottleneck is judged on a step the server left: its
		// figures mix before, without and after it, and a missing
		// server is nobody's load.
		v.Verdict = Unclear
		v.Detail = outageDetail(f.Outages)
	case f.Failed != "":
		v.Verdict = Failed
		v.Detail = f.Failed
	case rateKept(f):
		v.Verdict = RateLimited
		v.Detail = fmt.Sprintf("%.0f tps, the -R schedule's %g (%s of it), with the machine %s busy", f.TPS, f.RateTPS, prose.Share(f.TPS/f.RateTPS), prose.Share(f.MachineBusy))
		if !f.HasHost {
			v.Detail = fmt.Sprintf("%.0f tps, the -R schedule's %g (%s of it)", f.TPS, f.RateTPS, prose.Share(f.TPS/f.RateTPS))
		}
	case poolerBound(f):
		v.Verdict = PoolerBound
		v.Detail = fmt.Sprintf("the pooler's process never waits for work (on a CPU %s, waiting for one %s of the step) while backends wait for the client %s of their time",
			prose.Share(f.PoolerOnCPU), prose.Share(f.PoolerBusy-f.PoolerOnCPU), prose.Share(t.In("Client")))
	case t.Known && lk >= LockMajority*(1-t.CPUWait):
		v.Verdict = LockBound
		v.Detail = lockDetail(f)
	case poolBound(f):
		v.Verdict = PoolBound
		v.Detail = poolDetail(f)
	case cpuSaturated(f) && whose(f) == "the load generator":
		v.Verdict = ClientBound
		v.Detail = generatorDetail(f)
	case cpuSaturated(f):
		v.Verdict = CPUBound
		v.Detail = cpuDetail(f)
	case t.Known && lw >= WaitDominant && lw >= lk && lw >= io:
		v.Verdict = LWLockBound
		top, _, _ := t.TopIn("LWLock")
		v.Detail = strings.TrimPrefix(top, "LWLock:")
	case t.Known && lk >= WaitDominant && lk >= io:
		v.Verdict = LockBound
		v.Detail = lockDetail(f)
	case (t.Known && io >= WaitDominant) || (f.PSI != nil && f.PSI.IOSome >= IOPressure):
		v.Verdict = IOBound
		if top, _, ok := t.TopIn("IO"); ok {
			v.Detail = strings.TrimPrefix(top, "IO:")
		} else {
			v.Detail = fmt.Sprintf("I/O pressure %s of the time", prose.Share(f.PSI.IOSome))
		}
	case t.Known && f.HasHost && t.In("Client") >= ClientDominant && f.GeneratorRunQueue >= GeneratorDelayed:
		v.Verdict = ClientBound
		v.Detail = fmt.Sprintf("backends wait for the client %s of their time while the load generator's threads wait %.0f ms per second for a CPU",
			prose.Share(t.In("Client")), f.GeneratorRunQueue*1000)
	case generatorFull(f):
		v.Verdict = ClientBound
		v.Detail = generatorDetail(f)
	case underLoaded(f):
		v.Verdict = UnderLoaded
		v.Detail = underDetail(f)
	default:
		v.Verdict = Unclear
		v.Detail = unclearWhy(f)
	}
	if f.waitShare() >= PoolWaitDominant && f.filling() {
		v.Detail += fmt.Sprintf("; %.1f of %s waited for a server connection while the pooler had opened %.0f of its %.0f (%s): it was still opening them",
			f.Pool.Waiting, prose.Count(f.Clients, "client"), f.Pool.ServersMost, f.Pool.Size, f.Pool.Setting)
	} else if v.Verdict == CPUBound && f.waitShare() >= PoolWaitDominant {
		v.Detail += fmt.Sprintf("; %.1f of %s waited for a server connection, which a larger pool would not help on a saturated machine",
			f.Pool.Waiting, prose.Count(f.Clients, "client"))
	}
	if f.HasLocks && f.Locks.Exhausted > 0 {
		v.Detail += fmt.Sprintf("; fast-path slots exhausted: up to %d relation locks per backend beyond its %d slots, in the shared lock table", f.Locks.MaxSlowWeak, f.Locks.FastPathSlots)
		if lm := t.Events["LWLock:LockManager"]; lm > 0 && v.Verdict != LWLockBound {
			v.Detail += fmt.Sprintf(" (LWLock:LockManager %s of the backends' time)", prose.Share(lm))
		}
	}
	return v
}

// rateKept says whether a step kept to its -R schedule: then the schedule,
// not the system, set its throughput.
func rateKept(f Figures) bool {
	if f.RateTPS <= 0 || f.TPS < RateKept*f.RateTPS || f.LagMeanMs > f.LatencyMs+RateLagMs {
		return false
	}
	return f.Transactions == 0 || float64(f.Skipped) <= 0.01*float64(f.Transactions)
}

// poolerBound says whether the pooler is the limit: its process never
// waits for work while the backends mostly wait for the next query it
// brings them (of the time they are not queued for a CPU, as for
// LockMajority) — and longer than they wait for a CPU: backends queued for
// a CPU most of the time say the machine, not the pooler, is short.
func poolerBound(f Figures) bool {
	t := f.Time
	return f.HasPoolerBusy && f.PoolerBusy >= PoolerSaturated && t.Known && t.In("Client") >= ClientDominant*(1-t.CPUWait) && t.In("Client") >= t.CPUWait
}

// cpuSaturated says whether the machine's CPU is saturated for the system
// under test: busy, and not by other processes alone while the server,
// pooler and load generator use under Underloaded of it and do not queue
// for a CPU (a sleep-bound workload on a machine busy with something else
// is not CPU-bound).
func cpuSaturated(f Figures) bool {
	if !f.HasHost || f.MachineBusy < CPUSaturated {
		return false
	}
	if f.Time.Known && f.Time.In("Timeout") >= SleepDominant {
		// Other processes filled the machine while the backends slept
		// (a 10 ms pg_sleep per transaction was called cpu-bound with
		// other processes at 99 % of it).
		return false
	}
	return !f.HasServer || f.MachineBusy-f.Elsewhere() >= Underloaded || f.RunQueuePerCore >= RunQueueSaturated
}

// whose names the largest user of the machine's CPU: the server, the
// pooler, the load generator or other processes (the load generator when
// the server is not in view: the machine is then the generator's).
func whose(f Figures) string {
	if !f.HasServer {
		return "the load generator"
	}
	who, share := "the server", f.ServerShare
	for _, c := range []struct {
		name  string
		share float64
	}{{"the load generator", f.GeneratorShare}, {"the pooler", f.PoolerShare}, {"other processes on the machine", f.Elsewhere()}} {
		if c.share > share {
			who, share = c.name, c.share
		}
	}
	return who
}

// generatorFull says whether the load generator uses nearly every core it
// can (one per client, at most the machine's) on a machine that is not
// full: it is the limit on its own.
func generatorFull(f Figures) bool {
	if !f.HasHost || f.CPUs == 0 || f.Clients == 0 {
		return false
	}
	cores := float64(min(f.Clients, f.CPUs))
	return f.GeneratorShare*float64(f.CPUs) >= GeneratorSaturated*cores
}

func generatorDetail(f Figures) string {
	if !f.HasServer {
		return fmt.Sprintf("the load generator's machine is saturated (%s busy, the load generator %s of it; the server is not in view)",
			prose.Share(f.MachineBusy), prose.Share(f.GeneratorShare))
	}
	return fmt.Sprintf("the load generator is saturated: it takes %s of the machine's CPU (%.2f cores), the server %s",
		prose.Share(f.GeneratorShare), f.GeneratorShare*float64(f.CPUs), prose.Share(f.ServerShare))
}

// underLoaded says whether the workload leaves the machine room: its own
// processes (server, generator, probes) use under Underloaded of it and
// barely queue for a CPU. Other processes' load does not count against
// it: a sleep-bound workload stays latency-bound on a busy machine. With
// the server out of sight, its backends must be on CPU in under half of
// their time.
func underLoaded(f Figures) bool {
	if !f.HasHost {
		return false
	}
	if f.HasServer && f.Time.Known && f.Time.In("Timeout") >= SleepDominant && f.MachineBusy-f.Elsewhere() < Underloaded {
		// Backends that sleep most of their time, with the machine's
		// queue other processes': more clients would still go faster.
		return true
	}
	if f.RunQueuePerCore >= RunQueueSaturated {
		return false
	}
	if !f.HasServer {
		return f.MachineBusy < Underloaded && f.Time.Known && f.Time.OnCPU < 0.5
	}
	return f.MachineBusy < Underloaded || f.MachineBusy-f.Elsewhere() < Underloaded
}

// poolerPart says the pooler's share where a sentence lists the machine's
// parts: ", pooler 21%", or nothing without a pooler.
func (f Figures) poolerPart() string {
	if !f.HasPooler {
		return ""
	}
	return ", pooler " + prose.Share(f.PoolerShare)
}

func cpuEvidence(f Figures) string {
	s := fmt.Sprintf("machine CPU %s busy of %d cores; of the machine", prose.Share(f.MachineBusy), f.CPUs)
	if f.HasServer {
		s += fmt.Sprintf(": server %s%s, load generator %s, probes %s, other %s", prose.Share(f.ServerShare), f.poolerPart(), prose.Share(f.GeneratorShare), prose.Share(f.ProbeShare), prose.Share(f.Elsewhere()))
	} else {
		s += fmt.Sprintf(": load generator %s, probes %s; the server's processes are not visible here", prose.Share(f.GeneratorShare), prose.Share(f.ProbeShare))
	}
	return s
}

// cpuDetail says whose CPU saturates the machine, and whether tasks queue
// for it.
func cpuDetail(f Figures) string {
	who := whose(f)
	share := map[string]float64{"the server": f.ServerShare, "the pooler": f.PoolerShare, "other processes on the machine": f.Elsewhere()}[who]
	d := fmt.Sprintf("mostly %s (%s of the machine)", who, prose.Share(share))
	if f.RunQueuePerCore < RunQueueSaturated {
		d += fmt.Sprintf(", saturated without a queue (%.2f tasks waiting per core)", f.RunQueuePerCore)
	}
	return d
}

// lockDetail names the heavyweight lock type the backends wait on most.
func lockDetail(f Figures) string {
	top, _, _ := f.Time.TopIn("Lock")
	switch ev := strings.TrimPrefix(top, "Lock:"); ev {
	case "transactionid", "tuple":
		return ev + ": hot rows, updated by many clients at once"
	case "relation":
		return "relation: DDL or strong table locks"
	case "":
		return "heavyweight locks"
	default:
		return ev
	}
}

func underDetail(f Figures) string {
	var parts []string
	if f.HasServer && f.Elsewhere() > 0.25 {
		parts = append(parts, fmt.Sprintf("server and load generator use %s of the machine (other processes %s)",
			prose.Share(f.ServerShare+f.GeneratorShare), prose.Share(f.Elsewhere())))
	} else {
		parts = append(parts, fmt.Sprintf("machine CPU %s busy", prose.Share(f.MachineBusy)))
	}
	if t := f.Time; t.Known {
		cl, sh := "", 0.0
		for c, x := range t.Waits {
			if x > sh || (x == sh && c < cl) {
				cl, sh = c, x
			}
		}
		busy := fmt.Sprintf("on a CPU or waiting for one %s", prose.Share(t.OnCPU))
		if t.Schedstat {
			busy = fmt.Sprintf("on a CPU %s and waiting for one %s", prose.Share(t.OnCPU), prose.Share(t.CPUWait))
		}
		switch {
		case cl == "" || t.OnCPU+t.CPUWait >= sh:
			parts = append(parts, fmt.Sprintf("backends %s of their time", busy))
		case cl == "Client":
			parts = append(parts, fmt.Sprintf("backends waiting for the client %s of their time, %s", prose.Share(sh), busy))
		default:
			ev, esh, _ := t.TopIn(cl)
			parts = append(parts, fmt.Sprintf("backends mostly in %s (%s of their time)", ev, prose.Share(esh)))
		}
	}
	return strings.Join(parts, ", ") + ": throughput is bound by latency"
}

func unclearWhy(f Figures) string {
	switch {
	case !f.HasHost && !f.HasWaits:
		return "no process accounting and no wait samples"
	case !f.HasHost:
		return "no process accounting, so CPU saturation cannot be judged"
	case !f.HasWaits:
		return fmt.Sprintf("the machine is %s busy and there are no wait samples", prose.Share(f.MachineBusy))
	}
	return fmt.Sprintf("the machine is %s busy, not saturated, %.2f tasks wait for a CPU per core, and no wait class reaches %s of the backends' time",
		prose.Share(f.MachineBusy), f.RunQueuePerCore, prose.Share(WaitDominant))
}

func topEvents(f Figures, n int) string {
	var parts []string
	for i, e := range f.TopEvents {
		if i == n {
			break
		}
		parts = append(parts, fmt.Sprintf("%s %s", e.Name, prose.Share(e.Share)))
	}
	if len(parts) == 0 {
		return "none"
	}
	s := strings.Join(parts, ", ")
	if f.WaitSource != "" {
		s += " (" + f.WaitSource + ")"
	}
	return s
}

func lockEvidence(l *result.Locks) string {
	s := fmt.Sprintf("locks: up to %d weak relation locks per backend outside the fast path (mean %.1f), %d fast-path slots",
		l.MaxSlowWeak, l.MeanSlowWeak, l.FastPathSlots)
	if l.Exhausted > 0 {
		s += ", fast-path slots exhausted"
	}
	return s
}

// OutageLine says what an outage was: "server restart at 5.1 s (postmaster
// 18781, then 18950): 2.2 s without a server, 2 clients connected again
// by 7.3 s, 2 transactions failed".
func OutageLine(o result.Outage) string {
	if o.Pooler != "" {
		s := fmt.Sprintf("pooler lost at %.1f s: %s, which ended the step", o.AtS, o.Pooler)
		if o.AllBack {
			s += fmt.Sprintf("; %s connected again by %.1f s", prose.Count(o.Clients, "client"), o.AtS+o.BackS)
		} else if o.Clients == 1 {
			s += "; 1 client lost its connection"
		} else {
			s += fmt.Sprintf("; %d clients lost their connections", o.Clients)
		}
		return s + fmt.Sprintf(", %d %s failed", o.Failed, plural(o.Failed, "transaction"))
	}
	what := "server lost"
	if o.Restarted() {
		what = fmt.Sprintf("server restart (postmaster %d, then %d)", o.PostmasterBefore, o.PostmasterAfter)
	}
	s := fmt.Sprintf("%s at %.1f s: %.1f s without a server", what, o.AtS, o.ServerS)
	if o.AllBack {
		s += fmt.Sprintf(", %s connected again by %.1f s", prose.Count(o.Clients, "client"), o.AtS+o.BackS)
	} else {
		s += fmt.Sprintf(", %s not connected again when the step ended", prose.Count(o.Clients, "client"))
	}
	return s + fmt.Sprintf(", %d %s failed", o.Failed, plural(o.Failed, "transaction"))
}

// outageDetail is the verdict's detail for a step the server left.
func outageDetail(os []result.Outage) string {
	o := os[0]
	for _, p := range os {
		if p.Pooler != "" {
			return fmt.Sprintf("the pooler exited during the step (at %.1f s: %s), which ended it, so no bottleneck is judged; measure again", p.AtS, p.Pooler)
		}
	}
	what := "the clients lost the server"
	if o.Restarted() {
		what = "the server restarted"
	}
	return fmt.Sprintf("%s during the step (at %.1f s, %.1f s without it): its throughput and evidence mix before, without and after, so no bottleneck is judged; measure again",
		what, o.AtS, o.ServerS)
}

func plural(n int64, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
