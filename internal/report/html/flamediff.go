package html

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"

	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
)

// flameDiff is a differential flame graph: a candidate's profile at one
// client count against the baseline's, each side the sum of its rounds'
// profiles, divided by the transactions those rounds counted. It is laid
// out like the candidate's own graph; each box is coloured by how the
// function's count per transaction (with its callees) changed from the
// baseline's, red where it grew, blue where it shrank, pale where the
// change is not one to read: within sampling noise for perf's samples;
// for instructions counted under Valgrind, which are exact and vary only
// from round to round, where the comparison's per-function tests named
// no function in the box (internal/diagnose).
type flameDiff struct {
	ID        string `json:"id"`
	Label     string `json:"label"`
	Clients   int    `json:"clients"`
	Baseline  string `json:"baseline"`
	Candidate string `json:"candidate"`
	// Unit is what the profiles count: "" for perf's samples,
	// "instructions" counted under Valgrind.
	Unit string `json:"unit,omitempty"`
	// BaseSamples and CandSamples are each side's samples over its
	// rounds; BaseFiles and CandFiles the pprof files read (as the result
	// files name them); BaseTxns and CandTxns the transactions of the
	// steps those files profiled (0 when a file does not say).
	BaseSamples int64    `json:"baseline_samples"`
	CandSamples int64    `json:"candidate_samples"`
	BaseFiles   []string `json:"baseline_files"`
	CandFiles   []string `json:"candidate_files"`
	BaseTxns    int64    `json:"baseline_transactions,omitempty"`
	CandTxns    int64    `json:"candidate_transactions,omitempty"`
	// Missing says why there is no graph (a pprof file unreadable).
	Missing string      `json:"missing,omitempty"`
	Frames  []diffFrame `json:"frames,omitempty"`
	// Hidden counts the candidate's samples in frames too narrow to draw.
	Hidden int64 `json:"hidden_samples,omitempty"`
	Depth  int   `json:"depth,omitempty"`
	// Gone are the baseline's widest functions (by their own samples)
	// that the candidate never ran: a graph laid out like the candidate's
	// cannot show them.
	Gone []share `json:"gone,omitempty"`
	// named are the functions the per-function tests named for this
	// candidate, step and process (counted profiles), by name and
	// library.
	named map[string]bool
}

// diffFrame is a box of the candidate's graph with the function's count
// at the same place in the call tree on each side: as a share of its
// samples, and per transaction (NaN when a side's transactions are not
// known); Change is the relative change per transaction (per sample
// without transactions), NaN for a box the baseline did not have, and
// Significant whether the box's change is one to read (flameDiff).
type diffFrame struct {
	frame
	BaseShare   num  `json:"baseline_share"`
	CandShare   num  `json:"candidate_share"`
	BasePerTxn  num  `json:"baseline_per_txn"`
	CandPerTxn  num  `json:"candidate_per_txn"`
	Change      num  `json:"change"`
	Significant bool `json:"significant,omitempty"`
}

// flameDiffs builds a differential graph for every candidate of every A/B
// run in the page and every client count at which both it and the
// baseline recorded profiles, over their complete steps; named are the
// functions the comparison's per-function tests named.
func flameDiffs(groups []group, files []NamedFile, labels []string, named []ChangedFunction) []flameDiff {
	var out []flameDiff
	for gi, g := range groups {
		if g.ab == nil {
			continue
		}
		base := baselineFile(g, files)
		if base < 0 {
			continue
		}
		for _, src := range profileSources {
			out = append(out, sourceDiffs(gi, g, base, files, labels, src, named)...)
		}
	}
	return out
}

