package flame

import (
	"math"
	"sort"

	"github.com/pgscale/pgscale/internal/stats"
)

// Diff is a differential flame graph: a candidate's profile at one client
// count against the baseline's, each side the sum of its rounds'
// profiles, divided by the transactions those rounds counted. It is laid
// out like the candidate's own graph; each box holds how the function's
// count per transaction (with its callees) changed from the baseline's,
// and whether that change is one to read: beyond sampling noise for
// perf's samples; for instructions counted under Valgrind, which are
// exact and vary only from round to round, where the comparison's
// per-function tests named a function in the box (internal/diagnose).
// Its JSON is the HTML page's data for the graph, less the indexes and
// the figures that may be NaN (its frames and what is gone).
type Diff struct {
	// Run is the A/B run (result.AB.Run); Base and Cand index the files
	// of its baseline and candidate (Set's files); Source the profile.
	Run        string `json:"-"`
	Base, Cand int    `json:"-"`
	Clients    int    `json:"clients"`
	Source     Source `json:"-"`
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
	// Missing says why there is no graph (a pprof file unreadable, no
	// samples on one side).
	Missing string      `json:"missing,omitempty"`
	Frames  []DiffFrame `json:"-"`
	// Hidden counts the candidate's samples in frames too narrow to draw.
	Hidden int64 `json:"hidden_samples,omitempty"`
	Depth  int   `json:"depth,omitempty"`
	// Gone are the baseline's widest functions (by their own samples)
	// that the candidate never ran: a graph laid out like the candidate's
	// cannot show them.
	Gone []Gone `json:"-"`
	// named are the functions the per-function tests named for this
	// candidate, step and process (counted profiles), by name and
	// library (frameKey).
	named map[string]bool
}

// DiffFrame is a box of the candidate's graph with the function's count
// at the same place in the call tree on each side: as a share of its
// samples, and per transaction (NaN when a side's transactions are not
// known); Change is the relative change per transaction (per sample
// without transactions), NaN for a box the baseline did not have, and
// Significant whether the box's change is one to read (Diff).
type DiffFrame struct {
	Frame
	BaseShare, CandShare   float64
	BasePerTxn, CandPerTxn float64
	Change                 float64
	Significant            bool
}

// Gone is a function of the baseline's that the candidate never ran, with
// its share of the baseline's samples.
type Gone struct {
	Name  string
	Share float64
}

// frameKey is a function as a frame names it, in its library ("" for
// any).
func frameKey(name, lib string) string { return lib + "\x00" + name }

// layout places the candidate's tree as a Graph is laid out, each frame
// with the baseline's count at the same place.
func (d *Diff) layout(cand, base *node) {
	d.CandSamples, d.BaseSamples = cand.value, base.value
	if cand.value == 0 || base.value == 0 {
		d.Missing = "no samples on one side"
		return
	}
	d.place(cand, base, 0, 0, minValue(cand.value))
	d.Gone = d.goneFunctions(cand, base)
}

// exposures are what each side's counts are divided by: its
// transactions, or, when a side's are not known, its samples (the graph
// then compares shares).
func (d *Diff) exposures() (cand, base float64) {
	if d.CandTxns > 0 && d.BaseTxns > 0 {
		return float64(d.CandTxns), float64(d.BaseTxns)
	}
	return float64(d.CandSamples), float64(d.BaseSamples)
}

// place lays out n (b the baseline's frame at its place, nil when none)
// and its callees; it returns whether n or a callee drawn is a function
// the per-function tests named.
func (d *Diff) place(n, b *node, depth int, start, min int64) bool {
	if n.value < min {
		d.Hidden += n.value
		return false
	}
	var bv int64
	if b != nil {
		bv = b.value
	}
	ce, be := d.exposures()
	f := DiffFrame{
		Frame:     Frame{Name: n.name, Depth: depth, Start: start, Value: n.value, Self: n.self, Lib: n.lib},
		CandShare: float64(n.value) / float64(d.CandSamples), BaseShare: float64(bv) / float64(d.BaseSamples),
		BasePerTxn: math.NaN(), CandPerTxn: math.NaN(), Change: math.NaN()}
	if d.CandTxns > 0 && d.BaseTxns > 0 {
		f.CandPerTxn, f.BasePerTxn = float64(n.value)/ce, float64(bv)/be
	}
	if bv > 0 {
		f.Change = (float64(n.value)/ce)/(float64(bv)/be) - 1
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
func (d *Diff) goneFunctions(cand, base *node) []Gone {
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
	var out []Gone
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
			out = append(out, Gone{Name: name, Share: s})
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
