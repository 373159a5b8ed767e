package html

import (
	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/flame"
)

// ChangedFunction is one function whose own instructions per transaction
// changed, as the per-function tests of a counted comparison named it
// (internal/diagnose, FunctionChange), worded as internal/report words it:
// the page lists them first, whatever the totals did, each linked to its
// differential flame graph when the page draws one.
type ChangedFunction struct {
	Candidate string `json:"candidate"`
	// Cell is a suite's cell ("" outside suites).
	Cell    string `json:"cell,omitempty"`
	Clients int    `json:"clients"`
	// Process is "server" (the client backends) or "pooler".
	Process  string `json:"process"`
	Function string `json:"function"`
	// Symbol and Object are the function as the counts and profiles name
	// it: the differential flame graph draws its boxes as changed.
	Symbol string `json:"-"`
	Object string `json:"-"`
	// Base and Cand are its own instructions per transaction; Change the
	// change worded ("+11 ± 0.4 (+17.5%)"), Part what it is of its total
	// ("+0.26% of pooler-instr/txn").
	Base   float64 `json:"baseline"`
	Cand   float64 `json:"candidate_count"`
	Change string  `json:"change"`
	Part   string  `json:"of_total,omitempty"`
	// Run is the A/B run it is of (result.AB.Run): the page links it to
	// that run's differential flame graph at its client count.
	Run string `json:"-"`
}

// changedFunction is a ChangedFunction on the page: with the link to its
// differential flame graph, when drawn.
type changedFunction struct {
	ChangedFunction
	Href string `json:"href,omitempty"`
}

// pageFunctions lays out fs, unlinked (linkFunctions links them).
func pageFunctions(fs []ChangedFunction) []changedFunction {
	out := make([]changedFunction, len(fs))
	for i, f := range fs {
		out[i] = changedFunction{ChangedFunction: f}
	}
	return out
}

// linkFunctions links each changed function to the differential flame
// graph of its candidate's run at its client count, the pooler's for the
// pooler's functions, where the page draws it.
func linkFunctions(p *page, groups []group, files []compare.FileAnalysis) {
	diffs := map[string]bool{}
	for _, d := range p.FlameDiffs {
		diffs[d.ID] = d.Missing == ""
	}
	var lists [][]changedFunction
	if p.Comparison != nil {
		lists = append(lists, p.Comparison.Functions)
	}
	for _, m := range p.Matrices {
		lists = append(lists, m.Functions)
	}
	for _, fs := range lists {
		for i := range fs {
			f := &fs[i]
			gi, fi := candidateFile(groups, files, f.Run, f.Candidate)
			if gi < 0 || fi < 0 {
				continue
			}
			for _, src := range flame.Sources {
				if id := flameDiffID(gi, fi, f.Clients, src); diffs[id] && (src == flame.Pooler) == (f.Process == "pooler") {
					f.Href = "#fig-" + id
				}
			}
		}
	}
}
