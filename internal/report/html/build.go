package html

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
)

// group is one sweep file, or the files of one A/B run in the run's
// target order.
type group struct {
	ab    *result.AB
	files []int // indexes into the doc's files
}

// build turns the doc into the page: it groups the files into runs and
// takes every figure from the files, from internal/diagnose (verdicts,
// figures, the knee) or from internal/stats (medians over rounds).
func build(doc Doc) *page {
	labels := fileLabels(doc.Files)
	groups := groupFiles(doc.Files)
	p := &page{Title: pageTitle(doc.Files, labels, groups)}
	sc := &scaling{}
	for gi, g := range groups {
		r := run{ID: fmt.Sprintf("run-%d", gi), Kind: "sweep"}
		if g.ab != nil {
			r.Kind = "ab"
			r.AB = abHead(g, doc.Files)
		}
		for _, fi := range g.files {
			nf := doc.Files[fi]
			r.Files = append(r.Files, header(fi, nf, labels[fi]))
		}
		p.Runs = append(p.Runs, r)
		if g.ab == nil {
			fi := g.files[0]
			f := doc.Files[fi].File
			d := diagnose.Sweep(f)
			sc.Series = append(sc.Series, sweepSeries(labels[fi], doc.Files[fi].Name, f, d))
			for si := range f.Steps {
				p.Timelines = append(p.Timelines, stepTimeline(fi, si, labels[fi], f))
			}
			p.Evidence = append(p.Evidence, fileEvidence(fi, labels[fi], doc.Files[fi].Name, f, d))
		} else {
			for _, fi := range g.files {
				f := doc.Files[fi].File
				sc.Series = append(sc.Series, abSeries(labels[fi], doc.Files[fi].Name, f))
			}
			p.Timelines = append(p.Timelines, abTimelines(gi, g, doc.Files, labels)...)
			for _, fi := range g.files {
				p.Evidence = append(p.Evidence, fileEvidence(fi, labels[fi], doc.Files[fi].Name, doc.Files[fi].File, nil))
			}
		}
	}
	for _, s := range sc.Series {
		for _, pt := range s.Points {
			sc.Clients = append(sc.Clients, pt.Clients)
		}
	}
	sc.Clients = uniqueSorted(sc.Clients)
	sc.LogClients = geometric(sc.Clients)
	if len(sc.Clients) > 0 {
		p.Scaling = sc
	}
	p.Profiles = profiles(doc.Files, labels)
	return p
}

// groupFiles puts the files of one A/B run together, in the order of the
// run's targets, and every other file on its own, in the doc's order.
func groupFiles(files []NamedFile) []group {
	var gs []group
	byRun := map[string]int{}
	for i, nf := range files {
		ab := nf.File.AB
		if ab == nil {
			gs = append(gs, group{files: []int{i}})
			continue
		}
		if gi, ok := byRun[ab.Run]; ok {
			gs[gi].files = append(gs[gi].files, i)
			continue
		}
		byRun[ab.Run] = len(gs)
		gs = append(gs, group{ab: ab, files: []int{i}})
	}
	for _, g := range gs {
		if g.ab == nil {
			continue
		}
		order := map[string]int{}
		for i, t := range g.ab.Targets {
			order[t.Name] = i
		}
		sort.SliceStable(g.files, func(a, b int) bool {
			return order[files[g.files[a]].File.Target.Name] < order[files[g.files[b]].File.Target.Name]
		})
	}
	return gs
}

// fileLabels names each file in charts: its target's name when it has one
// (A/B), else its base name without .json; made unique with a number.
func fileLabels(files []NamedFile) []string {
	labels := make([]string, len(files))
	seen := map[string]int{}
	for i, nf := range files {
		l := nf.File.Target.Name
		if l == "" {
			l = strings.TrimSuffix(filepath.Base(nf.Name), ".json")
		}
		if l == "" || l == "." {
			l = fmt.Sprintf("file %d", i+1)
		}
		seen[l]++
		if n := seen[l]; n > 1 {
			l = fmt.Sprintf("%s (%d)", l, n)
		}
		labels[i] = l
	}
	return labels
}

// pageTitle names the page after its runs: a sweep by its file, an A/B
// run by its targets.
func pageTitle(files []NamedFile, labels []string, groups []group) string {
	var names []string
	for _, g := range groups {
		if g.ab == nil {
			names = append(names, labels[g.files[0]])
			continue
		}
		var ts []string
		for _, fi := range g.files {
			ts = append(ts, labels[fi])
		}
		names = append(names, "A/B "+strings.Join(ts, " vs "))
	}
	if len(names) > 3 {
		names = append(names[:2], fmt.Sprintf("%d more", len(names)-2))
	}
	return "pgscale report: " + strings.Join(names, ", ")
}