// sourceDiffs are the differential graphs of one A/B run's candidates
// against its baseline, base, from one source of profiles.
func sourceDiffs(gi int, g group, base int, files []NamedFile, labels []string, src profileSource, named []ChangedFunction) []flameDiff {
	var out []flameDiff
	baseSteps := profiledSteps(files[base], src)
	for _, fi := range g.files {
		if fi == base {
			continue
		}
		candSteps := profiledSteps(files[fi], src)
		for _, c := range diffClients(baseSteps, candSteps) {
			d := flameDiff{ID: flameDiffID(gi, fi, c, src), Clients: c,
				Label:    fmt.Sprintf("%s against %s, %s%s", labels[fi], labels[base], clientsWord(c), src.label),
				Baseline: labels[base], Candidate: labels[fi], Unit: baseSteps[c][0].unit,
				named: namedFunctions(named, g.ab.Run, files[fi].File.Target.Name, c, src)}
			bt, bf, err := sumTrees(files[base].Name, stepFiles(baseSteps[c]))
			ct, cf, err2 := sumTrees(files[fi].Name, stepFiles(candSteps[c]))
			d.BaseFiles, d.CandFiles = bf, cf
			d.BaseTxns, d.CandTxns = stepTxns(files[base].Name, baseSteps[c]), stepTxns(files[fi].Name, candSteps[c])
			if err == nil {
				err = err2
			}
			switch {
			case err != nil:
				d.Missing = err.Error()
			case shareFile(files[base].Name, bf, files[fi].Name, cf):
				d.Missing = "The baseline and the candidate name the same pprof file (a run from before every target and round had its own): there is no difference to draw."
			default:
				d.layout(ct, bt)
			}
			out = append(out, d)
		}
	}
	return out
}

// namedFunctions are the functions named for candidate cand of A/B run
// run at a client count, in the process src profiles, by frameKey.
func namedFunctions(fs []ChangedFunction, run, cand string, clients int, src profileSource) map[string]bool {
	out := map[string]bool{}
	for _, f := range fs {
		if f.Run == run && f.Candidate == cand && f.Clients == clients && (f.Process == "pooler") == (src.id != "") {
			out[frameKey(f.Symbol, filepath.Base(f.Object))] = true
			out[frameKey(f.Symbol, "")] = true
		}
	}
	return out
}

// frameKey is a function as a frame names it, in its library ("" for
// any).
func frameKey(name, lib string) string { return lib + "\x00" + name }

// diffClients are the client counts at which both sides recorded
// profiles, in order.
func diffClients(base, cand map[int][]profiledStep) []int {
	var clients []int
	for c := range cand {
		if _, ok := base[c]; ok {
			clients = append(clients, c)
		}
	}
	sort.Ints(clients)
	return clients
}

// flameDiffID is the page's anchor of a differential graph.
func flameDiffID(gi, fi, clients int, src profileSource) string {
	return fmt.Sprintf("flame-diff-%d-%d-c%d%s", gi, fi, clients, src.id)
}

// FlameDiffLink is a differential flame graph the page draws, for another
// format to link to: its anchor on the page, the A/B run (result.AB.Run),
// the candidate, the client count, and whether it is the pooler's graph.
type FlameDiffLink struct {
	ID, Run, Candidate string
	Clients            int
	Pooler             bool
}

// FlameDiffLinks lists the differential flame graphs the page of doc
// draws (where both sides' profiles are named; whether they can be read
// the page finds out), without reading a profile.
func FlameDiffLinks(doc Doc) []FlameDiffLink {
	var out []FlameDiffLink
	files := doc.Files
	for gi, g := range groupFiles(files) {
		if g.ab == nil {
			continue
		}
		base := baselineFile(g, files)
		if base < 0 {
			continue
		}
		for _, src := range profileSources {
			baseSteps := profiledSteps(files[base], src)
			for _, fi := range g.files {
				if fi == base {
					continue
				}
				for _, c := range diffClients(baseSteps, profiledSteps(files[fi], src)) {
					out = append(out, FlameDiffLink{ID: flameDiffID(gi, fi, c, src), Run: g.ab.Run,
						Candidate: files[fi].File.Target.Name, Clients: c, Pooler: src.id != ""})
				}
			}
		}
	}
	return out
}

