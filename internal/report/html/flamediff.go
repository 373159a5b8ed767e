package html

import (
	"fmt"

	"github.com/pgscale/pgscale/internal/flame"
)

// flameDiff is a differential flame graph as the page draws it: the
// analysis' (flame.Diff) of a candidate's profile at one client count
// against the baseline's, each box coloured by how the function's count
// per transaction changed, red where it grew, blue where it shrank, pale
// where the change is not one to read.
type flameDiff struct {
	ID        string `json:"id"`
	Label     string `json:"label"`
	Clients   int    `json:"clients"`
	Baseline  string `json:"baseline"`
	Candidate string `json:"candidate"`
	// Unit is what the profiles count: "" for perf's samples,
	// "instructions" counted under Valgrind.
	Unit        string      `json:"unit,omitempty"`
	BaseSamples int64       `json:"baseline_samples"`
	CandSamples int64       `json:"candidate_samples"`
	BaseFiles   []string    `json:"baseline_files"`
	CandFiles   []string    `json:"candidate_files"`
	BaseTxns    int64       `json:"baseline_transactions,omitempty"`
	CandTxns    int64       `json:"candidate_transactions,omitempty"`
	Missing     string      `json:"missing,omitempty"`
	Frames      []diffFrame `json:"frames,omitempty"`
	Hidden      int64       `json:"hidden_samples,omitempty"`
	Depth       int         `json:"depth,omitempty"`
	Gone        []share     `json:"gone,omitempty"`
}

// diffFrame is a box of a differential graph (flame.DiffFrame), its
// figures as the page's numbers.
type diffFrame struct {
	flame.Frame
	BaseShare   num  `json:"baseline_share"`
	CandShare   num  `json:"candidate_share"`
	BasePerTxn  num  `json:"baseline_per_txn"`
	CandPerTxn  num  `json:"candidate_per_txn"`
	Change      num  `json:"change"`
	Significant bool `json:"significant,omitempty"`
}

// pageDiffs lays out the analysis' differential graphs of A/B runs'
// candidates against their baselines.
func pageDiffs(set *flame.Set, groups []group, labels []string) []flameDiff {
	if set == nil {
		return nil
	}
	var out []flameDiff
	for _, d := range set.Diffs {
		gi := runGroup(groups, d.Run)
		pd := flameDiff{ID: flameDiffID(gi, d.Cand, d.Clients, d.Source), Clients: d.Clients,
			Label:    fmt.Sprintf("%s against %s, %s%s", labels[d.Cand], labels[d.Base], clientsWord(d.Clients), sourceLabel(d.Source)),
			Baseline: labels[d.Base], Candidate: labels[d.Cand], Unit: d.Unit,
			BaseSamples: d.BaseSamples, CandSamples: d.CandSamples, BaseFiles: d.BaseFiles, CandFiles: d.CandFiles,
			BaseTxns: d.BaseTxns, CandTxns: d.CandTxns, Missing: d.Missing, Hidden: d.Hidden, Depth: d.Depth}
		for _, f := range d.Frames {
			pd.Frames = append(pd.Frames, diffFrame{Frame: f.Frame, BaseShare: num(f.BaseShare), CandShare: num(f.CandShare),
				BasePerTxn: num(f.BasePerTxn), CandPerTxn: num(f.CandPerTxn), Change: num(f.Change), Significant: f.Significant})
		}
		for _, g := range d.Gone {
			pd.Gone = append(pd.Gone, share{Name: g.Name, Share: num(g.Share)})
		}
		out = append(out, pd)
	}
	return out
}

// runGroup is the index of A/B run run's group.
func runGroup(groups []group, run string) int {
	for gi, g := range groups {
		if g.ab != nil && g.ab.Run == run {
			return gi
		}
	}
	return -1
}

// flameDiffID is the page's anchor of a differential graph.
func flameDiffID(gi, fi, clients int, src flame.Source) string {
	return fmt.Sprintf("flame-diff-%d-%d-c%d%s", gi, fi, clients, sourceID(src))
}

// FlameDiffLink is a differential flame graph the page draws, for another
// format to link to: its anchor on the page (ID: the id of its figure,
// which the page writes whether or not the graph could be drawn, and
// which says why not when it could not), the A/B run (result.AB.Run), the
// candidate, the client count, and whether it is the pooler's graph.
type FlameDiffLink struct {
	ID, Run, Candidate string
	Clients            int
	Pooler             bool
}

// FlameDiffLinks lists the differential flame graphs the page of doc
// draws (where both sides' profiles are named, whether or not they could
// be read).
func FlameDiffLinks(doc Doc) []FlameDiffLink {
	if doc.Flames == nil {
		return nil
	}
	groups := groupFiles(doc.Files)
	var out []FlameDiffLink
	for _, d := range doc.Flames.Diffs {
		out = append(out, FlameDiffLink{ID: "fig-" + flameDiffID(runGroup(groups, d.Run), d.Cand, d.Clients, d.Source), Run: d.Run,
			Candidate: doc.Files[d.Cand].File.Target.Name, Clients: d.Clients, Pooler: d.Source == flame.Pooler})
	}
	return out
}
