package html

import (
	"fmt"
	"math"
	"sort"

	"github.com/pgscale/pgscale/internal/result"
)

// flameDiff is a differential flame graph: a candidate's CPU profile at
// one client count against the baseline's, each side the sum of its
// rounds' profiles. It is laid out like the candidate's own graph; each
// box is coloured by how the function's share of the samples (with its
// callees) changed from the baseline, red where it grew, blue where it
// shrank, pale where the change is within sampling noise.
type flameDiff struct {
	ID        string `json:"id"`
	Label     string `json:"label"`
	Clients   int    `json:"clients"`
	Baseline  string `json:"baseline"`
	Candidate string `json:"candidate"`
	// BaseSamples and CandSamples are each side's samples over its
	// rounds; BaseFiles and CandFiles the pprof files read (as the result
	// files name them).
	BaseSamples int64    `json:"baseline_samples"`
	CandSamples int64    `json:"candidate_samples"`
	BaseFiles   []string `json:"baseline_files"`
	CandFiles   []string `json:"candidate_files"`
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
}

// diffFrame is a box of the candidate's graph with the function's share of
// each side's samples at the same place in the call tree, and whether the
// difference is more than sampling noise (a two-proportion z-test, |z| ≥
// 1.96: about 95 % for one box taken alone; of many boxes a few colour by
// chance).
type diffFrame struct {
	frame
	BaseShare   num  `json:"baseline_share"`
	CandShare   num  `json:"candidate_share"`
	Significant bool `json:"significant,omitempty"`
}

// flameDiffs builds a differential graph for every candidate of every A/B
// run in the page and every client count at which both it and the
// baseline recorded profiles, over their complete steps.
func flameDiffs(groups []group, files []NamedFile, labels []string) []flameDiff {
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
			out = append(out, sourceDiffs(gi, g, base, files, labels, src)...)
		}
	}
	return out
}

// sourceDiffs are the differential graphs of one A/B run's candidates
// against its baseline, base, from one source of profiles.
func sourceDiffs(gi int, g group, base int, files []NamedFile, labels []string, src profileSource) []flameDiff {
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
				Baseline: labels[base], Candidate: labels[fi]}
			bt, bf, err := sumTrees(files[base].Name, baseSteps[c])
			ct, cf, err2 := sumTrees(files[fi].Name, candSteps[c])
			d.BaseFiles, d.CandFiles = bf, cf
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

// diffClients are the client counts at which both sides recorded
// profiles, in order.
func diffClients(base, cand map[int][]string) []int {
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

// profiledSteps returns the pprof files of one source of a file's
// complete steps, by client count.
func profiledSteps(nf NamedFile, src profileSource) map[int][]string {
	m := map[int][]string{}
	for _, st := range nf.File.Steps {
		if pr := src.of(st.Probes); st.Complete && pr != nil && pr.File != "" {
			m[st.Clients] = append(m[st.Clients], pr.File)
		}
	}
	return m
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
// baseline's share at the same place.
func (d *flameDiff) layout(cand, base *node) {
	d.CandSamples, d.BaseSamples = cand.value, base.value
	if cand.value == 0 || base.value == 0 {
		d.Missing = "no samples on one side"
		return
	}
	min := int64(float64(cand.value)*minFrameShare + 0.999)
	d.place(cand, base, 0, 0, min)
	d.Gone = goneFunctions(cand, base)
}

func (d *flameDiff) place(n, b *node, depth int, start, min int64) {
	if n.value < min {
		d.Hidden += n.value
		return
	}
	var bv int64
	if b != nil {
		bv = b.value
	}
	cs, bs := float64(n.value)/float64(d.CandSamples), float64(bv)/float64(d.BaseSamples)
	d.Frames = append(d.Frames, diffFrame{
		frame:     frame{Name: n.name, Depth: depth, Start: start, Value: n.value, Self: n.self, Lib: n.lib},
		CandShare: num(cs), BaseShare: num(bs), Significant: depth > 0 && differs(n.value, d.CandSamples, bv, d.BaseSamples)})
	d.Depth = max(d.Depth, depth+1)
	n.sortKids()
	at := start
	for _, k := range n.kids {
		d.place(k, b.find(k.name, k.lib), depth+1, at, min)
		at += k.value
	}
}

// differs is the two-proportion z-test at 95 %: are x1 of n1 and x2 of n2
// samples more different than sampling alone makes them?
func differs(x1, n1, x2, n2 int64) bool {
	p := float64(x1+x2) / float64(n1+n2)
	se := math.Sqrt(p * (1 - p) * (1/float64(n1) + 1/float64(n2)))
	if se == 0 {
		return false
	}
	return math.Abs(float64(x1)/float64(n1)-float64(x2)/float64(n2))/se >= 1.96
}

// goneFunctions lists the baseline's functions by their own samples that
// never appear in the candidate's profile, with at least 1 % of the
// baseline's samples and more than sampling noise, the widest first (at
// most 5).
func goneFunctions(cand, base *node) []share {
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
	var sum func(n *node)
	sum = func(n *node) {
		if !in[n.name] && n.self > 0 {
			self[n.name] += n.self
		}
		for _, k := range n.kids {
			sum(k)
		}
	}
	sum(base)
	var out []share
	for name, v := range self {
		if s := float64(v) / float64(base.value); s >= 0.01 && differs(0, cand.value, v, base.value) {
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
