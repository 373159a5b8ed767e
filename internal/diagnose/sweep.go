package diagnose

import (
	"fmt"
	"math"
	"strings"

	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/result"
)

// KneeGain is how much higher than a step some later step must go for the
// sweep to count as still scaling past it. Run-to-run noise on a shared
// machine is several per cent, and a curve that gains less than a tenth
// for at least twice the clients has flattened for any practical purpose.
const KneeGain = 0.10

// BusyElsewhere is the share of the machine taken by processes that are
// neither the server, the load generator nor the probes, above which the
// diagnosis warns that the run shared its machine: a quarter of a 2-core
// machine is half a core, enough to move throughput by tens of per cent.
const BusyElsewhere = 0.25

// Sweep diagnoses a result file's steps. It returns nil when there are no
// steps.
func Sweep(file *result.File) *result.Diagnosis {
	steps := file.Steps
	if len(steps) == 0 {
		return nil
	}
	figs := make([]Figures, len(steps))
	for i, s := range steps {
		figs[i] = ComputeIn(file, s)
	}
	d := &result.Diagnosis{Knee: Knee(steps), Peak: -1}
	ok := counted(steps)
	for i := range steps {
		d.Steps = append(d.Steps, Step(figs[i], figs[0]))
		if ok[i] && (d.Peak < 0 || steps[i].Summary.TPS > steps[d.Peak].Summary.TPS) {
			d.Peak = i
		}
	}
	d.PeakTPS = steps[d.Peak].Summary.TPS
	d.Baseline = max(Baseline(steps), 0)
	if base := steps[d.Baseline].Summary.TPS; base > 0 {
		d.PeakSpeedup = d.PeakTPS / base
	}
	r, cores, perCPU := rates(steps, ok)
	d.PerCPU = perCPU
	had := systemCPUs(steps)
	for i := range steps {
		if had[i] > 0 {
			d.Steps[i].SystemCPUs, d.Steps[i].TPSPerCPU = had[i], steps[i].Summary.TPS/cores[i]
		}
		if perCPU {
			d.Steps[i].CPUShift = cpuShift(steps, figs, had, i, d.Baseline)
		}
	}
	d.Paragraph = paragraph(steps, figs, r, had, d)
	if allFailed(figs) {
		d.Paragraph = failedParagraph(steps, figs)
	}
	return d
}

// Knee returns the index of the first step that no later step beats by
// KneeGain, the point where throughput stops growing; -1 when the last step
// still gained (or there is only one step). Steps cut short are left out,
// as they are of the peak: their throughput is of a window that did not
// run to its end (unless no step completed).
//
// When the CPU the system had changed across the steps (CapacityShift),
// the knee is of throughput per CPU-second it had: throughput that grew
// only because other processes left the CPU has not kept scaling.
func Knee(steps []result.Step) int {
	ok := counted(steps)
	r, _, _ := rates(steps, ok)
	for i := range steps {
		if !ok[i] {
			continue
		}
		best, later := 0.0, false
		for j := i + 1; j < len(steps); j++ {
			if ok[j] {
				best, later = max(best, r[j]), true
			}
		}
		if !later {
			return -1
		}
		if best < r[i]*(1+KneeGain) {
			return i
		}
	}
	return -1
}

// counted says which steps the peak and the knee are judged on: the
// complete ones, or every step when none completed.
func counted(steps []result.Step) []bool {
	ok := make([]bool, len(steps))
	any := false
	for i, s := range steps {
		ok[i] = s.Complete
		any = any || s.Complete
	}
	if !any {
		for i := range ok {
			ok[i] = true
		}
	}
	return ok
}

// countedIndexes lists the indexes of the steps counted, in order.
func countedIndexes(steps []result.Step) []int {
	var out []int
	for i, ok := range counted(steps) {
		if ok {
			out = append(out, i)
		}
	}
	return out
}

// allFailed says no step of a sweep completed a transaction.
func allFailed(figs []Figures) bool {
	for _, f := range figs {
		if f.Failed == "" {
			return false
		}
	}
	return true
}

