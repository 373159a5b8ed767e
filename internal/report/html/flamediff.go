package html

import (
	"fmt"

	"github.com/pgscale/pgscale/internal/flame"
)

// flameDiff is a differential flame graph as the page draws it: the
// analysis' (flame.Diff) of a candidate's profile at one client count
// against the baseline's, each box coloured by how the function's count
// per transaction changed, red where it grew, blue where it shrank, pale
// where the change is not one to read. The page adds its anchor and
// label, the sides' labels, and the boxes and the functions gone with
// their figures as the page's numbers.
type flameDiff struct {
	flame.Diff
	ID         string      `json:"id"`
	Label      string      `json:"label"`
	Baseline   string      `json:"baseline"`
	Candidate  string      `json:"candidate"`
	Boxes      []diffFrame `json:"frames,omitempty"`
	GoneShares []share     `json:"gone,omitempty"`
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
		pd := flameDiff{Diff: d, ID: flameDiffID(gi, d.Cand, d.Clients, d.Source),
			Label:    fmt.Sprintf("%s against %s, %s%s", labels[d.Cand], labels[d.Base], clientsWord(d.Clients), sourceLabel(d.Source)),
			Baseline: labels[d.Base], Candidate: labels[d.Cand]}
		for _, f := range d.Frames {
			pd.Boxes = append(pd.Boxes, diffFrame{Frame: f.Frame, BaseShare: num(f.BaseShare), CandShare: num(f.CandShare),
				BasePerTxn: num(f.BasePerTxn), CandPerTxn: num(f.CandPerTxn), Change: num(f.Change), Significant: f.Significant})
		}
		for _, g := range d.Gone {
			pd.GoneShares = append(pd.GoneShares, share{Name: g.Name, Share: num(g.Share)})
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
