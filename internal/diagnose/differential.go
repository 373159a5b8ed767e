package diagnose

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
)

// Change is one measure's change from a baseline to a candidate at one
// step, as the comparison judged it (internal/compare): both sides'
// centres, the relative change with its interval, whether it is
// significant after the comparison's Holm correction, and whether it is
// then smaller than the measure's smallest change of interest.
type Change struct {
	Known          bool
	Base, Cand     float64
	Change, Lo, Hi float64
	Significant    bool
	Negligible     bool
	// P and PHolm are the change's p-value and the same after the
	// comparison's Holm correction, over Family measures: a change whose
	// interval excludes zero but is not significant once corrected is
	// said so, in the table's numbers, never called unchanged.
	P, PHolm float64
	Family   int
}

// text is the change as the comparison's table shows it: "+24.4% ± 9.4%".
func (c Change) text() string { return stats.FormatChange(c.Change, c.Lo, c.Hi) }

// excludesZero reports whether the change's interval lies on one side of
// zero.
func (c Change) excludesZero() bool { return c.Known && (c.Lo > 0 || c.Hi < 0) }

// notSignificant words a change that was not judged significant, quoting
// its row: "server-cpu/txn +24.4% ± 9.4% is not significant once corrected
// for the 20 measures compared (p 0.004; 0.08 after Holm)", or
// "server-cpu/txn did not change significantly (+0.4% ± 2.1%)".
func (c Change) notSignificant(name string) string {
	if c.excludesZero() && c.Family > 1 {
		return fmt.Sprintf("%s %s is not significant once corrected for the %d measures compared (p %.2g; %.2g after Holm)", name, c.text(), c.Family, c.P, c.PHolm)
	}
	return fmt.Sprintf("%s did not change significantly (%s)", name, c.text())
}

// absolute is the change in the measure's own unit and the half-width of
// its interval: +2.1 (µs) ± 0.4.
func (c Change) absolute() (float64, float64) {
	return c.Base * c.Change, c.Base * math.Max(c.Hi-c.Change, c.Change-c.Lo)
}

// DiffStep is what both sides recorded at one client count: the
// comparison's changes by measure name ("tps", "server-cpu/txn", ...), and
// each side's steps paired by round (Base[i] and Cand[i] ran in the same
// round).
type DiffStep struct {
	Clients    int
	Changes    map[string]Change
	Base, Cand []result.Step
	// Layouts, for a run whose clusters were re-created, maps each round
	// to its cluster layout: the per-function tests pair over layouts.
	Layouts map[int]int
	// PoolerTime is the pooler's time-driven work the comparison took off
	// pooler-instr/txn (its Determined false when none): the why's
	// change per transaction is that measure's.
	PoolerTime stats.TimeFit
}

// Differential says why a candidate is slower or faster than the baseline:
// for every step whose throughput changed significantly, the causes the
// evidence both targets recorded shows, each with its change and
// uncertainty, and what was judged unchanged.
type Differential struct {
	Steps []StepDifferential
	// Unjudged says what could not be judged and why (no wait samples in
	// slices); empty when everything was.
	Unjudged string
	// Counted explains, for servers run under Valgrind (--count), each
	// counted measure that changed significantly and by more than is
	// negligible, from the counts per function; CountedRun says the
	// servers ran so, whose throughput means nothing and is not judged.
	Counted    []CountedChange
	CountedRun bool
	// Unsure are the steps whose throughput's interval excludes no change
	// while Holm's correction over the measures compared finds it not
	// significant, in the table's words: what "no step is significantly
	// slower or faster" must not hide.
	Unsure []string
	// Functions are the per-function tests of counted runs, per step and
	// process (counted_functions.go): the functions whose own count
	// changed consistently, named whatever the measures did.
	Functions []FunctionTests
}

