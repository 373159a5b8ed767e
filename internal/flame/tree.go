// Package flame reads the CPU profiles (pprof files) that result files
// name and makes their flame graphs: a step's call tree, or an A/B
// target's summed over its rounds, laid out widest first; and the
// differential graph of a candidate against its baseline, each box's
// change per transaction judged (a test of two rates for perf's samples;
// for instructions counted under Valgrind, the functions the comparison's
// per-function tests named). It is part of the analysis
// (internal/compare makes its Set once): the renderers lay out what it
// made and read no profile.
package flame

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	pprof "github.com/google/pprof/profile"
)

// MinFrameShare is the narrowest frame laid out, as a share of all
// samples: a thousandth is one pixel of a page-wide graph. Narrower
// frames are left out and their samples counted as hidden.
const MinFrameShare = 0.001

// Frame is one box of a flame graph: a function in its library (Lib, ""
// when not known) at a depth of the call stack (0 is the root, "all"),
// Start and Value in samples, Self the samples in the function itself.
// The page's data block holds frames as they are (internal/report/html).
type Frame struct {
	Name  string `json:"name"`
	Depth int    `json:"depth"`
	Start int64  `json:"start"`
	Value int64  `json:"value"`
	Self  int64  `json:"self,omitempty"`
	Lib   string `json:"lib,omitempty"`
}

// Graph is a call tree laid out: Samples in all, the frames drawn (each
// at least MinFrameShare of the samples, parents first, children widest
// first), the samples of the frames too narrow to draw, and the depth.
type Graph struct {
	Samples int64   `json:"samples"`
	Frames  []Frame `json:"frames,omitempty"`
	Hidden  int64   `json:"hidden_samples,omitempty"`
	Depth   int     `json:"depth,omitempty"`
}

// node is one function in the call tree of a profile.
type node struct {
	name, lib   string
	value, self int64
	kids        []*node
	index       map[string]*node
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

// libName is the library a mapping's file names: its base name, "kernel"
// for the kernel's.
func libName(file string) string {
	switch {
	case file == "":
		return ""
	case strings.HasPrefix(file, "[kernel"):
		return "kernel"
	}
	return filepath.Base(file)
}

// profilePath is where a result file's pprof file is: as recorded when
// absolute, else relative to the result file's directory.
func profilePath(resultPath, file string) string {
	if filepath.IsAbs(file) {
		return file
	}
	return filepath.Join(filepath.Dir(resultPath), file)
}

// sumTrees reads the pprof files a result file names and adds up their
// call trees; a file named twice (a result written before every round had
// its own) is read once. It returns the files read, as named.
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

// child returns n's child of that name and library, added when new.
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

// minValue is the narrowest frame of a tree of total samples.
func minValue(total int64) int64 { return int64(float64(total)*MinFrameShare + 0.999) }

// layout lays out the tree rooted at root.
func layout(root *node) Graph {
	g := Graph{Samples: root.value}
	if root.value == 0 {
		return g
	}
	g.place(root, 0, 0, minValue(root.value))
	return g
}

// place places n and its children, widest first, from start; frames
// narrower than min samples are counted as hidden.
func (g *Graph) place(n *node, depth int, start, min int64) {
	if n.value < min {
		g.Hidden += n.value
		return
	}
	g.Frames = append(g.Frames, Frame{Name: n.name, Depth: depth, Start: start, Value: n.value, Self: n.self, Lib: n.lib})
	g.Depth = max(g.Depth, depth+1)
	n.sortKids()
	at := start
	for _, k := range n.kids {
		g.place(k, depth+1, at, min)
		at += k.value
	}
}
