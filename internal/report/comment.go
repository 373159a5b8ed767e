package report

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/report/html"
	"github.com/pgscale/pgscale/internal/stats"
)

// commentColumns are the measures a row of the comment may show, as the
// pooler CI bot's did: throughput and what each transaction cost the
// server and the pooler, natively and counted.
var commentColumns = []struct{ measure, title string }{
	{"tps", "throughput"},
	{"server-cpu/txn", "server cpu/txn"},
	{"pooler-cpu/txn", "pooler cpu/txn"},
	{"pooler-instr/txn", "pooler instr/txn"},
	{"pooler-ctx/txn", "pooler ctx/txn"},
	{"instr/txn", "server instr/txn"},
}

// shownColumns are the comment's columns that have a value in some row
// (throughput always): a counted A/B run of an extension has no pooler,
// and a column of dashes would hide that its table says nothing.
func shownColumns(rows []*compare.Comparison, ci int) []int {
	var out []int
	for i, col := range commentColumns {
		shown := i == 0
		for _, c := range rows {
			if shown || c == nil {
				continue
			}
			for _, step := range commentSteps(c) {
				if commentCell(c, ci, col.measure, step) != "–" {
					shown = true
					break
				}
			}
		}
		if shown {
			out = append(out, i)
		}
	}
	return out
}

// commentReach is what this runner could not decide, of the suite or the
// comparison the comment is of; nil when every bound was judged.
func commentReach(d *Doc) *compare.Reach {
	switch d.Kind() {
	case KindSuite:
		return d.Suite.Reach
	case KindComparison:
		return d.Comparison.Reach
	}
	return nil
}