// paragraph says the sweep in plain English; r is what its speedup and
// knee are of (throughput, or per CPU-second: rates), cores the CPU the
// system had in each step.
func paragraph(steps []result.Step, figs []Figures, r, cores []float64, d *result.Diagnosis) string {
	var b strings.Builder
	idx := countedIndexes(steps)
	first, peak, last := steps[0], steps[d.Peak], steps[idx[len(idx)-1]]
	kneeSaid := false
	switch {
	case len(steps) == 1:
		fmt.Fprintf(&b, "One step, %s: %.0f tps.", prose.Count(first.Clients, "client"), first.Summary.TPS)
	case len(idx) == 1:
		fmt.Fprintf(&b, "Only the step at %s ran to its end: %.0f tps.", prose.Count(peak.Clients, "client"), peak.Summary.TPS)
	case d.Peak == 0:
		fmt.Fprintf(&b, "Throughput is highest at the first step, %s (%.0f tps): more clients add nothing (%s: %+.0f%%).",
			prose.Count(first.Clients, "client"), d.PeakTPS, prose.Count(last.Clients, "client"), (last.Summary.TPS/first.Summary.TPS-1)*100)
		if c, named := kneeChange(steps, d); c != "" {
			fmt.Fprintf(&b, " It stops growing at once, at %s, %s", prose.Count(first.Clients, "client"), c)
			kneeSaid = named
		}
	default:
		if d.Peak == d.Baseline {
			fmt.Fprintf(&b, "Throughput peaks at %s (%.0f tps).", prose.Count(peak.Clients, "client"), d.PeakTPS)
		} else {
			fmt.Fprintf(&b, "Throughput peaks at %s (%.0f tps, %.1f× %s).", prose.Count(peak.Clients, "client"), d.PeakTPS, d.PeakSpeedup, prose.Count(steps[d.Baseline].Clients, "client"))
		}
		what := "It"
		if d.PerCPU {
			what = "Throughput per CPU-second the system had"
		}
		if d.Knee >= 0 {
			k := steps[d.Knee]
			fmt.Fprintf(&b, " %s stops growing at %s (%s: %+.0f%%)", what, prose.Count(k.Clients, "client"), prose.Count(last.Clients, "client"),
				(r[idx[len(idx)-1]]/r[d.Knee]-1)*100)
			if c, named := kneeChange(steps, d); c != "" {
				b.WriteString(", " + c)
				kneeSaid = named
			} else {
				b.WriteString(".")
			}
		} else {
			prev := steps[idx[len(idx)-2]]
			which := "last step"
			if idx[len(idx)-1] != len(steps)-1 {
				which = "last complete step"
			}
			fmt.Fprintf(&b, " %s is still growing at the %s (%s, %+.0f%% over %d).", what, which, prose.Count(last.Clients, "client"),
				(r[idx[len(idx)-1]]/r[idx[len(idx)-2]]-1)*100, prev.Clients)
		}
	}
	if s := perCPUSentence(steps, figs, r, cores, d); s != "" {
		b.WriteString(" " + s)
	}
	if s := baselineSentence(steps, figs, r, cores, d.Baseline); s != "" {
		b.WriteString(" " + s)
	}
	ok := counted(steps)
	for i, s := range steps {
		if !ok[i] && figs[i].Failed == "" {
			fmt.Fprintf(&b, " The step at %s was cut short and is left out of the peak and the knee.", prose.Count(s.Clients, "client"))
		}
	}
	// The bottleneck from the knee on (or at the last step when it never
	// stopped growing), said once per run of equal verdicts; a step that
	// completed nothing has none, and is said apart.
	end := len(steps) - 1
	for end > 0 && figs[end].Failed != "" {
		end--
	}
	from := end
	if d.Knee >= 0 {
		from = min(d.Knee+1, end)
	}
	if d.Knee >= 0 && d.Knee+1 <= end && d.Steps[d.Knee].Verdict == d.Steps[d.Knee+1].Verdict {
		from = d.Knee
	}
	for from > 0 && d.Steps[from-1].Verdict == d.Steps[from].Verdict {
		from--
	}
	v := d.Steps[end]
	f := figs[end]
	at := "At " + prose.Count(v.Clients, "client")
	if from < end {
		at = "From " + prose.Count(steps[from].Clients, "client")
	}
	b.WriteString(" " + explain(at, v, f))
	for i := end + 1; i < len(steps); i++ {
		b.WriteString(" " + failedSentence("At "+prose.Count(steps[i].Clients, "client"), figs[i]))
	}
	if f.HasLocks && f.Locks.Exhausted > 0 {
		fmt.Fprintf(&b, " Backends hold up to %d weak relation locks beyond their %d fast-path slots: fast-path slots exhausted, so those locks go through the shared lock table",
			f.Locks.MaxSlowWeak, f.Locks.FastPathSlots)
		if lm, ok := f.Time.Events["LWLock:LockManager"]; ok {
			fmt.Fprintf(&b, " (LWLock:LockManager %s of the backends' time)", prose.Share(lm))
		}
		b.WriteString(".")
	}
	if s := lossSentence(ScalingOf(steps)); s != "" {
		b.WriteString(" " + s)
	}
	if !kneeSaid && from > 0 && d.Steps[0].Verdict != v.Verdict {
		fmt.Fprintf(&b, " At %s the verdict was %s.", prose.Count(steps[0].Clients, "client"), d.Steps[0].Verdict)
	}
	other := 0.0
	for _, f := range figs {
		other = max(other, f.Elsewhere())
	}
	if other >= BusyElsewhere && !d.PerCPU {
		fmt.Fprintf(&b, " Caution: other processes used up to %s of the machine during the run, so these figures describe a shared machine; measure again on a quiet one.", prose.Share(other))
	}
	return b.String()
}