// StepDifferential is one step's differential diagnosis.
type StepDifferential struct {
	Clients int
	// Slower is true when the candidate's tps fell, false when it rose.
	Slower bool
	// Costs is set for a step whose throughput did not change
	// significantly while a cost per transaction did: Causes then name
	// those costs, in the words of a slower candidate's when they rose.
	Costs  bool
	TPS    Change
	Causes []Cause
	// Text is the step's sentence.
	Text string
}

// Cause kinds.
const (
	CauseWork       = "work"       // server CPU per transaction
	CauseContention = "contention" // a wait class's share of the backends' time
	CauseSwitches   = "switches"   // server context switches per transaction
	CausePooler     = "pooler"     // the pooler's CPU per transaction
	CausePool       = "pool"       // the wait for a pooler's server connection per transaction
	CauseFastPath   = "fast-path"  // fast-path slots overflowing on one side only
	CauseClient     = "client"     // the load generator's CPU, or backends waiting for the client
	CauseCPUQueue   = "cpu-queue"  // backends waiting for a CPU
)

// Cause is one piece of evidence for a step's change: its kind, what it
// names (a measure, a wait class or event) and the words.
type Cause struct {
	Kind string
	What string
	Text string
}

// Sentences are the differential's sentences: one per step judged and
// one per counted change, then the per-function tests' (FunctionTexts),
// then what could not be judged; "No step is significantly slower or
// faster." when none changed ("No counted measure changed by more than
// is negligible." for counted runs).
func (d Differential) Sentences() []string {
	out := d.Explained()
	n := len(out)
	if d.Unjudged != "" {
		n--
	}
	return append(append(out[:n:n], d.FunctionTexts()...), out[n:]...)
}

// FunctionTexts are the per-function tests' sentences, one per step and
// process where a function changed.
func (d Differential) FunctionTexts() []string {
	var out []string
	for _, f := range d.Functions {
		if f.Text != "" {
			out = append(out, f.Text)
		}
	}
	return out
}

// Explained are Sentences without the per-function tests', for a format
// that lists the functions that changed in a table of their own
// (ChangedFunctions).
func (d Differential) Explained() []string {
	var out []string
	for _, s := range d.Steps {
		out = append(out, s.Text)
	}
	for _, c := range d.Counted {
		out = append(out, c.Text)
	}
	switch {
	case len(out) > 0:
	case d.CountedRun:
		out = append(out, "No counted measure changed by more than is negligible.")
	case len(d.Unsure) > 0:
		out = append(out, "No step is significantly slower or faster once corrected for the measures compared, though the throughput's interval excludes no change at "+strings.Join(d.Unsure, "; ")+".")
	default:
		out = append(out, "No step is significantly slower or faster.")
	}
	if d.Unjudged != "" {
		out = append(out, d.Unjudged)
	}
	return out
}

