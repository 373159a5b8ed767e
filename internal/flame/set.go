package flame

import (
	"path/filepath"
	"sort"

	"github.com/pgscale/pgscale/internal/result"
)

// File is a result file as its profiles are read: Path is where it was
// read from, and pprof files it names by a relative path are looked for
// relative to Path's directory.
type File struct {
	Path string
	File *result.File
}

// Source is one profile a step may have: the server's (Probes.Profile:
// perf's samples, or its instructions under Valgrind), or a pooler's
// instructions counted under Valgrind beside it. Each gets flame graphs of
// its own, and differential ones.
type Source int

// The sources of profiles, in the order their graphs follow each other.
const (
	Server Source = iota
	Pooler
)

// Sources are the sources of profiles, in order.
var Sources = []Source{Server, Pooler}

// Of is the source's profile among a step's probes, nil when it has none.
func (s Source) Of(p *result.Probes) *result.Profile {
	if p == nil {
		return nil
	}
	if s == Pooler {
		if p.Instructions() == nil {
			return nil
		}
		return p.Instructions().PoolerProfile
	}
	return p.Profile()
}

// Profile is one flame graph of a file: a sweep step's profile, or an A/B
// target's at one client count summed over the rounds whose step
// completed (the rounds the comparison uses): a graph per round would be
// as noisy as the rounds are short. Its JSON is the HTML page's data for
// the graph (the index fields left out).
type Profile struct {
	// File indexes the Set's files; Source is the profile's; Step is the
	// step of a sweep, -1 for an A/B target's graph, which is of Clients
	// over Rounds rounds.
	File    int    `json:"-"`
	Source  Source `json:"-"`
	Step    int    `json:"-"`
	Clients int    `json:"clients"`
	Rounds  int    `json:"rounds,omitempty"`
	// Files are the pprof files, as the result file names them: one per
	// round for an A/B target.
	Files []string `json:"files,omitempty"`
	// Unit is what the samples count when not perf's samples:
	// "instructions" (counted under Valgrind).
	Unit string `json:"unit,omitempty"`
	// Missing says why there is no graph (file not found, unreadable).
	Missing string `json:"missing,omitempty"`
	// SameAs indexes an earlier profile of the Set that names the same
	// pprof file, whose graph is drawn instead (-1 when none); SharedWith
	// are the other profiles that name the file this one's graph is of
	// (an A/B run with --profile from before every round and target had
	// its own file: every round and target overwrote one).
	SameAs     int   `json:"-"`
	SharedWith []int `json:"-"`
	// Graph is the graph laid out; its Samples are the recorded samples
	// when the files were not read.
	Graph
	path string // where the (first) pprof file was looked for
}

// Function is a function the per-function tests of a counted comparison
// named: candidate Candidate of A/B run Run at a client count, in the
// pooler's process or the server's, as the counts and profiles name it
// (symbol and object file). A differential graph draws its boxes, and the
// callers it is inside, as changed.
type Function struct {
	Run, Candidate string
	Clients        int
	Pooler         bool
	Symbol, Object string
}

// Set is every flame graph the files make: each file's profiles, and
// for every candidate of every A/B run among them, at every client count
// at which both it and the baseline recorded profiles, the differential
// graph against the baseline.
type Set struct {
	Profiles []Profile
	Diffs    []Diff
}

// Read reads the pprof files the result files name, once, and makes their
// graphs; named are the functions the comparisons' per-function tests
// named. A file that cannot be read is said in its graph's Missing.
func Read(files []File, named []Function) *Set {
	return &Set{Profiles: profiles(files), Diffs: diffs(files, named)}
}

// profiles makes the graphs of the pprof files the result files name.
func profiles(files []File) []Profile {
	var out []Profile
	users := map[string][]int{} // resolved path -> the graphs naming it
	for fi, f := range files {
		for _, src := range Sources {
			for _, p := range sourceProfiles(fi, f, src) {
				p.path = profilePath(f.Path, p.Files[0])
				p.SameAs = -1
				if prev := users[p.path]; len(prev) > 0 {
					p.SameAs = prev[0]
				} else if g, err := readGraph(f.Path, p.Files); err != nil {
					p.Missing = err.Error()
				} else {
					p.Graph = g
				}
				users[p.path] = append(users[p.path], len(out))
				out = append(out, p)
			}
		}
	}
	for i := range out {
		if out[i].SameAs >= 0 {
			continue
		}
		for _, u := range users[out[i].path] {
			if u != i {
				out[i].SharedWith = append(out[i].SharedWith, u)
			}
		}
	}
	return out
}

