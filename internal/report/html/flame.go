package html

import (
	"fmt"

	"github.com/pgscale/pgscale/internal/flame"
	"github.com/pgscale/pgscale/internal/prose"
)

// pageProfiles lays out the analysis' flame graphs of the files' profiles
// (internal/flame): one per step of a sweep, and for an A/B target one per
// client count, its rounds summed.
func pageProfiles(set *flame.Set, labels []string) []profile {
	if set == nil {
		return nil
	}
	out := make([]profile, len(set.Profiles))
	for i, fp := range set.Profiles {
		out[i] = profileOf(fp, labels[fp.File])
	}
	// An A/B run with --profile from before every round and target had
	// its own file names one file per step number: say so rather than
	// show one profile as if it were each step's.
	for i, fp := range set.Profiles {
		if fp.SameAs >= 0 {
			out[i].DrawnAt = out[fp.SameAs].Label
		}
		for _, j := range fp.SharedWith {
			out[i].SharedBy = append(out[i].SharedBy, out[j].Label)
		}
	}
	return out
}

// profileOf is a graph of the file labelled label, named for the page.
func profileOf(fp flame.Profile, label string) profile {
	label += sourceLabel(fp.Source)
	p := profile{Profile: fp, First: fp.Files[0]}
	if fp.Step >= 0 {
		p.ID = fmt.Sprintf("flame-%d-%d%s", fp.File, fp.Step, sourceID(fp.Source))
		p.Label = fmt.Sprintf("%s, step %d: %s", label, fp.Step+1, clientsWord(fp.Clients))
		return p
	}
	p.ID = fmt.Sprintf("flame-%d-c%d%s", fp.File, fp.Clients, sourceID(fp.Source))
	p.Label = fmt.Sprintf("%s, %s: %s", label, clientsWord(fp.Clients), prose.Count(fp.Rounds, "round"))
	return p
}

// sourceID is what a source's graphs add to their anchors on the page.
func sourceID(s flame.Source) string {
	if s == flame.Pooler {
		return "-pooler"
	}
	return ""
}

// sourceLabel is what a source's graphs add to their labels.
func sourceLabel(s flame.Source) string {
	if s == flame.Pooler {
		return ", the pooler"
	}
	return ""
}