// Explain makes the differential diagnosis of one candidate from the
// steps both targets recorded; say words the remedies it names.
func Explain(steps []DiffStep, opt stats.Options, say Say) Differential {
	var d Differential
	waitsJudged := true
	for _, st := range steps {
		for i := 0; i < min(len(st.Base), len(st.Cand)); i++ {
			for _, p := range countedProcesses {
				d.CountedRun = d.CountedRun || p.counts(st.Base[i]) != nil || p.counts(st.Cand[i]) != nil
			}
		}
		d.Counted = append(d.Counted, explainCounted(st)...)
		d.Functions = append(d.Functions, testFunctions(st, opt)...)
		tps := st.Changes["tps"]
		if !tps.Known || !tps.Significant || tps.Change == 0 {
			if sd, ok := costsOnly(st, tps); ok {
				d.Steps = append(d.Steps, sd)
			} else if tps.excludesZero() && tps.Family > 1 {
				d.Unsure = append(d.Unsure, fmt.Sprintf("%s (tps %s, p %.2g; %.2g after Holm over %d measures)",
					prose.Count(st.Clients, "client"), tps.text(), tps.P, tps.PHolm, tps.Family))
			}
			continue
		}
		sd := StepDifferential{Clients: st.Clients, Slower: tps.Change < 0, TPS: tps}
		// worse says a cost per transaction moved the way the tps did:
		// up for a slower candidate, down for a faster one.
		worse := func(c Change) bool { return c.Known && c.Significant && (c.Change > 0) == sd.Slower }
		more := "more"
		if !sd.Slower {
			more = "less"
		}

		work, workJudged := false, false
		if sc := st.Changes["server-cpu/txn"]; sc.Known {
			workJudged = true
			if worse(sc) {
				work = true
				a, pm := sc.absolute()
				text := fmt.Sprintf("each transaction costs %s %s server CPU (%+.1f µs ± %.1f)", prose.Share(math.Abs(sc.Change)), more, a, pm)
				text += cpuWhere(st.Changes["server-user/txn"], st.Changes["server-sys/txn"])
				sd.Causes = append(sd.Causes, Cause{CauseWork, "server-cpu/txn", text})
			}
		}
		waits, judged := waitChanges(st, sd.Slower, opt)
		waitsJudged = waitsJudged && judged
		contention := false
		for _, c := range waits {
			contention = contention || c.Kind == CauseContention
		}
		sd.Causes = append(sd.Causes, waits...)
		if c := st.Changes["server-ctx/txn"]; worse(c) {
			a, pm := c.absolute()
			sd.Causes = append(sd.Causes, Cause{CauseSwitches, "server-ctx/txn", fmt.Sprintf("each transaction makes %s context switches in the server (%+.2f ± %.2f, %s)", switchWord(a), a, pm, stats.FormatChange(c.Change, c.Lo, c.Hi))})
		}
		if c := st.Changes["pooler-cpu/txn"]; worse(c) {
			a, pm := c.absolute()
			sd.Causes = append(sd.Causes, Cause{CausePooler, "pooler-cpu/txn", fmt.Sprintf("the pooler spends %s %s CPU per transaction (%+.1f µs ± %.1f)", prose.Share(math.Abs(c.Change)), more, a, pm)})
		}
		poolFirst := false
		if c := st.Changes["pooler-wait/txn"]; worse(c) {
			a, pm := c.absolute()
			longer := "longer"
			if !sd.Slower {
				longer = "shorter"
			}
			text := fmt.Sprintf("each transaction waits %s %s for one of the pool's server connections (%+.0f µs ± %.0f)", prose.Share(math.Abs(c.Change)), longer, a, pm)
			// The pool's wait leads when it is most of what the median
			// latency moved: the pool's size, not the work, made the change.
			if l := st.Changes["p50"]; l.Known {
				if dl, _ := l.absolute(); dl != 0 && a/1000/dl >= 0.5 {
					poolFirst = true
					text += fmt.Sprintf(", against the median latency's %+.1f ms", dl)
				}
			}
			cause := Cause{CausePool, "pooler-wait/txn", text}
			if poolFirst {
				sd.Causes = append([]Cause{cause}, sd.Causes...)
			} else {
				sd.Causes = append(sd.Causes, cause)
			}
		}
		if c, ok := fastPathChange(st, sd.Slower); ok {
			sd.Causes = append(sd.Causes, c)
		}
		if c := st.Changes["client-cpu/txn"]; worse(c) && !work {
			a, pm := c.absolute()
			sd.Causes = append(sd.Causes, Cause{CauseClient, "client-cpu/txn", fmt.Sprintf("the load generator spends %s %s CPU per transaction (%+.1f µs ± %.1f)", prose.Share(math.Abs(c.Change)), more, a, pm)})
		}

		dir := "Slower"
		if !sd.Slower {
			dir = "Faster"
		}
		head := fmt.Sprintf("%s at %s (tps %s)", dir, prose.Count(st.Clients, "client"), stats.FormatChange(tps.Change, tps.Lo, tps.Hi))
		var texts []string
		for _, c := range sd.Causes {
			texts = append(texts, c.Text)
		}
		sc := st.Changes["server-cpu/txn"]
		switch {
		case len(texts) == 0 && judged && sc.excludesZero():
			sd.Text = head + ": " + sc.notSignificant("server-cpu/txn") + ", and the wait events did not change significantly, so no cause can be named from what both targets recorded."
		case len(texts) == 0 && judged:
			sd.Text = head + ": neither the server's CPU per transaction (" + sc.text() + ") nor its wait events changed significantly, so the cause is outside what both targets recorded."
		case len(texts) == 0 && workJudged && sc.excludesZero():
			sd.Text = head + ": " + sc.notSignificant("server-cpu/txn") + "; no cause can be named from what both targets recorded."
		case len(texts) == 0 && workJudged:
			sd.Text = head + ": the server's CPU per transaction did not change significantly (" + sc.text() + "); the cause is outside what both targets recorded."
		case len(texts) == 0:
			sd.Text = head + "."
		default:
			s := head + " because " + strings.Join(texts, "; ")
			switch {
			case poolFirst:
				s += ": the wait for the pool is most of the change in latency"
			case work && !contention && judged:
				s += "; wait events are unchanged: " + more + " work, not " + more + " contention"
			case contention && !work && workJudged:
				s += "; server CPU per transaction is unchanged: contention, not " + more + " work"
			case work && contention:
				if sd.Slower {
					s += ": more work and more contention"
				} else {
					s += ": less work and less contention"
				}
			}
			sd.Text = s + "."
		}
		d.Steps = append(d.Steps, sd)
	}
	if !waitsJudged && len(d.Steps) > 0 {
		d.Unjudged = unjudged(steps, say)
	}
	return d
}

