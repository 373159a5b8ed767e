package diagnose

import (
	"fmt"
	"strings"

	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/result"
)

// whatFailed says what failed in a step that completed no transaction:
// why it stopped and the error seen most often, with its place in the
// script ("no transaction completed: all 2 clients stopped on errors:
// div.sql:3: ERROR: division by zero (SQLSTATE 22012), running \"SELECT
// 1/0\""). Empty when some transaction completed: a step that measured
// something is judged on it.
func whatFailed(s result.Step) string {
	if s.Summary.Transactions > 0 || s.Summary.TPS > 0 {
		return ""
	}
	var parts []string
	if s.Reason != "" {
		parts = append(parts, s.Reason)
	}
	if len(s.Errors) > 0 {
		errs := append([]result.Error(nil), s.Errors...)
		result.SortErrors(errs)
		e := errs[0]
		// A reason that already says the error (the run's own "every
		// client failed: ...") needs it once.
		if !strings.Contains(s.Reason, e.Message) {
			parts = append(parts, e.Message)
		}
		if n := len(errs) - 1; n > 0 {
			parts[len(parts)-1] += fmt.Sprintf(" (and %d other %s)", n, plural(int64(n), "error"))
		}
	}
	if len(parts) == 0 {
		return "no transaction completed"
	}
	return "no transaction completed: " + strings.Join(parts, ": ")
}

// failedSentence says a step that completed no transaction: what failed,
// and that it is no bottleneck's.
func failedSentence(at string, f Figures) string {
	return fmt.Sprintf("%s %s; with nothing measured, no bottleneck is judged: fix that and run again.", at, f.Failed)
}

// failedParagraph is the whole diagnosis of a sweep none of whose steps
// completed a transaction.
func failedParagraph(steps []result.Step, figs []Figures) string {
	if len(steps) == 1 {
		return fmt.Sprintf("One step, %s: %s. With nothing measured, no bottleneck is judged: fix that and run again.",
			prose.Count(steps[0].Clients, "client"), figs[0].Failed)
	}
	var b strings.Builder
	b.WriteString("No step completed a transaction.")
	for i, s := range steps {
		fmt.Fprintf(&b, " At %s: %s.", prose.Count(s.Clients, "client"), figs[i].Failed)
	}
	b.WriteString(" With nothing measured, no bottleneck is judged: fix that and run again.")
	return b.String()
}