// sourceProfiles lists a file's graphs of one source, not yet read.
func sourceProfiles(fi int, f File, src Source) []Profile {
	var out []Profile
	at := map[int]int{} // clients -> index in out (A/B)
	for si, st := range f.File.Steps {
		pr := src.Of(st.Probes)
		if pr == nil {
			continue
		}
		if f.File.AB == nil {
			out = append(out, Profile{File: fi, Source: src, Step: si, Clients: st.Clients, Files: []string{pr.File},
				Unit: pr.Unit, Graph: Graph{Samples: pr.Samples}})
			continue
		}
		if !st.Complete {
			continue
		}
		i, ok := at[st.Clients]
		if !ok {
			i = len(out)
			at[st.Clients] = i
			out = append(out, Profile{File: fi, Source: src, Step: -1, Clients: st.Clients, Unit: pr.Unit})
		}
		p := &out[i]
		p.Files = append(p.Files, pr.File)
		p.Samples += pr.Samples
		p.Rounds++
	}
	return out
}

// readGraph reads and sums the pprof files names that the result file at
// resultPath names, and lays out their tree.
func readGraph(resultPath string, names []string) (Graph, error) {
	root, _, err := sumTrees(resultPath, names)
	if err != nil {
		return Graph{}, err
	}
	return layout(root), nil // a file named twice is read once
}

// run is the files of one A/B run: its baseline's index, -1 when the
// files do not hold it, and every file's, in the order of the run's
// targets.
type run struct {
	ab    *result.AB
	base  int
	files []int
}

// runs groups the A/B files by run, in the order each run first appears.
func runs(files []File) []run {
	var out []run
	byRun := map[string]int{}
	for i, f := range files {
		ab := f.File.AB
		if ab == nil {
			continue
		}
		if ri, ok := byRun[ab.Run]; ok {
			out[ri].files = append(out[ri].files, i)
			continue
		}
		byRun[ab.Run] = len(out)
		out = append(out, run{ab: ab, files: []int{i}})
	}
	for ri := range out {
		r := &out[ri]
		order := map[string]int{}
		for i, t := range r.ab.Targets {
			order[t.Name] = i
		}
		sort.SliceStable(r.files, func(a, b int) bool {
			return order[files[r.files[a]].File.Target.Name] < order[files[r.files[b]].File.Target.Name]
		})
		r.base = -1
		for _, fi := range r.files {
			if files[fi].File.Target.Name == r.ab.Baseline {
				r.base = fi
			}
		}
	}
	return out
}

// diffs makes a differential graph for every candidate of every A/B run
// and every client count at which both it and the baseline recorded
// profiles, over their complete steps.
func diffs(files []File, named []Function) []Diff {
	var out []Diff
	for _, r := range runs(files) {
		if r.base < 0 {
			continue
		}
		for _, src := range Sources {
			out = append(out, sourceDiffs(r, files, src, named)...)
		}
	}
	return out
}

// sourceDiffs are the differential graphs of one A/B run's candidates
// against its baseline from one source of profiles.
func sourceDiffs(r run, files []File, src Source, named []Function) []Diff {
	var out []Diff
	base := files[r.base]
	baseSteps := profiledSteps(base, src)
	for _, fi := range r.files {
		if fi == r.base {
			continue
		}
		cand := files[fi]
		candSteps := profiledSteps(cand, src)
		for _, c := range diffClients(baseSteps, candSteps) {
			d := Diff{Run: r.ab.Run, Base: r.base, Cand: fi, Clients: c, Source: src, Unit: baseSteps[c][0].unit,
				named: namedFunctions(named, r.ab.Run, cand.File.Target.Name, c, src)}
			bt, bf, err := sumTrees(base.Path, stepFiles(baseSteps[c]))
			ct, cf, err2 := sumTrees(cand.Path, stepFiles(candSteps[c]))
			d.BaseFiles, d.CandFiles = bf, cf
			d.BaseTxns, d.CandTxns = stepTxns(base.Path, baseSteps[c]), stepTxns(cand.Path, candSteps[c])
			if err == nil {
				err = err2
			}
			switch {
			case err != nil:
				d.Missing = err.Error()
			case shareFile(base.Path, bf, cand.Path, cf):
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
func namedFunctions(fs []Function, run, cand string, clients int, src Source) map[string]bool {
	out := map[string]bool{}
	for _, f := range fs {
		if f.Run == run && f.Candidate == cand && f.Clients == clients && f.Pooler == (src == Pooler) {
			out[frameKey(f.Symbol, filepath.Base(f.Object))] = true
			out[frameKey(f.Symbol, "")] = true
		}
	}
	return out
}

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

// profiledStep is one complete step's profile of one source: its pprof
// file, what it counts, and the transactions of the window it profiled.
type profiledStep struct {
	file, unit string
	txns       int64
}

// profiledSteps returns the profiles of one source of a file's complete
// steps, by client count.
func profiledSteps(f File, src Source) map[int][]profiledStep {
	m := map[int][]profiledStep{}
	for _, st := range f.File.Steps {
		pr := src.Of(st.Probes)
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
