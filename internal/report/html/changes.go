package html

import (
	"fmt"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/flame"
)

// linkCards gives each change's evidence card its links: the timeline of
// its run at its client count, the differential flame graph of its
// candidate there (the pooler's for a pooler measure, when drawn), and
// the candidate's steps with their evidence.
func linkCards(p *page, groups []group, files []compare.FileAnalysis) {
	timelines := map[string]bool{}
	for _, t := range p.Timelines {
		timelines[t.ID] = true
	}
	diffs := map[string]bool{}
	for _, d := range p.FlameDiffs {
		diffs[d.ID] = d.Missing == ""
	}
	var ms []*matrix
	if p.Comparison != nil && p.Comparison.Matrix != nil {
		ms = append(ms, p.Comparison.Matrix)
	}
	for i := range p.Matrices {
		ms = append(ms, &p.Matrices[i])
	}
	for _, m := range ms {
		for i := range m.Cards {
			c := &m.Cards[i]
			gi, fi := candidateFile(groups, files, c.src.Run, c.src.Candidate)
			if gi < 0 {
				continue
			}
			cl := c.src.Clients
			if id := fmt.Sprintf("timeline-ab%d-c%d", gi, cl); timelines[id] {
				c.Links = append(c.Links, keyVal{"#fig-" + id, "timeline at " + clientsWord(cl)})
			}
			if fi < 0 {
				continue
			}
			var diff string
			for _, src := range flame.Sources {
				id := flameDiffID(gi, fi, cl, src)
				if !diffs[id] {
					continue
				}
				if diff == "" || (src == flame.Pooler) == c.src.Pooler {
					diff = id
				}
			}
			if diff != "" {
				c.Links = append(c.Links, keyVal{"#fig-" + diff, "differential flame graph"})
			}
			c.Links = append(c.Links, keyVal{fmt.Sprintf("#evidence-%d", fi), c.src.Candidate + "'s steps and their evidence"})
		}
	}
}

// candidateFile finds the group of A/B run run and, in it, the file of
// the target named cand: -1 for what is not in the page.
func candidateFile(groups []group, files []compare.FileAnalysis, run, cand string) (gi, fi int) {
	if run == "" {
		return -1, -1
	}
	for gi, g := range groups {
		if g.ab == nil || g.ab.Run != run {
			continue
		}
		for _, fi := range g.files {
			if files[fi].File.Target.Name == cand {
				return gi, fi
			}
		}
		return gi, -1
	}
	return -1, -1
}