func abHead(g group, files []NamedFile) *abHeader {
	a := g.ab
	h := &abHeader{Run: a.Run, Baseline: a.Baseline, Rounds: a.Rounds, RoundsDone: a.RoundsDone,
		SliceS: num(a.SliceS), Calibration: a.Calibration}
	have := map[string]bool{}
	names := map[string]bool{}
	for _, fi := range g.files {
		have[files[fi].File.Target.Name] = true
		for k := range files[fi].File.Target.Settings {
			names[k] = true
		}
	}
	// Settings that tell the targets apart, and those a target's own
	// cluster set differently (port, socket directory) alike: the reader
	// sees which is which by name.
	for _, k := range sortedKeys(names) {
		var vals []keyVal
		same := true
		for i, fi := range g.files {
			f := files[fi].File
			v := f.Target.Settings[k]
			vals = append(vals, keyVal{f.Target.Name, v})
			same = same && (i == 0 || v == vals[0].Value)
		}
		if !same {
			h.Differ = append(h.Differ, settingDiff{Name: k, Values: vals})
		}
	}
	for _, t := range a.Targets {
		h.Targets = append(h.Targets, abTarget{Name: t.Name, Spec: t.Spec, File: t.File})
		if !have[t.Name] {
			h.Missing = append(h.Missing, t.Name)
		}
	}
	return h
}