// kneeChange says which verdict changed at the knee: "where the verdict
// changes from under-loaded (1 client) to cpu-bound." when the knee's
// verdict differs from the step before it, else the change just after it,
// else that the verdict holds on both sides. Empty without a knee; the
// bool says the sentence named the first step's verdict.
func kneeChange(steps []result.Step, d *result.Diagnosis) (string, bool) {
	k := d.Knee
	if k < 0 {
		return "", false
	}
	ok := counted(steps)
	prev, next := -1, -1
	for i := k - 1; i >= 0; i-- {
		if ok[i] {
			prev = i
			break
		}
	}
	for i := k + 1; i < len(steps); i++ {
		if ok[i] {
			next = i
			break
		}
	}
	vk := d.Steps[k].Verdict
	switch {
	case prev >= 0 && d.Steps[prev].Verdict != vk:
		return fmt.Sprintf("where the verdict changes from %s (%s) to %s.", d.Steps[prev].Verdict, prose.Count(steps[prev].Clients, "client"), vk), prev == 0
	case next >= 0 && d.Steps[next].Verdict != vk:
		return fmt.Sprintf("where the verdict is %s; past it, from %s, it is %s.", vk, prose.Count(steps[next].Clients, "client"), d.Steps[next].Verdict), k == 0
	case prev < 0 && next < 0:
		return "", false
	}
	return fmt.Sprintf("and the verdict is %s on both sides of it: more clients only wait longer for the same thing.", vk), k == 0
}

