package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/stats"
)

// noiseText writes the noise table: per step and measure the A/A change,
// the paired standard deviation of the per-round log ratio, and the rounds
// needed to detect a 2 % and a 5 % change.
func noiseText(b *strings.Builder, r *compare.Noise) {
	b.WriteString(noiseHeadline(r) + "\n\n")
	var t *table
	if r.Layouts > 0 {
		t = newTable("step", "measure", "A/A change", "paired sd", "layout sd", "same cluster: rounds for 2%", "5%",
			"separate clusters: rounds for 2%", "5%").alignRight(2, 3, 4, 5, 6, 7, 8)
		for _, n := range r.Rows {
			t.row(n.Measure.Step, measureLabel(n.Measure), stats.FormatChange(n.Change, n.Lo, n.Hi), sdText(n), layoutSDText(n),
				rounds(n.Rounds2), rounds(n.Rounds5), layoutRounds(n.Layouts2, n.PerLayout), layoutRounds(n.Layouts5, n.PerLayout))
		}
	} else {
		t = newTable("step", "measure", "A/A change", "paired sd", "rounds for 2%", "rounds for 5%").alignRight(2, 3, 4, 5)
		for _, n := range r.Rows {
			t.row(n.Measure.Step, measureLabel(n.Measure), stats.FormatChange(n.Change, n.Lo, n.Hi), sdText(n), rounds(n.Rounds2), rounds(n.Rounds5))
		}
	}
	notes := noiseNotes(r)
	t.text(b, 0)
	b.WriteString("\n" + noiseFootnote + "\n")
	if r.Layouts > 0 {
		b.WriteString(layoutFootnote(r) + "\n")
	}
	if len(notes) > 0 {
		b.WriteString("\nnotes:\n")
		for _, n := range notes {
			b.WriteString("  " + n + "\n")
		}
	}
}

// noiseHeadline says whose noise the table is, and what its round counts
// are sized for.
func noiseHeadline(r *compare.Noise) string {
	conf := stats.DefaultConfidence
	if len(r.Rows) > 0 {
		conf = r.Rows[0].Confidence
	}
	over := prose.Count(r.Rounds, "round")
	if r.Layouts > 0 {
		over += fmt.Sprintf(" on %s (re-created every %s)", prose.Count(r.Layouts, "cluster layout"), prose.Count(r.Reshuffle, "round"))
	}
	return fmt.Sprintf("A/A noise of %s (%s) over %s: rounds an A/B run needs to detect a change at %g%% confidence with %g%% power",
		r.Target, r.Workload, over, 100*conf, 100*r.Power)
}

// layoutFootnote says what the layout columns of a reshuffled
// calibration mean.
func layoutFootnote(r *compare.Noise) string {
	return fmt.Sprintf("With clusters re-created every %s, paired sd is the noise within one layout and layout sd the spread of the A/A difference between re-created cluster pairs. "+
		"Same cluster: what an A/B run needs when its targets share one server (settings that can be set per session), where no layout differs; "+
		"separate clusters: what it needs on servers of their own re-created every %s, rounds (layouts), the layout spread included.",
		prose.Count(r.Reshuffle, "round"), prose.Count(r.Reshuffle, "round"))
}

func layoutSDText(n stats.Noise) string {
	if math.IsNaN(n.BetweenSD) {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*n.BetweenSD)
}

// layoutRounds is the rounds and layouts an A/B run on separate clusters
// needs: "16 (8 layouts)".
func layoutRounds(layouts, perLayout int) string {
	if layouts <= 0 {
		return "-"
	}
	return fmt.Sprintf("%d (%s)", layouts*perLayout, prose.Count(layouts, "layout"))
}

// noiseFootnote says what the paired sd column means.
const noiseFootnote = "paired sd is the standard deviation of ln(b/a) over the rounds; the rounds needed grow with its square."

// noiseNotes are the rows' warnings, merged.
func noiseNotes(r *compare.Noise) []string {
	var warns []error
	for _, n := range r.Rows {
		warns = append(warns, n.Warnings...)
	}
	return mergeWarnings(warns)
}

func sdText(n stats.Noise) string {
	if math.IsNaN(n.SDLog) {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*n.SDLog)
}

func rounds(n int) string {
	if n <= 0 {
		return "-"
	}
	return fmt.Sprint(n)
}
