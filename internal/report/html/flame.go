package html

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	pprof "github.com/google/pprof/profile"

	"github.com/pgscale/pgscale/internal/prose"
)

// minFrameShare is the narrowest frame drawn, as a share of all samples: a
// thousandth is one pixel of a page-wide graph. Narrower frames are left
// out and their samples counted in profile.Hidden.
const minFrameShare = 0.001

// profiles builds the flame graphs of the pprof files the result files
// name, read from beside each result file: one per step of a sweep, and
// for an A/B target one per client count, its rounds summed.
func profiles(files []NamedFile, labels []string) []profile {
	var out []profile
	users := map[string][]string{} // resolved path -> the graphs naming it
	for fi, nf := range files {
		for _, p := range fileProfiles(fi, nf, labels[fi]) {
			p.path = profilePath(nf.Name, p.File)
			if prev := users[p.path]; len(prev) > 0 {
				p.SameAs = prev[0]
			} else if err := p.read(nf.Name); err != nil {
				p.Missing = err.Error()
			}
			users[p.path] = append(users[p.path], p.Label)
			out = append(out, p)
		}
	}
	// An A/B run with --profile names one file per step number, so every
	// round and target overwrote the same file: say so rather than show
	// one profile as if it were each step's.
	for i := range out {
		if out[i].SameAs != "" {
			continue
		}
		for _, u := range users[out[i].path] {
			if u != out[i].Label {
				out[i].SharedWith = append(out[i].SharedWith, u)
			}
		}
	}
	return out
}

// fileProfiles lists a file's flame graphs, not yet read. An A/B target
// gets one per client count, summed over the rounds whose step completed
// (the rounds the comparison uses): a graph per round would be as noisy
// as the rounds are short, and a page of ten rounds ten times as long.
func fileProfiles(fi int, nf NamedFile, label string) []profile {
	var out []profile
	for _, src := range profileSources {
		out = append(out, sourceProfiles(fi, nf, label+src.label, src)...)
	}
	return out
}

// sourceProfiles are a file's flame graphs of one source of profiles.
func sourceProfiles(fi int, nf NamedFile, label string, src profileSource) []profile {
	var out []profile
	at := map[int]int{} // clients -> index in out (A/B)
	for si, st := range nf.File.Steps {
		pr := src.of(st.Probes)
		if pr == nil {
			continue
		}
		if nf.File.AB == nil {
			out = append(out, profile{ID: fmt.Sprintf("flame-%d-%d%s", fi, si, src.id), Label: fmt.Sprintf("%s, step %d: %s", label, si+1, clientsWord(st.Clients)),
				Clients: st.Clients, File: pr.File, Files: []string{pr.File}, Samples: pr.Samples, Unit: pr.Unit})
			continue
		}
		if !st.Complete {
			continue
		}
		i, ok := at[st.Clients]
		if !ok {
			i = len(out)
			at[st.Clients] = i
			out = append(out, profile{ID: fmt.Sprintf("flame-%d-c%d%s", fi, st.Clients, src.id), Clients: st.Clients, File: pr.File, Unit: pr.Unit})
		}
		p := &out[i]
		p.Files = append(p.Files, pr.File)
		p.Samples += pr.Samples
		p.Rounds++
		p.Label = fmt.Sprintf("%s, %s: %s", label, clientsWord(st.Clients), prose.Count(p.Rounds, "round"))
	}
	return out
}

// profilePath is where a result file's pprof file is: as recorded when
// absolute, else relative to the result file's directory.
func profilePath(resultPath, file string) string {
	if filepath.IsAbs(file) {
		return file
	}
	return filepath.Join(filepath.Dir(resultPath), file)
}

// read loads the graph's pprof files, named by the result file at
// resultPath, into its frames.
func (p *profile) read(resultPath string) error {
	root, _, err := sumTrees(resultPath, p.Files)
	if err != nil {
		return err
	}
	p.Samples = root.value // a file named twice is read once
	p.Frames, p.Hidden, p.Depth = nil, 0, 0
	if root.value == 0 {
		return nil
	}
	min := int64(float64(root.value)*minFrameShare + 0.999)
	p.layout(root, 0, 0, min)
	return nil
}

// readTree reads the pprof file at path into a call tree of its samples,
// rooted at "all".
func readTree(path string) (*node, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("profile file not found beside the result file: %s", path)
	}
	defer fh.Close()
	prof, err := pprof.Parse(fh)
	if err != nil {
		return nil, fmt.Errorf("%s: not a pprof profile: %v", path, err)
	}
	idx, err := prof.SampleIndexByName("samples")
	if err != nil {
		idx = 0
	}
	root := &node{name: "all"}
	for _, s := range prof.Sample {
		if idx >= len(s.Value) {
			continue
		}
		v := s.Value[idx]
		n := root
		n.value += v
		// Location[0] is the leaf; within a location the last line is the
		// function the others were inlined into.
		for i := len(s.Location) - 1; i >= 0; i-- {
			loc := s.Location[i]
			lib := ""
			if loc.Mapping != nil {
				lib = libName(loc.Mapping.File)
			}
			for j := len(loc.Line) - 1; j >= 0; j-- {
				name := "?"
				if f := loc.Line[j].Function; f != nil {
					name = f.Name
				}
				n = n.child(name, lib)
				n.value += v
			}
			if len(loc.Line) == 0 {
				n = n.child(fmt.Sprintf("0x%x", loc.Address), lib)
				n.value += v
			}
		}
		n.self += v
	}
	return root, nil
}

func libName(file string) string {
	switch {
	case file == "":
		return ""
	case strings.HasPrefix(file, "[kernel"):
		return "kernel"
	}
	return filepath.Base(file)
}

// node is one function in the call tree of a profile.
type node struct {
	name, lib   string
	value, self int64
	kids        []*node
	index       map[string]*node
}

// find returns n's child of that name and library, nil when there is none.
func (n *node) find(name, lib string) *node {
	if n == nil {
		return nil
	}
	return n.index[lib+"\x00"+name]
}

// add adds the samples of o, a tree of the same kind, to n.
func (n *node) add(o *node) {
	n.value += o.value
	n.self += o.self
	for _, k := range o.kids {
		n.child(k.name, k.lib).add(k)
	}
}

// sortKids orders n's children widest first, then by name.
func (n *node) sortKids() {
	sort.Slice(n.kids, func(i, j int) bool {
		if n.kids[i].value != n.kids[j].value {
			return n.kids[i].value > n.kids[j].value
		}
		return n.kids[i].name < n.kids[j].name
	})
}

func (n *node) child(name, lib string) *node {
	key := lib + "\x00" + name
	if c := n.index[key]; c != nil {
		return c
	}
	if n.index == nil {
		n.index = map[string]*node{}
	}
	c := &node{name: name, lib: lib}
	n.index[key] = c
	n.kids = append(n.kids, c)
	return c
}

// layout places n and its children, widest first, from start; frames
// narrower than min samples are counted as hidden.
func (p *profile) layout(n *node, depth int, start, min int64) {
	if n.value < min {
		p.Hidden += n.value
		return
	}
	p.Frames = append(p.Frames, frame{Name: n.name, Depth: depth, Start: start, Value: n.value, Self: n.self, Lib: n.lib})
	p.Depth = max(p.Depth, depth+1)
	n.sortKids()
	at := start
	for _, k := range n.kids {
		p.layout(k, depth+1, at, min)
		at += k.value
	}
}