// costMeasures are the costs per transaction a step's differential names
// when throughput did not change but they did, with their words.
var costMeasures = []struct{ name, what string }{
	{"server-cpu/txn", "server CPU"},
	{"server-user/txn", "server CPU in user space"},
	{"server-sys/txn", "server CPU in the kernel"},
	{"server-ctx/txn", "context switches in the server"},
	{"pooler-cpu/txn", "pooler CPU"},
	{"pooler-ctx/txn", "context switches in the pooler"},
	{"client-cpu/txn", "load generator CPU"},
}

// costsOnly is the differential of a step whose throughput did not change
// significantly while some cost per transaction did (significantly, and by
// more than is negligible): what changed, in the comparison's numbers, so
// that a cost the table calls regressed is never left unexplained.
func costsOnly(st DiffStep, tps Change) (StepDifferential, bool) {
	sd := StepDifferential{Clients: st.Clients, Costs: true, TPS: tps}
	var texts []string
	for _, m := range costMeasures {
		c := st.Changes[m.name]
		if !c.Known || !c.Significant || c.Negligible || c.Change == 0 {
			continue
		}
		word := "more"
		if c.Change < 0 {
			word = "less"
			if strings.Contains(m.name, "ctx") {
				word = "fewer"
			}
		}
		text := fmt.Sprintf("%s %s: %s %s %s per transaction", m.name, c.text(), prose.Share(math.Abs(c.Change)), word, m.what)
		sd.Causes = append(sd.Causes, Cause{costKind(m.name), m.name, text})
		texts = append(texts, text)
	}
	if len(texts) == 0 {
		return sd, false
	}
	tpsText := "throughput did not change significantly"
	switch {
	case tps.excludesZero():
		tpsText = "throughput, " + tps.notSignificant("tps")
	case tps.Known:
		tpsText += " (tps " + tps.text() + ")"
	}
	sd.Text = fmt.Sprintf("At %s %s, but its costs did: %s.", prose.Count(st.Clients, "client"), tpsText, strings.Join(texts, "; "))
	return sd, true
}

