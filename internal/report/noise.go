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
	conf := stats.DefaultConfidence
	if len(r.Rows) > 0 {
		conf = r.Rows[0].Confidence
	}
	fmt.Fprintf(b, "A/A noise of %s (%s) over %d rounds: rounds an A/B run needs to detect a change at %g%% confidence with %g%% power\n\n",
		r.Target, r.Workload, r.Rounds, 100*conf, 100*r.Power)
	t := newTable("step", "measure", "A/A change", "paired sd", "rounds for 2%", "rounds for 5%").alignRight(2, 3, 4, 5)
	var warns []error
	for _, n := range r.Rows {
		sd := "-"
		if !math.IsNaN(n.SDLog) {
			sd = fmt.Sprintf("%.1f%%", 100*n.SDLog)
		}
		t.row(n.Measure.Step, measureLabel(n.Measure), stats.FormatChange(n.Change, n.Lo, n.Hi), sd, rounds(n.Rounds2), rounds(n.Rounds5))
		warns = append(warns, n.Warnings...)
	}
	notes := mergeWarnings(warns)
	t.text(b, 0)
	b.WriteString("\npaired sd is the standard deviation of ln(b/a) over the rounds; the rounds needed grow with its square.\n")
	if len(notes) > 0 {
		b.WriteString("\nnotes:\n")
		for _, n := range notes {
			b.WriteString("  " + n + "\n")
		}
	}
}

func rounds(n int) string {
	if n <= 0 {
		return "-"
	}
	return fmt.Sprint(n)
}