func header(fi int, nf NamedFile, label string) fileHeader {
	f := nf.File
	h := fileHeader{ID: fmt.Sprintf("file-%d", fi), Name: nf.Name, Label: label, Command: shellJoin(f.Command),
		Complete: f.Complete, Reason: f.Reason, Started: stamp(f.Started), Finished: stamp(f.Finished),
		Pgscale: f.Pgscale, Version: f.Version, Steps: len(f.Steps)}
	for _, s := range f.Steps {
		if s.Complete {
			h.StepsDone++
		}
	}
	wl := f.Workload
	parts := []string{wl.Name, "protocol " + wl.Protocol, fmt.Sprintf("scale %d", wl.Scale)}
	switch {
	case wl.DurationS > 0:
		parts = append(parts, fmt.Sprintf("%g s per step", wl.DurationS))
	case wl.Transactions > 0:
		parts = append(parts, fmt.Sprintf("%d transactions per client", wl.Transactions))
	}
	if wl.WarmupS > 0 {
		parts = append(parts, fmt.Sprintf("%g s warm-up", wl.WarmupS))
	}
	if wl.RateTPS > 0 {
		parts = append(parts, fmt.Sprintf("rate %g tps", wl.RateTPS))
	}
	if wl.Connect {
		parts = append(parts, "a connection per transaction")
	}
	parts = append(parts, fmt.Sprintf("max tries %d", wl.MaxTries), fmt.Sprintf("random seed %d", wl.RandomSeed))
	h.Workload = strings.Join(parts, ", ")
	for _, s := range wl.Scripts {
		h.Scripts = append(h.Scripts, script{Name: s.Name, Weight: s.Weight, Source: s.Source})
	}
	h.Defines = sortedKV(wl.Defines)
	t := f.Target
	h.Target = target{Kind: t.Kind, Name: t.Name, Description: t.Description, ServerVersion: t.ServerVersion,
		BinDir: t.BinDir, Settings: sortedKV(t.Settings), Preloaded: t.Preloaded, Tmpfs: t.Tmpfs}
	e := f.Environment
	h.Machine = fmt.Sprintf("%s: %d CPUs (%s), %d MiB, %s, kernel %s, %s, GOMAXPROCS %d",
		e.Hostname, e.CPUs, e.CPUModel, e.MemoryMB, e.OS, e.Kernel, e.GoVersion, e.GOMAXPROCS)
	if f.Diagnosis == nil && f.Version >= 2 && f.AB == nil {
		h.Warnings = append(h.Warnings, "the file holds no diagnosis of its own; the page diagnoses its steps again")
	}
	return h
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// shellJoin joins argv for reading, quoting words a shell would split.
func shellJoin(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\$`;&|<>()*?[]{}!#~") {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}

func sortedKV(m map[string]string) []keyVal {
	var kv []keyVal
	for k, v := range m {
		kv = append(kv, keyVal{k, v})
	}
	sort.Slice(kv, func(i, j int) bool { return kv[i].Key < kv[j].Key })
	return kv
}

func sortedKeys(m map[string]bool) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func uniqueSorted(xs []int) []int {
	sort.Ints(xs)
	var out []int
	for i, x := range xs {
		if i == 0 || x != xs[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// geometric says whether client counts grow by a roughly constant factor
// of at least 1.5, as 1,2,4,8 or 1,4,16 do: such a sweep reads best on a
// log axis, where every step is the same distance from the next.
func geometric(cs []int) bool {
	if len(cs) < 2 || cs[0] < 1 {
		return false
	}
	first := float64(cs[1]) / float64(cs[0])
	if first < 1.5 {
		return false
	}
	for i := 2; i < len(cs); i++ {
		r := float64(cs[i]) / float64(cs[i-1])
		if math.Abs(r/first-1) > 0.1 {
			return false
		}
	}
	return true
}

// sweepSeries is one sweep file's curve; d gives the knee and the peak.
func sweepSeries(label, name string, f *result.File, d *result.Diagnosis) scalingSeries {
	s := scalingSeries{Label: label, Source: name}
	for _, st := range f.Steps {
		sum := st.Summary
		s.Points = append(s.Points, scalingPoint{Clients: st.Clients, TPS: num(sum.TPS), P99Ms: num(sum.Latency.P99Ms),
			Speedup: numPtr(sum.Speedup), Efficiency: numPtr(sum.Efficiency), Incomplete: !st.Complete})
	}
	if d != nil {
		if d.Knee >= 0 {
			s.Knee = f.Steps[d.Knee].Clients
		}
		s.Peak = f.Steps[d.Peak].Clients
	}
	return s
}

// abSeries is one A/B target's curve: at each client count the median
// over the rounds whose step completed, with its confidence interval
// (stats.Summarize), and every round's value; the knee is diagnose.Knee
// of the medians.
func abSeries(label, name string, f *result.File) scalingSeries {
	s := scalingSeries{Label: label, Source: name}
	if f.AB != nil {
		s.Rounds = f.AB.Rounds
	}
	type acc struct {
		tps, p99 []float64
		cut      int
	}
	byClients := map[int]*acc{}
	var order []int
	for _, st := range f.Steps {
		a := byClients[st.Clients]
		if a == nil {
			a = &acc{}
			byClients[st.Clients] = a
			order = append(order, st.Clients)
		}
		if !st.Complete {
			a.cut++
			continue
		}
		a.tps = append(a.tps, st.Summary.TPS)
		a.p99 = append(a.p99, st.Summary.Latency.P99Ms)
	}
	sort.Ints(order)
	var medians []result.Step
	for _, c := range order {
		a := byClients[c]
		if len(a.tps) == 0 {
			s.Points = append(s.Points, scalingPoint{Clients: c, TPS: num(math.NaN()), P99Ms: num(math.NaN()), Incomplete: true, LeftOut: a.cut})
			continue
		}
		t := stats.Summarize(a.tps, stats.Options{})
		l := stats.Summarize(a.p99, stats.Options{})
		pt := scalingPoint{Clients: c, TPS: num(t.Median), TPSLo: numPtr(t.Lo), TPSHi: numPtr(t.Hi),
			P99Ms: num(l.Median), P99Lo: numPtr(l.Lo), P99Hi: numPtr(l.Hi), LeftOut: a.cut, Incomplete: a.cut > 0}
		for i := range a.tps {
			pt.RoundTPS = append(pt.RoundTPS, num(a.tps[i]))
			pt.RoundP99 = append(pt.RoundP99, num(a.p99[i]))
		}
		s.Points = append(s.Points, pt)
		medians = append(medians, result.Step{Clients: c, Summary: result.Summary{TPS: t.Median}})
	}
	if k := diagnose.Knee(medians); k >= 0 {
		s.Knee = medians[k].Clients
	}
	peak := 0
	for i, m := range medians {
		if m.Summary.TPS > medians[peak].Summary.TPS {
			peak = i
		}
	}
	if len(medians) > 0 {
		s.Peak = medians[peak].Clients
	}
	return s
}

// gapTolerance is how much later than the end of an interval the next may
// start and still continue the line: the collector's ticks drift by
// milliseconds, a reconnect or a stalled collector by far more.
const gapTolerance = 0.05

// points turns a step's intervals into contiguous segments on a clock
// shifted by offset seconds, and counts the gaps between them.
func points(st result.Step, offset float64) (segs [][]tlPoint, gaps int, failed int64) {
	var cur []tlPoint
	end := math.NaN()
	for _, iv := range st.Intervals {
		if !math.IsNaN(end) && iv.StartS > end+gapTolerance+0.25*iv.LengthS {
			segs = append(segs, cur)
			cur = nil
			gaps++
		}
		cur = append(cur, tlPoint{T: num(iv.StartS + offset), Len: num(iv.LengthS), TPS: num(iv.TPS),
			MeanMs: num(iv.Latency.MeanMs), P99Ms: num(iv.Latency.P99Ms), Failed: iv.Failed})
		failed += iv.Failed
		end = iv.StartS + iv.LengthS
	}
	if len(cur) > 0 {
		segs = append(segs, cur)
	}
	return segs, gaps, failed
}

func clientsWord(n int) string {
	if n == 1 {
		return "1 client"
	}
	return fmt.Sprintf("%d clients", n)
}

// stepTimeline is one sweep step's series, on the step's own clock.
func stepTimeline(fi, si int, label string, f *result.File) timeline {
	st := f.Steps[si]
	t := timeline{ID: fmt.Sprintf("timeline-%d-%d", fi, si), Clock: "step",
		Title: fmt.Sprintf("%s, step %d: %s", label, si+1, clientsWord(st.Clients))}
	segs, gaps, failed := points(st, 0)
	t.Series = []tlSeries{{Label: label, Segments: segs}}
	t.Gaps, t.Failed = gaps, failed
	if !st.Complete {
		t.Incomplete = append(t.Incomplete, st.Reason)
		if plan := f.Workload.DurationS; plan > st.ElapsedS {
			t.NotRun = &span{From: num(st.ElapsedS), To: num(plan)}
		}
	}
	for _, d := range st.Disturbances {
		t.Windows = append(t.Windows, window{Name: d.Name, Spec: d.Spec, From: num(d.StartS), To: num(d.EndS)})
	}
	return t
}

// abTimelines are an A/B run's series, one timeline per client count: each
// target's intervals of every round on the run's clock, so drift across
// rounds and the interleaving both show.
func abTimelines(gi int, g group, files []NamedFile, labels []string) []timeline {
	var t0 time.Time
	var cs []int
	for _, fi := range g.files {
		for _, st := range files[fi].File.Steps {
			if t0.IsZero() || st.Started.Before(t0) {
				t0 = st.Started
			}
			cs = append(cs, st.Clients)
		}
	}
	var out []timeline
	for _, c := range uniqueSorted(cs) {
		t := timeline{ID: fmt.Sprintf("timeline-ab%d-c%d", gi, c), Clock: "run",
			Title: fmt.Sprintf("A/B %s: %s, every round", g.ab.Run, clientsWord(c))}
		roundStart := map[int]float64{}
		for _, fi := range g.files {
			ser := tlSeries{Label: labels[fi]}
			for _, st := range files[fi].File.Steps {
				if st.Clients != c {
					continue
				}
				off := st.Started.Sub(t0).Seconds()
				if at, ok := roundStart[st.Round]; !ok || off < at {
					roundStart[st.Round] = off
				}
				segs, gaps, failed := points(st, off)
				// Slices of one step interleave with the other targets':
				// the step's gaps between its own slices are the design.
				if g.ab.SliceS > 0 {
					segs, gaps = joinSegments(segs), 0
				}
				ser.Segments = append(ser.Segments, segs...)
				t.Gaps += gaps
				t.Failed += failed
				if !st.Complete {
					t.Incomplete = append(t.Incomplete, fmt.Sprintf("%s round %d: %s", labels[fi], st.Round, st.Reason))
				}
				for _, d := range st.Disturbances {
					t.Windows = append(t.Windows, window{Name: d.Name, Spec: d.Spec, From: num(d.StartS + off), To: num(d.EndS + off), Target: labels[fi]})
				}
			}
			t.Series = append(t.Series, ser)
		}
		var rounds []int
		for r := range roundStart {
			rounds = append(rounds, r)
		}
		for _, r := range uniqueSorted(rounds) {
			t.Rounds = append(t.Rounds, mark{At: num(roundStart[r]), Label: fmt.Sprintf("round %d", r)})
		}
		out = append(out, t)
	}
	return out
}

func joinSegments(segs [][]tlPoint) [][]tlPoint {
	if len(segs) <= 1 {
		return segs
	}
	var all []tlPoint
	for _, s := range segs {
		all = append(all, s...)
	}
	return [][]tlPoint{all}
}

// fileEvidence is each step's verdict and evidence. d is the sweep's
// diagnosis; for an A/B file (d nil) each step is judged against the first
// step of its round.
func fileEvidence(fi int, label, name string, f *result.File, d *result.Diagnosis) evidence {
	e := evidence{ID: fmt.Sprintf("evidence-%d", fi), Label: label, File: name}
	if d != nil {
		e.Paragraph = d.Paragraph
	}
	figs := make([]diagnose.Figures, len(f.Steps))
	for i, s := range f.Steps {
		figs[i] = diagnose.Compute(s)
	}
	firstOfRound := map[int]int{}
	for i, s := range f.Steps {
		if _, ok := firstOfRound[s.Round]; !ok {
			firstOfRound[s.Round] = i
		}
	}
	for i, s := range f.Steps {
		var v result.StepVerdict
		if d != nil {
			v = d.Steps[i]
		} else {
			v = diagnose.Step(figs[i], figs[firstOfRound[s.Round]])
		}
		se := stepEvidence{ID: fmt.Sprintf("step-%d-%d", fi, i), Clients: s.Clients, Round: s.Round,
			Complete: s.Complete, Reason: s.Reason, Verdict: v.Verdict, Detail: v.Detail, Evidence: v.Evidence}
		if d != nil {
			se.Knee, se.Peak = i == d.Knee, i == d.Peak && len(f.Steps) > 1
		}
		sum := s.Summary
		se.Summary = stepSummary{Transactions: sum.Transactions, ElapsedS: num(s.ElapsedS), TPS: num(sum.TPS),
			MeanMs: num(sum.Latency.MeanMs), P50Ms: num(sum.Latency.P50Ms), P99Ms: num(sum.Latency.P99Ms),
			MaxMs: num(sum.Latency.MaxMs), Failed: sum.Failed, Retried: sum.Retried}
		stepFigures(&se, figs[i], s)
		if s.Probes != nil {
			e.HasProbes = true
		}
		if se.CPU != nil {
			e.HasCPU = true
		}
		if len(se.Waits) > 0 {
			e.HasWaits = true
		}
		e.Steps = append(e.Steps, se)
	}
	return e
}

// waitClasses are the wait-event classes in the order their bars stack:
// on CPU first, then the classes a bottleneck verdict names, then the rest.
var waitClasses = []string{"CPU", "LWLock", "Lock", "IO", "BufferPin", "IPC", "Extension", "Timeout", "Activity", "Client"}

func stepFigures(se *stepEvidence, fg diagnose.Figures, s result.Step) {
	if fg.HasHost {
		c := &cpuShares{Generator: num(fg.GeneratorShare), Probes: num(fg.ProbeShare),
			Idle: num(max(1-fg.MachineBusy, 0)), RunQueue: num(fg.RunQueuePerCore)}
		other := fg.OtherShare
		if fg.HasServer {
			c.Server = numPtr(fg.ServerShare)
		}
		if fg.HasPooler {
			// OtherShare counts the pooler; the bar shows it apart.
			c.Pooler = numPtr(fg.PoolerShare)
			other = max(other-fg.PoolerShare, 0)
		}
		c.Other = num(other)
		se.CPU = c
	}
	if fg.HasWaits {
		se.WaitSource = fg.WaitSource
		known := map[string]bool{}
		for _, cl := range waitClasses {
			known[cl] = true
			sh := fg.ClassShare[cl]
			if cl == "CPU" {
				sh = fg.CPUSample
			}
			if sh > 0 {
				se.Waits = append(se.Waits, share{Name: cl, Share: num(sh)})
			}
		}
		var rest []string
		for cl := range fg.ClassShare {
			if !known[cl] && fg.ClassShare[cl] > 0 {
				rest = append(rest, cl)
			}
		}
		sort.Strings(rest)
		for _, cl := range rest {
			se.Waits = append(se.Waits, share{Name: cl, Share: num(fg.ClassShare[cl])})
		}
		for i, ev := range fg.TopEvents {
			if i == 8 {
				break
			}
			se.TopEvents = append(se.TopEvents, share{Name: ev.Name, Share: num(ev.Share)})
		}
	}
	if fg.HasHost || fg.HasStatements {
		pt := &perTxn{LatencyMs: num(fg.LatencyMs)}
		if fg.HasServer && fg.Transactions > 0 {
			pt.ServerCPUUS = numPtr(fg.ServerCPUPerTxnUS)
			pt.CtxSwitches = numPtr(fg.CtxPerTxn)
		}
		if fg.HasHost && fg.Transactions > 0 {
			pt.GeneratorCPUUS = numPtr(fg.GeneratorCPUPerTxnUS)
		}
		if fg.HasPooler && fg.Transactions > 0 {
			pt.PoolerCPUUS = numPtr(fg.PoolerCPUPerTxnUS)
		}
		if fg.HasStatements {
			pt.ServerMs = numPtr(fg.ServerMsPerTxn)
			pt.NetworkMs = numPtr(fg.NetworkMs)
		}
		se.PerTxn = pt
	} else if s.Summary.ClientCPU.PerTxnUS > 0 {
		se.PerTxn = &perTxn{LatencyMs: num(fg.LatencyMs), GeneratorCPUUS: numPtr(s.Summary.ClientCPU.PerTxnUS)}
	}
	if fg.HasLocks {
		l := fg.Locks
		lk := &locks{Snapshots: l.Snapshots, Backends: l.Backends, MaxSlowWeak: l.MaxSlowWeak, MeanSlowWeak: num(l.MeanSlowWeak),
			MaxFastPath: l.MaxFastPath, FastPathSlots: l.FastPathSlots, Exhausted: l.Exhausted}
		for _, w := range l.Waiting {
			lk.Waiting = append(lk.Waiting, wait{LockType: w.LockType, Mode: w.Mode, Count: w.Count})
		}
		se.Locks = lk
	}
	if c := fg.Counters; c != nil {
		if c.Supported {
			se.Counters = fmt.Sprintf("%d cycles, %d instructions over the machine", c.Cycles, c.Instructions)
			if c.Cycles > 0 {
				se.Counters += fmt.Sprintf(" (%.2f instructions per cycle)", float64(c.Instructions)/float64(c.Cycles))
			}
			if c.Scaled {
				se.Counters += ", estimated (multiplexed)"
			}
		} else {
			se.Counters = c.Reason
			if !strings.HasPrefix(c.Reason, "not supported") {
				se.Counters = "not supported: " + c.Reason
			}
		}
	}
	p := s.Probes
	if p != nil {
		if st := p.Statements; st != nil {
			for i, q := range st.Top {
				if i == 5 {
					break
				}
				sh := 0.0
				if st.ServerMs > 0 {
					sh = q.TotalMs / st.ServerMs
				}
				se.Statements = append(se.Statements, statement{Query: q.Query, Calls: q.Calls, TotalMs: num(q.TotalMs), Share: num(sh)})
			}
		}
		for _, u := range p.Unavailable {
			se.Unavailable = append(se.Unavailable, keyVal{u.Probe, u.Reason})
		}
		if p.Process != nil {
			se.ServerNote = p.Process.ServerNote
		}
	}
	for _, er := range s.Errors {
		se.Errors = append(se.Errors, errorLine{Kind: er.Kind, Message: er.Message, Count: er.Count})
	}
	for _, d := range s.Disturbances {
		se.Disturbances = append(se.Disturbances, disturbanceOf(d))
	}
}

func disturbanceOf(d result.Disturbance) disturbance {
	o := disturbance{Name: d.Name, Spec: d.Spec, Stresses: d.Stresses, Script: d.Script, From: num(d.StartS), To: num(d.EndS),
		Sessions: d.Sessions, RanS: num(d.RanS), Iterations: d.Iterations, Errors: d.Errors, Rate: num(d.Rate)}
	for _, m := range d.ErrorMessages {
		o.ErrorLines = append(o.ErrorLines, fmt.Sprintf("%d× %s: %s", m.Count, m.Kind, m.Message))
	}
	e := d.Effect
	if e == nil {
		return o
	}
	ph := func(p *result.Phase) *phase {
		if p == nil {
			return nil
		}
		return &phase{FromS: num(p.FromS), ToS: num(p.ToS), TPS: num(p.TPS), MeanMs: num(p.LatMeanMs), P99Ms: num(p.LatP99Ms)}
	}
	ch := func(c *result.WindowChange) *change {
		if c == nil {
			return nil
		}
		out := &change{Change: num(c.Change), Confidence: num(c.Confidence)}
		if c.Lo != nil && c.Hi != nil {
			out.Lo, out.Hi = numPtr(*c.Lo), numPtr(*c.Hi)
		}
		return out
	}
	o.Before, o.During, o.After = ph(e.Before), ph(e.During), ph(e.After)
	o.TPSChange, o.LatChange = ch(e.TPS), ch(e.Latency)
	o.Warnings = e.Warnings
	return o
}