// costKind is the cause kind of a cost measure.
func costKind(name string) string {
	switch {
	case strings.HasPrefix(name, "pooler"):
		return CausePooler
	case strings.HasPrefix(name, "client"):
		return CauseClient
	case strings.Contains(name, "ctx"):
		return CauseSwitches
	}
	return CauseWork
}

// unjudged says why contention could not be judged: slices, which run no
// probes (and what records them, in say's words); no probes at all; or
// probes without wait samples.
func unjudged(steps []DiffStep, say Say) string {
	slices, probes, costs := false, false, false
	for _, st := range steps {
		for _, s := range append(append([]result.Step(nil), st.Base...), st.Cand...) {
			slices = slices || s.Costs != nil
			probes = probes || s.Probes != nil
		}
		costs = costs || st.Changes["server-cpu/txn"].Known
	}
	switch {
	case slices:
		remedy := ""
		if w := say.Of(WholeRounds); w != "" {
			remedy = "; " + w + " records them"
		}
		return "Wait events were not sampled (an A/B run in slices runs no probes" + remedy + "), so contention could not be judged."
	case !probes && !costs:
		return "Neither target recorded server-side evidence (no probes, no per-slice costs), so no cause can be named."
	}
	return "Wait events were not sampled on both sides, so contention could not be judged."
}

// cpuWhere says where the server's extra CPU went, user space or the
// kernel, when the split is known and one side of it dominates.
func cpuWhere(user, sys Change) string {
	if !user.Known || !sys.Known || (!user.Significant && !sys.Significant) {
		return ""
	}
	u, _ := user.absolute()
	k, _ := sys.absolute()
	switch {
	case math.Abs(u) >= 2*math.Abs(k):
		return fmt.Sprintf(", mostly in user space (%+.1f µs)", u)
	case math.Abs(k) >= 2*math.Abs(u):
		return fmt.Sprintf(", mostly in the kernel (%+.1f µs)", k)
	}
	return fmt.Sprintf(", in user space (%+.1f µs) and the kernel (%+.1f µs)", u, k)
}

func switchWord(a float64) string {
	if a >= 0 {
		return fmt.Sprintf("%.2f more", a)
	}
	return fmt.Sprintf("%.2f fewer", -a)
}

// waitShare is one share of the backends' time compared round by round.
type waitShare struct {
	name string // a wait class, or "cpu-wait"
	read func(BackendTime) float64
}

// waitChanges compares the shares of the backends' time round by round:
// the contention classes, waiting for the client and waiting for a CPU.
// A share that moved the way the tps did (grew for a slower candidate),
// significantly after Holm's correction over the shares tested, is a
// cause; a contention class is named by its event that moved most.
// judged is false when some round of either side has no wait samples.
func waitChanges(st DiffStep, slower bool, opt stats.Options) ([]Cause, bool) {
	n := min(len(st.Base), len(st.Cand))
	if n == 0 {
		return nil, false
	}
	base, cand := make([]BackendTime, n), make([]BackendTime, n)
	for i := 0; i < n; i++ {
		base[i], cand[i] = Compute(st.Base[i]).Time, Compute(st.Cand[i]).Time
		if !base[i].Known || !cand[i].Known {
			return nil, false
		}
	}
	var shares []waitShare
	for _, cl := range append(append([]string(nil), ContentionClasses...), "Client") {
		cl := cl
		shares = append(shares, waitShare{cl, func(t BackendTime) float64 { return t.In(cl) }})
	}
	schedstat := base[0].Schedstat && cand[0].Schedstat
	if schedstat {
		shares = append(shares, waitShare{"cpu-wait", func(t BackendTime) float64 { return t.CPUWait }})
	}
	diffs := make([]stats.Difference, len(shares))
	ps := make([]float64, len(shares))
	for i, sh := range shares {
		b, c := make([]float64, n), make([]float64, n)
		for r := 0; r < n; r++ {
			b[r], c[r] = sh.read(base[r]), sh.read(cand[r])
		}
		diffs[i] = stats.PairedDifference(b, c, opt)
		ps[i] = diffs[i].P
		if math.IsNaN(ps[i]) {
			ps[i] = 1
		}
	}
	conf := opt.Confidence
	if conf == 0 {
		conf = stats.DefaultConfidence
	}
	holm := stats.Holm(ps)
	var out []Cause
	for i, sh := range shares {
		df := diffs[i]
		if holm[i] > 1-conf || df.Diff == 0 || (df.Diff > 0) != slower {
			continue
		}
		pts := fmt.Sprintf("%s → %s, %+.0f points ± %.0f", prose.Share(df.Base), prose.Share(df.Cand), 100*df.Diff, 100*math.Max(df.Hi-df.Diff, df.Diff-df.Lo))
		word := "more"
		if df.Diff < 0 {
			word = "less"
		}
		switch sh.name {
		case "Client":
			out = append(out, Cause{CauseClient, "Client", fmt.Sprintf("backends spend %s of their time waiting for the client (%s)", word, pts)})
		case "cpu-wait":
			out = append(out, Cause{CauseCPUQueue, "cpu-wait", fmt.Sprintf("backends spend %s of their time waiting for a CPU (%s)", word, pts)})
		default:
			text := fmt.Sprintf("backends spend %s of their time in %s (%s)", word, waitName(sh.name), pts)
			if ev, ok := movedMost(base, cand, sh.name); ok {
				text += ", mostly " + ev
			}
			out = append(out, Cause{CauseContention, sh.name, text})
		}
	}
	return out, true
}

