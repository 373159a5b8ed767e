package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/pgscale/pgscale/internal/stats"
)

// WriteMarkdown writes the comparison as a GitHub-flavoured markdown
// comment, ready to post on a pull request: the headline first, the table
// and the notes folded under it.
func WriteMarkdown(w io.Writer, r *ABReport) error {
	var b strings.Builder
	fmt.Fprintf(&b, "### pgscale ab: %s\n\n", mdText(r.Workload))
	for i, v := range r.Verdicts {
		mark := "✅"
		if !v.Passed() {
			mark = "❌"
		}
		line := r.CandidateHeadline(i)
		if len(r.Verdicts) == 1 {
			fmt.Fprintf(&b, "%s **%s**\n", mark, mdText(line))
		} else {
			fmt.Fprintf(&b, "- %s **%s**\n", mark, mdText(line))
		}
	}
	if r.Incomplete != "" {
		fmt.Fprintf(&b, "\n⚠️ **Incomplete:** %s\n", mdText(r.Incomplete))
	}
	summary := make([]string, len(r.Verdicts))
	for i, v := range r.Verdicts {
		summary[i] = v.Counts()
		if len(r.Verdicts) > 1 {
			summary[i] = r.Candidates[i] + ": " + summary[i]
		}
	}
	fmt.Fprintf(&b, "\n<details>\n<summary>%s</summary>\n\n", mdText(strings.Join(summary, "; ")))

	single := len(r.Candidates) == 1
	head := []string{"step", "measure", mdText(r.Baseline)}
	align := []string{":--", ":--", "--:"}
	for _, c := range r.Candidates {
		head = append(head, mdText(c), "change")
		align = append(align, "--:", "--:")
		if single {
			head = append(head, "bound")
			align = append(align, "--:")
		}
		head = append(head, "status")
		align = append(align, ":--")
	}
	b.WriteString("| " + strings.Join(head, " | ") + " |\n")
	b.WriteString("|" + strings.Join(align, "|") + "|\n")
	for _, row := range r.Rows {
		cells := []string{row.Measure.Step, mdText(measureLabel(row.Measure)), FormatValue(row.Base.Median)}
		for _, c := range row.Cells {
			a := c.Assessment
			change := stats.FormatChange(a.Change, a.Lo, a.Hi)
			status := statusText(a)
			if !single && a.Bound != nil {
				status += " (bound " + boundText(a) + ")"
			}
			if a.Status == stats.OutsideBounds {
				change, status = "**"+change+"**", "❌ **"+status+"**"
			}
			cells = append(cells, FormatValue(c.Cand.Median), change)
			if single {
				cells = append(cells, boundText(a))
			}
			cells = append(cells, status)
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	fmt.Fprintf(&b, "\n%s.\n", mdText(methodLine(r)))
	if notes := reportNotes(r); len(notes) > 0 {
		b.WriteString("\nNotes:\n")
		for _, n := range notes {
			fmt.Fprintf(&b, "- %s\n", mdText(n))
		}
	}
	b.WriteString("\n</details>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// mdText keeps text from breaking a markdown table or being read as
// markup.
func mdText(s string) string {
	r := strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;", "*", `\*`, "_", `\_`, "`", "\\`")
	return r.Replace(s)
}
