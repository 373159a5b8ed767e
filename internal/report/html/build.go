package html

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/result"
)

// group is one sweep file, or the files of one A/B run in the run's
// target order.
type group struct {
	ab    *result.AB
	files []int // indexes into the doc's files
}

// build turns the doc into the page: it groups the files into runs and
// takes every figure from the files and their analysis (internal/compare:
// verdicts, figures, the knee, central values over rounds).
func build(doc Doc) *page {
	labels := fileLabels(doc.Files)
	groups := groupFiles(doc.Files)
	p := &page{Title: pageTitle(doc.Files, labels, groups)}
	if doc.Title != "" {
		p.Title = "pgscale report: " + doc.Title
	}
	if doc.Comparison != nil {
		p.Comparison = pageComparison(doc.Comparison)
	}
	if doc.Noise != nil {
		p.Noise = pageNoise(doc.Noise)
	}
	p.Matrices = pageMatrices(doc.Matrices)
	p.Rules = doc.Rules
	p.Micro = pageMicro(doc.Micro)
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
			fa := doc.Files[fi]
			f := fa.Rescaled
			sc.Series = append(sc.Series, sweepSeries(labels[fi], doc.Files[fi].Location(), fa))
			for si := range f.Steps {
				p.Timelines = append(p.Timelines, stepTimeline(fi, si, labels[fi], f))
			}
			p.Evidence = append(p.Evidence, fileEvidence(fi, labels[fi], doc.Files[fi].Location(), fa))
			if d := pageDiagnosis(fi, labels[fi], doc.Files[fi].Location(), fa); d != nil {
				p.Diagnoses = append(p.Diagnoses, d)
			}
		} else {
			for _, fi := range g.files {
				s := abSeries(labels[fi], doc.Files[fi].Location(), doc.Files[fi])
				s.Panel = panelName(g, doc.Files)
				s.run, s.target = g.ab.Run, doc.Files[fi].File.Target.Name
				s.isBase = s.target == g.ab.Baseline
				sc.Series = append(sc.Series, s)
			}
			p.Timelines = append(p.Timelines, abTimelines(gi, g, doc.Files, labels)...)
			for _, fi := range g.files {
				p.Evidence = append(p.Evidence, fileEvidence(fi, labels[fi], doc.Files[fi].Location(), doc.Files[fi]))
			}
		}
	}
	for _, s := range sc.Series {
		for _, pt := range s.Points {
			sc.Clients = append(sc.Clients, pt.Clients)
		}
		sc.PerCPU = sc.PerCPU || s.PerCPU
		sc.Counted = sc.Counted || s.Counted
	}
	// The speed-up chart draws the first line's perfect scaling.
	if len(sc.Series) > 0 && len(sc.Series[0].Points) > 0 && sc.Series[0].Points[0].Ideal != nil {
		sc.IdealLabel = "perfect scaling"
		if c := sc.Series[0].cores; c > 0 {
			sc.IdealLabel = fmt.Sprintf("perfect scaling on %d cores", c)
		}
	}
	sc.Clients = uniqueSorted(sc.Clients)
	sc.LogClients = geometric(sc.Clients)
	if len(sc.Clients) > 0 {
		baselineChanges(sc, doc)
		p.Scaling = sc
	}
	// A page of sweeps opens on their diagnosis; one with a verdict, on
	// the verdict.
	if p.Comparison != nil || p.Noise != nil || len(p.Matrices) > 0 {
		p.Diagnoses = nil
	}
	p.Profiles = pageProfiles(doc.Flames, labels)
	p.FlameDiffs = pageDiffs(doc.Flames, groups, labels)
	linkCards(p, groups, doc.Files)
	linkFunctions(p, groups, doc.Files)
	return p
}

// groupFiles puts the files of one A/B run together, in the order of the
// run's targets, and every other file on its own, in the doc's order.
func groupFiles(files []compare.FileAnalysis) []group {
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
// (A/B) with its suite cell's parameters ("base, workload=select-only"),
// else its base name without .json; made unique with a number.
func fileLabels(files []compare.FileAnalysis) []string {
	labels := make([]string, len(files))
	seen := map[string]int{}
	for i, nf := range files {
		l := nf.File.Target.Name
		if l == "" {
			l = strings.TrimSuffix(filepath.Base(nf.Location()), ".json")
		}
		if l == "" || l == "." {
			l = fmt.Sprintf("file %d", i+1)
		}
		for _, p := range nf.Cell {
			l += ", " + p.Name + "=" + p.Value
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
func pageTitle(files []compare.FileAnalysis, labels []string, groups []group) string {
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

func clientsWord(n int) string {
	if n == 1 {
		return "1 client"
	}
	return fmt.Sprintf("%d clients", n)
}

// panelName names an A/B run's panel of the scaling charts: its suite
// cell's parameters ("workload=select-only"), else the run.
func panelName(g group, files []compare.FileAnalysis) string {
	var ps []string
	for _, p := range files[g.files[0]].Cell {
		ps = append(ps, p.Name+"="+p.Value)
	}
	if len(ps) > 0 {
		return strings.Join(ps, ", ")
	}
	return "A/B " + g.ab.Run
}
