package diagnose

import (
	"fmt"
	"strings"

	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/result"
)

// Verdicts, checked in this order.
const (
	CPUBound    = "cpu-bound"
	LWLockBound = "lwlock-bound"
	LockBound   = "lock-bound"
	IOBound     = "io-bound"
	ClientBound = "client-bound"
	UnderLoaded = "under-loaded"
	Unclear     = "unclear"
)

// Thresholds. Each says what it separates and why it sits where it does.
const (
	// CPUSaturated is the machine's busy share above which its CPU counts
	// as saturated. Not 1.0: /proc/stat keeps some idle ticks even when
	// every core has a queue (interrupt gaps, wake-up latency), and on a
	// 2-core machine one idle tick in ten is already 5 % of a core.
	CPUSaturated = 0.90
	// RunQueueSaturated is the average number of runnable tasks waiting
	// for a CPU, per core, that confirms saturation: on a busy machine that
	// is not CPU-bound (one hot-row holder at a time, the others asleep
	// on a lock) almost nothing waits in the run queue; in a CPU-bound
	// select-only run several backends and client threads wait per core.
	// A quarter of a task per core means a queue that is there most of
	// the time.
	RunQueueSaturated = 0.25
	// WaitDominant is the share of client-backend samples a wait class
	// needs to be the bottleneck (LWLock, Lock, IO). A quarter of all
	// backend time spent on one kind of wait is more than any healthy
	// workload shows (a few per cent), and leaves room for time on CPU
	// and waits for the client in the rest.
	WaitDominant = 0.25
	// IOPressure is the PSI io "some" share above which I/O stalls are
	// the bottleneck even when wait samples are thin (fsync in the
	// WAL writer, a checkpoint).
	IOPressure = 0.30
	// ClientDominant is the share of samples (idle included) in which
	// backends wait for the client, above which the client is suspect.
	ClientDominant = 0.50
	// GeneratorDelayed is the load generator's run-queue wait per second
	// above which its threads are short of CPU: 5 % of the wall time in
	// all is more than a lightly loaded machine shows (under 1 %).
	GeneratorDelayed = 0.05
	// Underloaded is the machine's busy share below which it has room:
	// with no dominant wait, throughput is then bound by latency (sleeps,
	// network round trips), and more clients would go faster.
	Underloaded = 0.70
	// LockMajority is the share of samples in heavyweight lock waits that
	// overrides CPU saturation. Lock waits under CPU pressure are often a
	// symptom (holders descheduled), and the trap says CPU evidence
	// comes first; but when most of the backends' time is spent queued
	// behind one another on a row or a table, a faster CPU would not help:
	// the queue is serial. A hot-row UPDATE at 8 clients shows 60-75 %
	// here, with or without other load on the machine.
	LockMajority = 0.50
)

// Step gives one step's verdict. first holds the first step's figures, to
// say how run-queue wait and CPU grew; it may be the step itself.
func Step(f, first Figures) result.StepVerdict {
	v := result.StepVerdict{Clients: f.Clients}
	var ev []string
	if f.HasHost {
		ev = append(ev, cpuEvidence(f))
		ev = append(ev, fmt.Sprintf("run queue: %.2f runnable tasks waiting per core (%.2f at %d client%s)",
			f.RunQueuePerCore, first.RunQueuePerCore, first.Clients, prose.Plural(first.Clients)))
	}
	if f.HasWaits {
		ev = append(ev, "wait samples: "+topEvents(f, 5))
	}
	if f.HasLocks && f.Locks.MaxSlowWeak > 0 {
		ev = append(ev, lockEvidence(f.Locks))
	}
	if f.HasServer && f.Transactions > 0 {
		ev = append(ev, fmt.Sprintf("per transaction: server cpu %.1f µs, client cpu %.1f µs, %.1f context switches",
			f.ServerCPUPerTxnUS, f.GeneratorCPUPerTxnUS, f.CtxPerTxn))
	}
	if f.HasStatements {
		ev = append(ev, fmt.Sprintf("server time %.3f ms per transaction of %.3f ms latency: network + client %.3f ms",
			f.ServerMsPerTxn, f.LatencyMs, f.NetworkMs))
	}
	v.Evidence = ev
	lw := f.ClassShare["LWLock"]
	lk := f.ClassShare["Lock"]
	io := f.ClassShare["IO"]
	switch {
	case f.HasHost && f.MachineBusy >= CPUSaturated && f.RunQueuePerCore >= RunQueueSaturated && lk < LockMajority:
		v.Verdict = CPUBound
		v.Detail = cpuDetail(f)
	case f.HasWaits && lw >= WaitDominant && lw >= lk && lw >= io:
		v.Verdict = LWLockBound
		top, _ := f.topOf("LWLock")
		v.Detail = strings.TrimPrefix(top.Name, "LWLock:")
		if v.Detail == "LockManager" && f.HasLocks && f.Locks.Exhausted > 0 {
			v.Detail += fmt.Sprintf(" (fast-path slots exhausted: up to %d relation locks per backend in the shared lock table)", f.Locks.MaxSlowWeak)
		}
	case f.HasWaits && lk >= WaitDominant && lk >= io:
		v.Verdict = LockBound
		top, _ := f.topOf("Lock")
		v.Detail = lockDetail(strings.TrimPrefix(top.Name, "Lock:"))
	case (f.HasWaits && io >= WaitDominant) || (f.PSI != nil && f.PSI.IOSome >= IOPressure):
		v.Verdict = IOBound
		if top, ok := f.topOf("IO"); ok {
			v.Detail = strings.TrimPrefix(top.Name, "IO:")
		} else {
			v.Detail = fmt.Sprintf("I/O pressure %.0f%% of the time", f.PSI.IOSome*100)
		}
	case f.HasWaits && f.HasHost && f.ClientShare >= ClientDominant && f.MachineBusy < CPUSaturated && f.GeneratorRunQueue >= GeneratorDelayed:
		v.Verdict = ClientBound
		v.Detail = fmt.Sprintf("backends wait for the client in %.0f%% of samples while the load generator's threads wait %.0f ms per second for a CPU",
			f.ClientShare*100, f.GeneratorRunQueue*1000)
	case underLoaded(f):
		v.Verdict = UnderLoaded
		v.Detail = underDetail(f)
	default:
		v.Verdict = Unclear
		v.Detail = unclearWhy(f)
	}
	return v
}