// profiledStep is one complete step's profile of one source: its pprof
// file, what it counts, and the transactions of the window it profiled.
type profiledStep struct {
	file, unit string
	txns       int64
}

// profiledSteps returns the profiles of one source of a file's complete
// steps, by client count.
func profiledSteps(nf NamedFile, src profileSource) map[int][]profiledStep {
	m := map[int][]profiledStep{}
	for _, st := range nf.File.Steps {
		pr := src.of(st.Probes)
		if !st.Complete || pr == nil || pr.File == "" {
			continue
		}
		// Counted under Valgrind, the profile is of the counting window,
		// whose transactions the counts record; perf's of the step.
		txns := st.Summary.Transactions
		if in := st.Probes.Instructions(); pr.Unit != "" && in != nil {
			txns = in.Transactions
		}
		m[st.Clients] = append(m[st.Clients], profiledStep{pr.File, pr.Unit, txns})
	}
	return m
}

// stepFiles are the steps' pprof files.
func stepFiles(steps []profiledStep) []string {
	out := make([]string, len(steps))
	for i, s := range steps {
		out[i] = s.file
	}
	return out
}

// stepTxns adds up the transactions the steps' profiles were taken over,
// each file once (as sumTrees reads it); 0 when a step's are unknown.
func stepTxns(resultPath string, steps []profiledStep) int64 {
	seen := map[string]bool{}
	var n int64
	for _, s := range steps {
		path := profilePath(resultPath, s.file)
		if seen[path] {
			continue
		}
		seen[path] = true
		if s.txns <= 0 {
			return 0
		}
		n += s.txns
	}
	return n
}

// profileSource is one profile a step may have: the server's
// (Probes.Profile: perf's samples, or its instructions under Valgrind),
// or a pooler's instructions counted under Valgrind beside it. Each gets
// flame graphs of its own, and differential ones, labelled and named
// apart.
type profileSource struct {
	id, label string
	of        func(*result.Probes) *result.Profile
}

var profileSources = []profileSource{
	{"", "", func(p *result.Probes) *result.Profile {
		if p == nil {
			return nil
		}
		return p.Profile()
	}},
	{"-pooler", ", the pooler", func(p *result.Probes) *result.Profile {
		if p == nil || p.Instructions() == nil {
			return nil
		}
		return p.Instructions().PoolerProfile
	}},
}

// sumTrees reads the pprof files a result file names and adds up their
// call trees; a file named twice (a result written before every round had
// its own) is read once.
func sumTrees(resultPath string, names []string) (*node, []string, error) {
	root := &node{name: "all"}
	seen := map[string]bool{}
	var used []string
	for _, n := range names {
		path := profilePath(resultPath, n)
		if seen[path] {
			continue
		}
		seen[path] = true
		t, err := readTree(path)
		if err != nil {
			return nil, used, err
		}
		root.add(t)
		used = append(used, n)
	}
	return root, used, nil
}

// shareFile says whether two result files' lists of pprof files name one
// file in common.
func shareFile(pathA string, a []string, pathB string, b []string) bool {
	in := map[string]bool{}
	for _, n := range a {
		in[profilePath(pathA, n)] = true
	}
	for _, n := range b {
		if in[profilePath(pathB, n)] {
			return true
		}
	}
	return false
}

// layout places the candidate's tree as flame.go does, each frame with the
// baseline's count at the same place.
func (d *flameDiff) layout(cand, base *node) {
	d.CandSamples, d.BaseSamples = cand.value, base.value
	if cand.value == 0 || base.value == 0 {
		d.Missing = "no samples on one side"
		return
	}
	min := int64(float64(cand.value)*minFrameShare + 0.999)
	d.place(cand, base, 0, 0, min)
	d.Gone = d.goneFunctions(cand, base)
}

