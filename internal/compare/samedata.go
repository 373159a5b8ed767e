package compare

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/result"
)

// countedDataNote says what the interval of a counted A/B run covers when
// its layouts record where each target's data came from (result.Layout's
// Data): the targets that ran on byte-identical copies of the baseline's
// data differ by their code alone within a layout, so the interval covers
// the code and the layouts' data; a target whose storage could not run a
// copy made its own, and its interval covers that too. "" when no layout
// says (every target made its own data, or an older file). The remedies
// it names are in say's words.
func countedDataNote(run *result.AB, say diagnose.Say) string {
	from := ""
	copies, own := map[string]bool{}, map[string]string{}
	for _, l := range run.Layouts {
		if l.Data == nil {
			continue
		}
		from = l.Data.From
		for _, c := range l.Data.Copies {
			copies[c] = true
		}
		for n, why := range l.Data.Own {
			own[n] = why
		}
	}
	if from == "" {
		return ""
	}
	var s string
	n := len(run.Layouts)
	switch {
	case len(copies) == 0:
		s = fmt.Sprintf("counted on %s, every target on data of its own", prose.Count(n, "cluster layout"))
	case n > 1:
		s = fmt.Sprintf("counted on %s, paired on byte-identical copies of each layout's data (made by %s, copied to %s): the interval covers the code and %d layouts of data, each made anew with its set-up (an index's graph, a random sample, a table's physical order)",
			prose.Count(n, "cluster layout"), from, names(copies), n)
	default:
		s = fmt.Sprintf("counted on one cluster layout, kept for the whole run, paired on byte-identical copies of its data (made by %s, copied to %s): the difference is the code's on that data; the interval does not cover data made again (an index's graph, a random sample, a table's physical order)",
			from, names(copies))
		if w := say.Of(diagnose.ReshuffleEveryRound); w != "" {
			s += ", which " + w + " makes for every round"
		}
	}
	if len(copies) > 0 {
		s += fmt.Sprintf("; the data is made by %s's code", from)
		if w := say.Of(diagnose.SeparateData); w != "" {
			s += ", so a change in how a target builds its data (an index's construction) shows only with " + w
		}
	}
	if len(own) > 0 {
		var parts []string
		for _, name := range sortedKeys(own) {
			parts = append(parts, fmt.Sprintf("%s made data of its own (%s)", name, own[name]))
		}
		s += "; " + strings.Join(parts, "; ") + ": its interval covers what its set-up builds differently too"
		if n == 1 {
			s += " but for this one layout only"
		}
	}
	return s
}

// names lists a set's names, sorted, joined with commas.
func names(set map[string]bool) string {
	var out []string
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

func sortedKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