// underLoaded says whether the workload leaves the machine room: its own
// processes (server, generator, probes) use under Underloaded of it and
// barely queue for a CPU. Other processes' load does not count against
// it: a sleep-bound workload stays latency-bound on a busy machine. With
// the server out of sight, its backends must be on CPU in under half of
// the samples.
func underLoaded(f Figures) bool {
	if !f.HasHost || f.RunQueuePerCore >= RunQueueSaturated {
		return false
	}
	if !f.HasServer {
		return f.MachineBusy < Underloaded && f.HasWaits && f.CPUSample < 0.5
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
	s := fmt.Sprintf("machine CPU %s busy of %d cores", prose.Share(f.MachineBusy), f.CPUs)
	if f.HasServer {
		s += fmt.Sprintf(" (server %s%s, load generator %s, probes %s, other %s)", prose.Share(f.ServerShare), f.poolerPart(), prose.Share(f.GeneratorShare), prose.Share(f.ProbeShare), prose.Share(f.Elsewhere()))
	} else {
		s += fmt.Sprintf(" (load generator %s, probes %s; the server's processes are not visible here)", prose.Share(f.GeneratorShare), prose.Share(f.ProbeShare))
	}
	return s
}

func cpuDetail(f Figures) string {
	if !f.HasServer {
		return "the load generator's machine is saturated"
	}
	switch {
	case f.GeneratorShare > f.ServerShare && f.GeneratorShare >= f.PoolerShare:
		return "mostly the load generator"
	case f.PoolerShare > f.ServerShare:
		return "mostly the pooler"
	case f.Elsewhere() > f.ServerShare:
		return "mostly other processes on the machine"
	}
	return "mostly the server"
}

func lockDetail(ev string) string {
	switch ev {
	case "transactionid", "tuple":
		return ev + ": hot rows, updated by many clients at once"
	case "relation":
		return "relation: DDL or strong table locks"
	case "":
		return "heavyweight locks"
	}
	return ev
}

func underDetail(f Figures) string {
	var parts []string
	if f.HasServer && f.Elsewhere() > 0.25 {
		parts = append(parts, fmt.Sprintf("server and load generator use %s of the machine (other processes %s)",
			prose.Share(f.ServerShare+f.GeneratorShare), prose.Share(f.Elsewhere())))
	} else {
		parts = append(parts, fmt.Sprintf("machine CPU %s busy", prose.Share(f.MachineBusy)))
	}
	if f.HasWaits && len(f.TopEvents) > 0 {
		top := f.TopEvents[0]
		if top.Name == "CPU" {
			parts = append(parts, fmt.Sprintf("backends on CPU in %s of samples and waiting for the client in %s", prose.Share(top.Share), prose.Share(f.ClientShare)))
		} else {
			parts = append(parts, fmt.Sprintf("backends mostly in %s (%s of samples)", top.Name, prose.Share(top.Share)))
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
	case f.MachineBusy >= CPUSaturated:
		return fmt.Sprintf("the machine is %s busy but few tasks wait for a CPU (%.2f per core) and no wait class dominates",
			prose.Share(f.MachineBusy), f.RunQueuePerCore)
	case !f.HasWaits:
		return fmt.Sprintf("the machine is %s busy and there are no wait samples", prose.Share(f.MachineBusy))
	}
	return fmt.Sprintf("the machine is %s busy, not saturated, and no wait class reaches %s of samples", prose.Share(f.MachineBusy), prose.Share(WaitDominant))
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
