package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/stats"
)

// noiseText writes the noise table: per step and measure the A/A change,
// the paired standard deviation of the per-round log ratio, and the rounds
// needed to detect a 2 % and a 5 % change.
func noiseText(b *strings.Builder, r *compare.Noise) {
	b.WriteString(noiseHeadline(r) + "\n\n")
	t := newTable("step", "measure", "A/A change", "paired sd", "rounds for 2%", "rounds for 5%").alignRight(2, 3, 4, 5)
	for _, n := range r.Rows {
		t.row(n.Measure.Step, measureLabel(n.Measure), stats.FormatChange(n.Change, n.Lo, n.Hi), sdText(n), rounds(n.Rounds2), rounds(n.Rounds5))
	}
	notes := noiseNotes(r)
	t.text(b, 0)
	b.WriteString("\n" + noiseFootnote + "\n")
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
	return fmt.Sprintf("A/A noise of %s (%s) over %d rounds: rounds an A/B run needs to detect a change at %g%% confidence with %g%% power",
		r.Target, r.Workload, r.Rounds, 100*conf, 100*r.Power)
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