// lossSentence states the decision-rule figures of the last client count:
// the efficiency lost per doubling and where the backends' time was lost,
// to waits or to waiting for a CPU.
func lossSentence(sc []ScalingStep) string {
	if len(sc) == 0 {
		return ""
	}
	l := sc[len(sc)-1]
	what := "throughput"
	if l.PerCPU {
		what = "throughput per CPU-second"
	}
	var parts []string
	if len(sc) >= 2 && !math.IsNaN(l.LossPerDoubling) {
		prev := sc[len(sc)-2]
		if l.LossPerDoubling >= 0 {
			parts = append(parts, fmt.Sprintf("from %d to %s %s gained %.2f× per doubling of clients (efficiency lost per doubling: %s)",
				prev.Clients, prose.Count(l.Clients, "client"), what, l.GainPerDoubling, prose.Share(l.LossPerDoubling)))
		} else {
			parts = append(parts, fmt.Sprintf("from %d to %s %s gained %.2f× per doubling of clients, better than linear",
				prev.Clients, prose.Count(l.Clients, "client"), what, l.GainPerDoubling))
		}
	}
	if !math.IsNaN(l.Waits) {
		w := fmt.Sprintf("the backends lost %s of their time to lock, LWLock and I/O waits", prose.Share(l.Waits))
		if !math.IsNaN(l.CPUWait) {
			w += fmt.Sprintf(" and %s to waiting for a CPU", prose.Share(l.CPUWait))
		}
		parts = append(parts, w)
	}
	if len(parts) == 0 {
		return ""
	}
	s := strings.Join(parts, "; ")
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

// explain says a verdict in a sentence or three, with its evidence.
func explain(at string, v result.StepVerdict, f Figures) string {
	t := f.Time
	switch v.Verdict {
	case Failed:
		return failedSentence(at, f)
	case RateLimited:
		return fmt.Sprintf("%s throughput is the -R schedule's: %.0f tps of the %g asked for (schedule lag %.3f ms on average): rate-limited, the system keeps up; raise -R, or drop it, to find its capacity.",
			at, f.TPS, f.RateTPS, f.LagMeanMs)
	case PoolerBound:
		s := fmt.Sprintf("%s the pooler is the limit: its process never waits for work (on a CPU %s and runnable, waiting for a CPU, %s of the step: %.2f cores) while the backends wait for the client %s of their time, so every transaction waits its turn in the pooler's one thread.",
			at, prose.Share(f.PoolerOnCPU), prose.Share(f.PoolerBusy-f.PoolerOnCPU), f.PoolerShare*float64(f.CPUs), prose.Share(t.In("Client")))
		if f.Transactions > 0 {
			s += fmt.Sprintf(" Each transaction costs %.0f µs in the pooler, %.0f µs of server CPU and %.0f µs in the load generator.", f.PoolerCPUPerTxnUS, f.ServerCPUPerTxnUS, f.GeneratorCPUPerTxnUS)
		}
		if cpuSaturated(f) {
			s += fmt.Sprintf(" Its thread shares a saturated machine (%s busy), so it gets less than a core; a core of its own, or more pooler processes (so_reuseport), would move the limit.", prose.Share(f.MachineBusy))
		} else {
			s += " More pooler processes (so_reuseport) would move the limit."
		}
		return s
	case PoolBound:
		return poolExplain(at, f)
	case CPUBound, ClientBound:
		if v.Verdict == ClientBound && !cpuSaturated(f) {
			if generatorFull(f) {
				return fmt.Sprintf("%s %s: client-bound, the load generator itself is the limit; a faster client or more load-generating machines would move it.", at, v.Detail)
			}
			return fmt.Sprintf("%s %s, and the server is not saturated: client-bound, the load generator cannot keep up.", at, v.Detail)
		}
		s := fmt.Sprintf("%s the machine's CPU is saturated (%s busy; of the machine: ", at, prose.Share(f.MachineBusy))
		if f.HasServer {
			s += fmt.Sprintf("server %s%s, load generator %s, probes %s", prose.Share(f.ServerShare), f.poolerPart(), prose.Share(f.GeneratorShare), prose.Share(f.ProbeShare))
			if f.Elsewhere() >= 0.02 {
				s += fmt.Sprintf(", other processes %s", prose.Share(f.Elsewhere()))
			}
		} else {
			s += fmt.Sprintf("load generator %s; the server is not visible from here", prose.Share(f.GeneratorShare))
		}
		s += fmt.Sprintf("; %.2f runnable tasks waiting per core)", f.RunQueuePerCore)
		if t.Known {
			s += fmt.Sprintf(" and lock, LWLock and I/O waits take %s of the backends' time: CPU-bound, not lock-bound.", prose.Share(t.Contention()))
		} else {
			s += ": CPU-bound."
		}
		if f.RunQueuePerCore < RunQueueSaturated {
			s += " No task queues for a CPU: every core has its runnable task, and more clients would only queue."
		}
		if cr := t.In("Client"); t.Known && cr >= 0.3 {
			if f.GeneratorRunQueue >= GeneratorDelayed {
				s += fmt.Sprintf(" The %s of their time backends spend waiting for the client (Client:ClientRead) is waiting for a load generator that is itself short of CPU, not a slow client.", prose.Share(cr))
			} else {
				s += fmt.Sprintf(" The %s of their time backends spend waiting for the client (Client:ClientRead) is the client's turn in each round trip, on the same busy cores, not a slow client.", prose.Share(cr))
			}
		}
		if f.HasServer && f.Transactions > 0 {
			if f.HasPooler {
				s += fmt.Sprintf(" Each transaction costs %.0f µs of server CPU, %.0f µs in the pooler and %.0f µs in the load generator", f.ServerCPUPerTxnUS, f.PoolerCPUPerTxnUS, f.GeneratorCPUPerTxnUS)
			} else {
				s += fmt.Sprintf(" Each transaction costs %.0f µs of server CPU and %.0f µs in the load generator", f.ServerCPUPerTxnUS, f.GeneratorCPUPerTxnUS)
			}
			switch {
			case v.Verdict == ClientBound:
				s += ": the load generator takes the largest share, so it is the limit (client-bound); a faster client or a separate machine would move it."
			case f.GeneratorShare > 0.25*f.MachineBusy:
				s += "; on this shared machine the load generator takes a large share, so a faster client or a separate machine would move the limit."
			default:
				s += "."
			}
		} else if v.Verdict == ClientBound {
			s += " The machine is the load generator's: client-bound."
		}
		return s
	case LWLockBound:
		return fmt.Sprintf("%s backends spend %s of their time waiting on lightweight locks, mostly %s, while the CPU is %s busy: LWLock-bound.",
			at, prose.Share(t.In("LWLock")), v.Detail, prose.Share(f.MachineBusy))
	case LockBound:
		top, sh, _ := t.TopIn("Lock")
		return fmt.Sprintf("%s backends spend %s of their time waiting on heavyweight locks, led by %s (%s): lock-bound — %s. The CPU is %s busy; more clients only queue.",
			at, prose.Share(t.In("Lock")), top, prose.Share(sh), v.Detail, prose.Share(f.MachineBusy))
	case IOBound:
		return fmt.Sprintf("%s backends wait on I/O (%s of their time, mostly %s): I/O-bound.", at, prose.Share(t.In("IO")), v.Detail)
	case UnderLoaded:
		s := fmt.Sprintf("%s nothing is saturated (%s)", at, v.Detail)
		if f.HasStatements {
			s += fmt.Sprintf("; the server spends %.3f ms of each %.3f ms transaction", f.ServerMsPerTxn, f.LatencyMs)
		}
		return s + ": under-loaded, more clients would go faster."
	}
	return fmt.Sprintf("%s the bottleneck is unclear: %s.", at, v.Detail)
}

// baselineSentence says why speedup and efficiency are against a later
// step than the first, when they are: the first did less per client (per
// CPU-second, with r of rates) because it waited for each round trip on
// idle CPUs, or because its load generator was short of CPU on a machine
// others filled, or — only when the load generator had the CPU to spare —
// because it held itself back.
func baselineSentence(steps []result.Step, figs []Figures, r, cores []float64, b int) string {
	idx := countedIndexes(steps)
	if len(idx) == 0 || b == idx[0] {
		return ""
	}
	first, base := steps[idx[0]], steps[b]
	f := figs[idx[0]]
	eff := (r[b] / r[idx[0]]) / (float64(base.Clients) / float64(first.Clients))
	per := "per client"
	if r[b] != base.Summary.TPS {
		per = "per client and CPU-second"
	}
	s := fmt.Sprintf("Speedup and efficiency are against %s, not %s: %s did %.1f× as much %s (%.0f%% efficiency against %s)",
		prose.Count(base.Clients, "client"), prose.Count(first.Clients, "client"), prose.Count(base.Clients, "client"), eff, per, eff*100,
		prose.Count(first.Clients, "client"))
	cw := f.Time.In("Client")
	switch {
	case f.Time.Known && f.HasHost && cw >= 0.3 && f.MachineBusy < 0.9:
		s += fmt.Sprintf(", because %s was latency-bound: its backends waited for the client %s of their time and the CPUs were %s idle, so it measured each round trip's wake-up latency, not what the system can do.",
			prose.Count(first.Clients, "client"), prose.Share(cw), prose.Share(1-f.MachineBusy))
	case f.Time.Known && f.HasHost && !generatorSpare(f):
		s += fmt.Sprintf(", because the load generator of %s was short of CPU: the CPUs were %s busy, other processes %s of the machine, and it waited for a CPU %s of the step (its backends waited for the client %s of their time); that is the machine's load, not the system holding itself back.",
			prose.Count(first.Clients, "client"), prose.Share(f.MachineBusy), prose.Share(f.Elsewhere()), prose.Share(f.GeneratorRunQueue), prose.Share(cw))
	case f.Time.Known && f.HasHost:
		s += fmt.Sprintf(": %s held itself back (its backends waited for the client %s of their time; the CPUs were %s busy and the load generator had CPU to spare), not the system.",
			prose.Count(first.Clients, "client"), prose.Share(cw), prose.Share(f.MachineBusy))
	default:
		s += fmt.Sprintf(": %s held itself back — most often its own latency, one client waiting for each round trip while the server idles; no probe evidence says more.",
			prose.Count(first.Clients, "client"))
	}
	return s
}

// GeneratorSpare is the most the load generator may wait for a CPU, as a
// share of the step, and still count as having had the CPU to spare on a
// busy machine.
const GeneratorSpare = 0.05

// generatorSpare says whether the load generator had CPU to spare in a
// step: the machine had idle CPU, or it barely waited for one.
func generatorSpare(f Figures) bool {
	return f.MachineBusy < 0.9 || f.GeneratorRunQueue < GeneratorSpare
}