// writeComment writes a comparison as the pooler CI bot's pull-request
// comment: one verdict ("passed", "failed", "inconclusive" or "no bounds
// given", with the tallies), a row per suite (a suite's cell, or an A/B
// run's workload) and client count with throughput and the pooler's costs
// per transaction as "geometric mean (change ± uncertainty)", then one line
// per failed or inconclusive measure with its why and a link to its
// differential flame graph in the HTML report written beside it
// (Outputs["html"], default report.html), or when the runs recorded no
// profiles a line saying how to record them.
func writeComment(w io.Writer, d *Doc) error {
	type suiteRows struct {
		name  string
		cmp   *compare.Comparison
		files []compare.FileAnalysis
	}
	var rows []suiteRows
	var verdicts []stats.Verdict
	var base string
	var cands []string
	var outcome stats.Outcome
	title := "pgscale"
	k := d.Kind()
	switch {
	case k == KindSuite && len(d.Suite.Verdicts) > 0:
		s := d.Suite
		title, base, cands, verdicts, outcome = "pgscale suite "+s.Name, s.Baseline, s.Candidates, s.Verdicts, s.Outcome()
		for _, c := range s.Cells {
			rows = append(rows, suiteRows{c.Key, c.Comparison, c.Files})
		}
	case k == KindComparison:
		c := d.Comparison
		title, base, cands, verdicts, outcome = "pgscale ab", c.Baseline, c.Candidates, c.Verdicts, c.Outcome()
		rows = append(rows, suiteRows{c.Workload, c, d.Analysis.Files})
	case k == KindMicro || k == KindSuite && d.Micro != nil:
		var b strings.Builder
		o := d.Analysis.Outcome()
		fmt.Fprintf(&b, "### pgscale micro: %s %s\n\n", outcomeMark(o), o.Verdict())
		for _, m := range d.Micro {
			microMarkdown(&b, m)
		}
		_, err := io.WriteString(w, b.String())
		return err
	default:
		return needComparison("comment")
	}
	var total, bounded, failed, inconclusive, beyond int
	for _, v := range verdicts {
		total, bounded, failed, inconclusive = total+v.Total, bounded+v.Bounded, failed+v.Failed, inconclusive+v.Inconclusive
		beyond += v.Undecidable
	}
	var head string
	macro := outcome
	outcome = d.Analysis.Outcome()
	switch macro {
	case stats.Fail:
		head = fmt.Sprintf("failed: %d of %d bounded measures past their bounds", failed, bounded)
		if failed == 1 {
			head = fmt.Sprintf("failed: 1 of %d bounded measures past its bound", bounded)
		}
		if inconclusive > 0 {
			head += fmt.Sprintf(", %d inconclusive", inconclusive)
		}
	case stats.Inconclusive:
		head = fmt.Sprintf("inconclusive: %d of %d bounded measures undecided", inconclusive, bounded)
		if bounded == 0 && beyond > 0 {
			head = fmt.Sprintf("inconclusive: nothing decided: %d bounded measures beyond what this runner's spread can decide", beyond)
		}
	case stats.Pass:
		head = fmt.Sprintf("passed: all %d bounded measures within their bounds", bounded)
	default:
		head = fmt.Sprintf("no bounds given: %d measures compared", total)
	}
	if outcome != macro {
		head += "; micro-benchmarks " + outcome.Verdict()
	}
	// The functions that changed come first: a change of a few
	// instructions in one function is the finding a pull request most
	// needs, and the totals rarely show it.
	fns := make([][]functionRow, len(cands))
	tested := make([]bool, len(cands))
	var all []functionRow
	for ci := range cands {
		for _, r := range rows {
			fns[ci] = append(fns[ci], changedFunctions(r.cmp, ci, r.name)...)
			tested[ci] = tested[ci] || functionsTested(r.cmp, ci)
		}
		all = append(all, fns[ci]...)
	}
	head += functionsHeadline(all)
	var b strings.Builder
	fmt.Fprintf(&b, "### %s: %s %s\n\n", title, outcomeMark(outcome), mdEscape(head))
	if r := commentReach(d); r != nil {
		fmt.Fprintf(&b, "%s\n\n", reachMarkdown(r))
	}
	// Links only to a page this invocation writes beside the comment.
	htmlFile, withHTML := commentHTMLFile(d)
	var links []html.FlameDiffLink
	if withHTML {
		links = html.FlameDiffLinks(htmlDoc(d))
	}
	for ci, cand := range cands {
		// One line; the measures it would name are the findings below
		// (failed or inconclusive), or without bounds listed here.
		fmt.Fprintf(&b, "**%s** against **%s**: %s\n\n", mdEscape(cand), mdEscape(base), mdEscape(verdicts[ci].Lead()))
		if v := verdicts[ci]; v.Outcome == stats.NoBound && len(v.Listed()) > 0 {
			for _, l := range v.Listed() {
				fmt.Fprintf(&b, "- %s\n", mdEscape(l))
			}
			b.WriteString("\n")
		}
		switch {
		case len(fns[ci]) > 0:
			functionsMarkdown(&b, fns[ci], "suite", func(r functionRow) string {
				if l, ok := functionLink(links, d, cand, r); ok {
					return htmlFile + "#" + l.ID
				}
				return ""
			})
		case tested[ci]:
			b.WriteString(functionsNone() + "\n\n")
		}
		centre := "geometric mean"
		for _, r := range rows {
			if r.cmp != nil {
				centre = r.cmp.Centre
				break
			}
		}
		fmt.Fprintf(&b, "Each cell: the candidate's %s (change ± uncertainty against the baseline).\n\n", centre)
		var cmps []*compare.Comparison
		for _, r := range rows {
			cmps = append(cmps, r.cmp)
		}
		cols := shownColumns(cmps, ci)
		b.WriteString("| suite | clients |")
		for _, i := range cols {
			b.WriteString(" " + commentColumns[i].title + " |")
		}
		b.WriteString("\n| --- | --: |" + strings.Repeat(" --: |", len(cols)) + "\n")
		var findings, graphs []string
		for _, r := range rows {
			if r.cmp == nil {
				fmt.Fprintf(&b, "| %s | – |%s\n", mdEscape(r.name), strings.Repeat(" – |", len(cols)))
				continue
			}
			for _, step := range commentSteps(r.cmp) {
				fmt.Fprintf(&b, "| %s | %s |", mdEscape(r.name), strings.TrimPrefix(step, "c="))
				for _, i := range cols {
					b.WriteString(" " + commentCell(r.cmp, ci, commentColumns[i].measure, step) + " |")
				}
				b.WriteString("\n")
			}
			run := commentRun(d, r.name)
			var runLinks []html.FlameDiffLink
			for _, l := range links {
				if l.Candidate == cand && (k != KindSuite || l.Run == run) {
					runLinks = append(runLinks, l)
					what := "server"
					if l.Pooler {
						what = "pooler"
					}
					graphs = append(graphs, fmt.Sprintf("[%s, %s, c=%d](%s#%s)", what, mdEscape(r.name), l.Clients, htmlFile, l.ID))
				}
			}
			if ci < len(r.cmp.Findings) {
				for _, f := range r.cmp.Findings[ci] {
					line := fmt.Sprintf("- %s `%s` %s", outcomeMark(f.Assessment.Outcome), mdCode(f.Assessment.Measure.Key()), mdEscape(strings.TrimPrefix(f.Line(), f.Assessment.Measure.Key()+" ")))
					if k == KindSuite {
						line = fmt.Sprintf("- %s `%s` [%s] %s", outcomeMark(f.Assessment.Outcome), mdCode(f.Assessment.Measure.Key()), mdEscape(r.name), mdEscape(strings.TrimPrefix(f.Line(), f.Assessment.Measure.Key()+" ")))
					}
					if l, ok := findingLink(runLinks, f); ok {
						line += fmt.Sprintf(" ([differential flame graph](%s#%s))", htmlFile, l.ID)
					}
					findings = append(findings, line)
				}
			}
		}
		b.WriteString("\n")
		var splits []readSplit
		for _, r := range rows {
			if r.cmp != nil {
				splits = append(splits, readSplits(r.name, r.files, base, cand, commentSteps(r.cmp))...)
			}
		}
		readSplitMarkdown(&b, splits, base, cand)
		if slices.ContainsFunc(rows, func(r suiteRows) bool { return r.cmp != nil && r.cmp.Counted }) {
			b.WriteString("Counted under Valgrind: the instructions are the programs', the throughput, CPU and context switches Valgrind's, so those are not compared (–); a run (or a suite's cells) not counting measures them natively.\n\n")
		}
		if len(findings) > 0 {
			b.WriteString("Failed or inconclusive, and why:\n\n" + strings.Join(findings, "\n") + "\n\n")
		}
		switch {
		case len(graphs) > 0:
			b.WriteString("Differential flame graphs: " + strings.Join(graphs, " · ") + "\n\n")
		case !withHTML && len(html.FlameDiffLinks(htmlDoc(d))) > 0:
			b.WriteString("Differential flame graphs: the runs recorded profiles; an HTML report of these result files draws them (`--html FILE` beside `--comment`, or `pgscale report --format html`).\n\n")
		case len(findings) > 0 || len(fns[ci]) > 0:
			b.WriteString("No differential flame graphs: the runs recorded no profiles (`--profile`, a suite's `profile: true`, or `--count instructions` records them).\n\n")
		}
	}
	for _, m := range d.Micro {
		b.WriteString("\n")
		microMarkdown(&b, m)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// commentHTMLFile is where the HTML report the comment links to is: the
// one this invocation writes, relative to the comment; false when it
// writes none (the comment then links to nothing: a page written before,
// or never, may not be there).
func commentHTMLFile(d *Doc) (string, bool) {
	h := d.Outputs["html"]
	if h == "" {
		return "", false
	}
	if c := d.Outputs["comment"]; c != "" {
		if rel, err := filepath.Rel(filepath.Dir(c), h); err == nil {
			return filepath.ToSlash(rel), true
		}
	}
	return filepath.ToSlash(h), true
}

// functionLink is the differential flame graph of a changed function's
// step and process, for candidate cand: the pooler's for the pooler's
// functions, else the server's.
func functionLink(links []html.FlameDiffLink, d *Doc, cand string, r functionRow) (html.FlameDiffLink, bool) {
	run := commentRun(d, r.Cell)
	for _, l := range links {
		if l.Candidate == cand && (d.Kind() != KindSuite || l.Run == run) && l.Clients == r.Clients && l.Pooler == (r.Process == "pooler") {
			return l, true
		}
	}
	return html.FlameDiffLink{}, false
}

// findingLink is the differential flame graph of a finding's step: the
// pooler's for a pooler measure, else the server's.
func findingLink(links []html.FlameDiffLink, f compare.Finding) (html.FlameDiffLink, bool) {
	pooler := poolerMeasure(f.Assessment.Measure.Name)
	var any *html.FlameDiffLink
	for i, l := range links {
		if l.Clients != f.Clients {
			continue
		}
		if l.Pooler == pooler {
			return l, true
		}
		if any == nil {
			any = &links[i]
		}
	}
	if any != nil {
		return *any, true
	}
	return html.FlameDiffLink{}, false
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
		if a.Outcome == stats.Fail {
			s = "**" + s + "**"
		}
		if r.Measure.Timing != "" {
			s += " _timing-dependent_"
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
	if d.Kind() != KindSuite {
		return ""
	}
	for _, c := range d.Suite.Cells {
		if c.Key == key {
			if run := c.Run(); run != "" {
				return run
			}
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