// movedMost is the event of a wait class whose share of the backends'
// time moved most between the sides (by its mean over the rounds).
func movedMost(base, cand []BackendTime, class string) (string, bool) {
	mean := func(ts []BackendTime) map[string]float64 {
		m := map[string]float64{}
		for _, t := range ts {
			for ev, sh := range t.Events {
				if strings.HasPrefix(ev, class+":") {
					m[ev] += sh / float64(len(ts))
				}
			}
		}
		return m
	}
	b, c := mean(base), mean(cand)
	var names []string
	for ev := range b {
		names = append(names, ev)
	}
	for ev := range c {
		if _, ok := b[ev]; !ok {
			names = append(names, ev)
		}
	}
	sort.Strings(names)
	best, by := "", 0.0
	for _, ev := range names {
		if x := math.Abs(c[ev] - b[ev]); x > by {
			best, by = ev, x
		}
	}
	return best, best != ""
}

// fastPathChange is fast-path slot overflow appearing on one side only:
// in at least half of the candidate's rounds and none of the baseline's
// (for a slower candidate), or the other way round.
func fastPathChange(st DiffStep, slower bool) (Cause, bool) {
	over := func(steps []result.Step) (int, int, int) {
		n, most, slots := 0, 0, 0
		for _, s := range steps {
			if s.Probes == nil || s.Probes.Locks() == nil {
				continue
			}
			l := s.Probes.Locks()
			slots = l.FastPathSlots
			if l.Exhausted > 0 {
				n++
				most = max(most, l.MaxSlowWeak)
			}
		}
		return n, most, slots
	}
	bn, bmost, slots := over(st.Base)
	cn, cmost, _ := over(st.Cand)
	switch {
	case slower && bn == 0 && cn > 0 && 2*cn >= len(st.Cand):
		return Cause{CauseFastPath, "fast-path", fmt.Sprintf("the candidate's backends overflow their %d fast-path slots (up to %d relation locks each in the shared lock table, in %d of %d rounds) and the baseline's do not", slots, cmost, cn, len(st.Cand))}, true
	case !slower && cn == 0 && bn > 0 && 2*bn >= len(st.Base):
		return Cause{CauseFastPath, "fast-path", fmt.Sprintf("the baseline's backends overflow their %d fast-path slots (up to %d relation locks each in the shared lock table) and the candidate's do not", slots, bmost)}, true
	}
	return Cause{}, false
}