// exposures are what each side's counts are divided by: its
// transactions, or, when a side's are not known, its samples (the graph
// then compares shares).
func (d *flameDiff) exposures() (cand, base float64) {
	if d.CandTxns > 0 && d.BaseTxns > 0 {
		return float64(d.CandTxns), float64(d.BaseTxns)
	}
	return float64(d.CandSamples), float64(d.BaseSamples)
}

// place lays out n (b the baseline's frame at its place, nil when none)
// and its callees; it returns whether n or a callee drawn is a function
// the per-function tests named.
func (d *flameDiff) place(n, b *node, depth int, start, min int64) bool {
	if n.value < min {
		d.Hidden += n.value
		return false
	}
	var bv int64
	if b != nil {
		bv = b.value
	}
	ce, be := d.exposures()
	f := diffFrame{
		frame:     frame{Name: n.name, Depth: depth, Start: start, Value: n.value, Self: n.self, Lib: n.lib},
		CandShare: num(float64(n.value) / float64(d.CandSamples)), BaseShare: num(float64(bv) / float64(d.BaseSamples)),
		BasePerTxn: num(math.NaN()), CandPerTxn: num(math.NaN()), Change: num(math.NaN())}
	if d.CandTxns > 0 && d.BaseTxns > 0 {
		f.CandPerTxn, f.BasePerTxn = num(float64(n.value)/ce), num(float64(bv)/be)
	}
	if bv > 0 {
		f.Change = num((float64(n.value)/ce)/(float64(bv)/be) - 1)
	}
	i := len(d.Frames)
	d.Frames = append(d.Frames, f)
	d.Depth = max(d.Depth, depth+1)
	n.sortKids()
	at := start
	named := d.named[frameKey(n.name, n.lib)] || d.named[frameKey(n.name, "")]
	for _, k := range n.kids {
		named = d.place(k, b.find(k.name, k.lib), depth+1, at, min) || named
		at += k.value
	}
	if depth > 0 {
		if d.Unit != "" {
			// Exact counts: what the comparison's tests named, and the
			// callers it is inside.
			d.Frames[i].Significant = named
		} else {
			d.Frames[i].Significant = stats.RatesDiffer(float64(n.value), ce, float64(bv), be)
		}
	}
	return named
}

// goneFunctions lists the baseline's functions by their own samples that
// never appear in the candidate's profile, with at least 1 % of the
// baseline's samples and more than sampling noise (for counted profiles:
// named by the per-function tests), the widest first (at most 5).
func (d *flameDiff) goneFunctions(cand, base *node) []share {
	in := map[string]bool{}
	var walk func(n *node)
	walk = func(n *node) {
		in[n.name] = true
		for _, k := range n.kids {
			walk(k)
		}
	}
	walk(cand)
	self := map[string]int64{}
	lib := map[string]string{}
	var sum func(n *node)
	sum = func(n *node) {
		if !in[n.name] && n.self > 0 {
			self[n.name] += n.self
			lib[n.name] = n.lib
		}
		for _, k := range n.kids {
			sum(k)
		}
	}
	sum(base)
	ce, be := d.exposures()
	var out []share
	for name, v := range self {
		s := float64(v) / float64(base.value)
		if s < 0.01 {
			continue
		}
		gone := stats.RatesDiffer(0, ce, float64(v), be)
		if d.Unit != "" {
			gone = d.named[frameKey(name, lib[name])] || d.named[frameKey(name, "")]
		}
		if gone {
			out = append(out, share{Name: name, Share: num(s)})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Share != out[j].Share {
			return out[i].Share > out[j].Share
		}
		return out[i].Name < out[j].Name
	})
	if len(out) > 5 {
		out = out[:5]
	}
	return out
}

// baselineFile is the index in files of A/B run g's baseline file, -1
// when the page does not hold it.
func baselineFile(g group, files []NamedFile) int {
	base := -1
	for _, fi := range g.files {
		if files[fi].File.Target.Name == g.ab.Baseline {
			base = fi
		}
	}
	return base
}
