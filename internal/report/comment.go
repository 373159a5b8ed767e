package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/report/html"
	"github.com/pgscale/pgscale/internal/stats"
)

// commentColumns are the measures a row of the comment shows, as the
// pooler CI bot's did: throughput and what each transaction cost the
// pooler.
var commentColumns = []struct{ measure, title string }{
	{"tps", "throughput"},
	{"pooler-cpu/txn", "pooler cpu/txn"},
	{"pooler-instr/txn", "pooler instr/txn"},
	{"pooler-ctx/txn", "pooler ctx/txn"},
}

// writeComment writes a comparison as the pooler CI bot's pull-request
// comment: one headline ("passed: all N measures within bounds", "failed:
// 1 of N measures outside bounds"), a row per suite (a suite's cell, or an
// A/B run's workload) and client count with throughput and the pooler's
// costs per transaction as "value (change ± uncertainty)", the measures
// outside their bounds, and links to the HTML report's differential flame
// graphs (HTMLFile, by default report.html beside it).
func writeComment(w io.Writer, d *Doc) error {
	type suiteRows struct {
		name string
		cmp  *compare.Comparison
	}
	var rows []suiteRows
	var verdicts []stats.Verdict
	var base string
	var cands []string
	title := "pgscale"
	switch {
	case d.Suite != nil && len(d.Suite.Verdicts) > 0:
		s := d.Suite
		title, base, cands, verdicts = "pgscale suite "+s.Name, s.Baseline, s.Candidates, s.Verdicts
		for _, c := range s.Cells {
			rows = append(rows, suiteRows{c.Key, c.Comparison})
		}
	case d.Comparison != nil:
		c := d.Comparison
		title, base, cands, verdicts = "pgscale ab", c.Baseline, c.Candidates, c.Verdicts
		rows = append(rows, suiteRows{c.Workload, c})
	default:
		return needComparison("comment")
	}
	total, outside := 0, 0
	for _, v := range verdicts {
		total, outside = total+v.Total, outside+v.Outside
	}
	head := fmt.Sprintf("passed: all %d measures within bounds", total)
	if outside > 0 {
		head = fmt.Sprintf("failed: %d of %d measures outside bounds", outside, total)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### %s: %s\n\n", title, head)
	links := html.FlameDiffLinks(htmlDoc(d))
	htmlFile := d.HTMLFile
	if htmlFile == "" {
		htmlFile = "report.html"
	}
	for ci, cand := range cands {
		fmt.Fprintf(&b, "**%s** against **%s**: %s\n\n", mdEscape(cand), mdEscape(base), verdicts[ci].Headline())
		b.WriteString("| suite | clients |")
		for _, col := range commentColumns {
			b.WriteString(" " + col.title + " |")
		}
		b.WriteString("\n| --- | --: |" + strings.Repeat(" --: |", len(commentColumns)) + "\n")
		// The measures outside bounds, as the verdict judged them (a
		// suite's suite-wide, each naming its cell).
		var failing, graphs []string
		for _, a := range verdicts[ci].Assessments {
			if a.Status == stats.OutsideBounds {
				failing = append(failing, fmt.Sprintf("- `%s` %s", mdCode(a.Measure.Key()), strings.TrimPrefix(a.String(), a.Measure.Key()+" ")))
			}
		}
		for _, r := range rows {
			if r.cmp == nil {
				fmt.Fprintf(&b, "| %s | – |%s\n", mdEscape(r.name), strings.Repeat(" – |", len(commentColumns)))
				continue
			}
			for _, step := range commentSteps(r.cmp) {
				fmt.Fprintf(&b, "| %s | %s |", mdEscape(r.name), strings.TrimPrefix(step, "c="))
				for _, col := range commentColumns {
					b.WriteString(" " + commentCell(r.cmp, ci, col.measure, step) + " |")
				}
				b.WriteString("\n")
			}
			run := commentRun(d, r.name)
			for _, l := range links {
				if l.Candidate == cand && (d.Suite == nil || l.Run == run) {
					what := "server"
					if l.Pooler {
						what = "pooler"
					}
					graphs = append(graphs, fmt.Sprintf("[%s, %s, c=%d](%s#%s)", what, mdEscape(r.name), l.Clients, htmlFile, l.ID))
				}
			}
		}
		b.WriteString("\n")
		if slices.ContainsFunc(rows, func(r suiteRows) bool { return r.cmp != nil && r.cmp.Counted }) {
			b.WriteString("Counted under Valgrind: the instructions are the programs', the throughput, CPU and context switches Valgrind's, so those are not compared (–); the same preset without `--count` measures them natively.\n\n")
		}
		if len(failing) > 0 {
			b.WriteString("Outside bounds:\n\n" + strings.Join(failing, "\n") + "\n\n")
		}
		if len(graphs) > 0 {
			b.WriteString("Differential flame graphs: " + strings.Join(graphs, " · ") + "\n\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// commentSteps are a comparison's steps, in order.
func commentSteps(c *compare.Comparison) []string {
	var steps []string
	seen := map[string]bool{}
	for _, r := range c.Rows {
		if s := r.Measure.Step; !seen[s] {
			seen[s] = true
			steps = append(steps, s)
		}
	}
	return steps
}

// commentCell is candidate ci's value of a measure at a step, with its
// change: "41.2 µs (+35.0% ± 4.1%)", bold when outside its bound; "–"
// when the measure was not taken.
func commentCell(c *compare.Comparison, ci int, measure, step string) string {
	for _, r := range c.Rows {
		if r.Measure.Name != measure || r.Measure.Step != step || ci >= len(r.Cells) {
			continue
		}
		a := r.Cells[ci].Assessment
		if math.IsNaN(a.Cand) || a.Cand <= 0 {
			return "–"
		}
		s := fmt.Sprintf("%s (%s)", commentValue(a.Cand, r.Measure.Unit), stats.FormatChange(a.Change, a.Lo, a.Hi))
		if a.Status == stats.OutsideBounds {
			s = "**" + s + "**"
		}
		return s
	}
	return "–"
}

// commentValue writes a measure's value with its unit, in few digits.
func commentValue(v float64, unit string) string {
	var s string
	switch {
	case v >= 1000:
		s = fmt.Sprintf("%.0f", v)
	case v >= 10:
		s = fmt.Sprintf("%.1f", v)
	default:
		s = fmt.Sprintf("%.2f", v)
	}
	switch unit {
	case "txn/s":
		return s + " tps"
	case "µs":
		return s + " µs"
	}
	return s
}

// commentRun is the A/B run of a suite's cell named key, "" when unknown.
func commentRun(d *Doc, key string) string {
	if d.Suite == nil {
		return ""
	}
	for _, c := range d.Suite.Cells {
		if c.Key == key && len(c.Inputs) > 0 && c.Inputs[0].File != nil && c.Inputs[0].File.AB != nil {
			return c.Inputs[0].File.AB.Run
		}
	}
	return ""
}

// mdCode keeps text from closing a code span.
func mdCode(s string) string { return strings.ReplaceAll(s, "`", "'") }

// mdEscape keeps text from being read as markdown or HTML in a table cell.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;", "*", `\*`, "_", `\_`, "`", "'", "[", `\[`, "]", `\]`, "\n", " ").Replace(s)
}
