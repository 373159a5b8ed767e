package report

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/stats"
)

// comparisonText writes the comparison as a terminal table: per candidate
// its verdict and why, how the numbers were made, one row per step and
// measure with each side's central value (labelled: the geometric mean of
// the rounds, or the median of unpaired values), change ± uncertainty,
// bound and outcome, then each failed or inconclusive measure with its
// why, the machine's noise and the notes. With several candidates each
// gets its own column block against the baseline. color marks significant
// changes green (better) or red (worse), failed measures bold red.
func comparisonText(b *strings.Builder, r *compare.Comparison, color bool) {
	for i := range r.Verdicts {
		b.WriteString(r.CandidateHeadline(i) + "\n")
		if i < len(r.Why) {
			b.WriteString(whyText(r.Why[i].Sentences(), "  why: "))
		}
	}
	if r.Reach != nil {
		b.WriteString(whyText([]string{r.Reach.Text}, "  note: "))
	}
	b.WriteString(methodLine(r) + "\n\n")
	t := comparisonTable(r, color)
	t.text(b, 0)
	for i := range r.Candidates {
		if i >= len(r.Findings) || len(r.Findings[i]) == 0 {
			continue
		}
		who := ""
		if len(r.Candidates) > 1 {
			who = " (" + r.Candidates[i] + ")"
		}
		b.WriteString("\nfailed or inconclusive" + who + ":\n")
		for _, f := range r.Findings[i] {
			b.WriteString(whyText([]string{f.Line()}, "  "))
		}
	}
	if r.Machine != nil && len(r.Machine.Text) > 0 {
		b.WriteString("\nmachine:\n")
		b.WriteString(whyText(r.Machine.Text, "  "))
	}
	if notes := reportNotes(r); len(notes) > 0 {
		b.WriteString("\nnotes:\n")
		for _, n := range notes {
			b.WriteString("  " + n + "\n")
		}
	}
}

// centreLabel names a side's column by its central statistic.
func centreLabel(r *compare.Comparison, name string) string {
	return name + " (" + r.Centre + ")"
}

// comparisonTable is the rows of a comparison: step, measure, each side's
// central value, and per candidate change, bound and status.
func comparisonTable(r *compare.Comparison, color bool) *table {
	header := []string{"step", "measure", centreLabel(r, r.Baseline)}
	single := len(r.Candidates) == 1
	for _, c := range r.Candidates {
		if single {
			header = append(header, centreLabel(r, c), "change", "bound", "status")
		} else {
			header = append(header, centreLabel(r, c), "change", "status")
		}
	}
	t := newTable(header...).alignRight(2)
	for i := range r.Candidates {
		base := 3 + 3*i
		if single {
			base = 3
		}
		t.alignRight(base, base+1)
		if single {
			t.alignRight(base + 2)
		}
	}
	for _, row := range r.Rows {
		// The baseline's value from the first comparison that has it: a
		// candidate lacking the measure (a direct target's pooler
		// measures) leaves its pairs, not the baseline's value, out.
		baseValue := math.NaN()
		for _, c := range row.Cells {
			if b := c.Assessment.Base; !math.IsNaN(b) && !math.IsInf(b, 0) {
				baseValue = b
				break
			}
		}
		cells := []cell{{text: row.Measure.Step}, {text: measureLabel(row.Measure)}, {text: FormatValue(baseValue)}}
		for ci, c := range row.Cells {
			a := c.Assessment
			change := cell{text: stats.FormatChange(a.Change, a.Lo, a.Hi)}
			status := cell{text: a.StatusText()}
			if r.Machine.Flagged(r.Candidates[ci], row.Measure.Name) {
				status.text += " (contention differed)"
			}
			if color {
				change.color, status.color = changeColor(a), statusColor(a)
			}
			if !single && a.Bound != nil {
				status.text += " (bound " + boundText(a) + ")"
			}
			switch a.Outcome {
			case stats.Fail:
				change.md, status.md = "**"+mdText(change.text)+"**", "❌ **"+mdText(status.text)+"**"
			case stats.Inconclusive:
				status.md = "❔ " + mdText(status.text)
			}
			cells = append(cells, cell{text: FormatValue(a.Cand)}, change)
			if single {
				cells = append(cells, cell{text: boundText(a)})
			}
			cells = append(cells, status)
		}
		t.rows = append(t.rows, cells)
	}
	return t
}

// methodLine says how the numbers were made, in one line.
func methodLine(r *compare.Comparison) string {
	conf := 0.0
	n := 0
	if len(r.Verdicts) > 0 {
		conf = 1 - r.Verdicts[0].Alpha
		n = r.Verdicts[0].Total
	}
	var s string
	switch r.Method {
	case stats.Paired:
		turns := "whole-step turns"
		if r.SliceS > 0 {
			turns = fmt.Sprintf("%g s slices", r.SliceS)
		}
		s = fmt.Sprintf("paired by round over %d of %d rounds (%s): each side's geometric mean of its rounds; change = geometric mean of the per-round ratios; %s, Holm-corrected over %d measures; %g%% intervals",
			r.Rounds, r.RoundsPlanned, turns, stats.PairedTest, n, 100*conf)
		if r.Layouts > 0 {
			s = fmt.Sprintf("paired by round over %d of %d rounds on %s, the clusters re-created every %s (%s): change = geometric mean of the per-layout mean ratios; %s (the interval rests on %s), Holm-corrected over %d measures; %g%% intervals",
				r.Rounds, r.RoundsPlanned, prose.Count(r.Layouts, "cluster layout"), prose.Count(r.Reshuffle, "round"), turns,
				stats.LayoutTest, prose.Count(r.Layouts, "layout"), n, 100*conf)
		}
	default:
		s = fmt.Sprintf("unpaired (each complete step of a file counts as one value): each side's median; change of the medians; %s, Holm-corrected over %d measures; %g%% intervals; drift between runs is not cancelled",
			stats.UnpairedTest, n, 100*conf)
	}
	if d := decisionLine(r); d != "" {
		s += "; " + d
	}
	if r.Incomplete != "" {
		s += "; INCOMPLETE: " + r.Incomplete
	}
	return s
}

// reportNotes returns the report's notes, then the warnings of its
// comparisons with the same message merged: "tps@c=1, p99@c=1: 4 rounds
// are too few ...".
func reportNotes(r *compare.Comparison) []string {
	out := append([]string(nil), r.Notes...)
	// Each candidate's warnings merged; with several candidates a
	// warning not every one of them has names those it concerns.
	var order []string
	from := map[string][]string{}
	for i, v := range r.Verdicts {
		errs := append([]error(nil), v.Warnings...)
		for _, a := range v.Assessments {
			for _, w := range a.Warnings {
				var sw *stats.Warning
				if errors.As(w, &sw) && sw.Kind == stats.Unpaired {
					continue // said once in the method line
				}
				errs = append(errs, w)
			}
		}
		name := ""
		if i < len(r.Candidates) {
			name = r.Candidates[i]
		}
		for _, line := range mergeWarnings(errs) {
			if _, seen := from[line]; !seen {
				order = append(order, line)
			}
			if !contains(from[line], name) {
				from[line] = append(from[line], name)
			}
		}
	}
	for _, line := range order {
		if who := from[line]; len(r.Candidates) > 1 && len(who) < len(r.Candidates) {
			line = strings.Join(who, ", ") + " against " + r.Baseline + ": " + line
		}
		out = append(out, line)
	}
	return out
}

// mergeWarnings merges warnings that differ only in the measure key they
// start with ("KEY: message"), keeping the order of first appearance.
func mergeWarnings(errs []error) []string {
	var order []string
	keys := map[string][]string{}
	for _, e := range errs {
		msg := e.Error()
		key, rest, ok := strings.Cut(msg, ": ")
		if !ok || strings.ContainsAny(key, " ") {
			key, rest = "", msg
		}
		if _, seen := keys[rest]; !seen {
			order = append(order, rest)
		}
		if key != "" && !contains(keys[rest], key) {
			keys[rest] = append(keys[rest], key)
		} else if keys[rest] == nil {
			keys[rest] = []string{}
		}
	}
	out := make([]string, len(order))
	for i, rest := range order {
		if ks := keys[rest]; len(ks) > 0 {
			out[i] = strings.Join(ks, ", ") + ": " + rest
		} else {
			out[i] = rest
		}
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// measureLabel names a measure in a table: its name and unit, and
// "timing-dependent" for one whose count moves with timing at its step.
func measureLabel(m stats.Measure) string {
	var paren []string
	if m.Unit != "" {
		paren = append(paren, m.Unit)
	}
	if m.Timing != "" {
		paren = append(paren, "timing-dependent")
	}
	if len(paren) == 0 {
		return m.Name
	}
	return m.Name + " (" + strings.Join(paren, ", ") + ")"
}

func boundText(a stats.Assessment) string {
	if a.Bound == nil {
		return ""
	}
	s := stats.FormatPercent(a.Bound.Limit())
	return strings.Replace(s, ".0%", "%", 1)
}

// decisionLine says how the outcomes were decided, when that is not at
// the intervals' own level: "outcomes at the 99.6% level of round 14 of up
// to 30 (rounds until decided: decided)".
func decisionLine(r *compare.Comparison) string {
	var level float64
	for _, v := range r.Verdicts {
		for _, a := range v.Assessments {
			if a.Bound != nil {
				level = a.DecisionConfidence
			}
		}
	}
	if level == 0 {
		return ""
	}
	s := fmt.Sprintf("bounded measures decided at the %s level (%s)", levelPct(level), stats.FailRule)
	if q := r.Sequential; q != nil {
		unit := "round"
		if r.Layouts > 0 {
			unit = "layout"
		}
		s += fmt.Sprintf(", rounds until decided: %s %d of up to %d", unit, q.Look, q.Max)
		// A run cut short records no reason it stopped: the line then ends
		// at the count ("; INCOMPLETE: ..." follows it), not in ", ;".
		if r.Stopped != "" {
			s += ", " + r.Stopped
		}
	}
	return s
}

// levelPct writes a confidence level: "95%", "99.8%".
func levelPct(c float64) string {
	s := fmt.Sprintf("%.2f", 100*c)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s + "%"
}

// comparisonMarkdown writes the comparison as a GitHub-flavoured markdown
// comment, ready to post on a pull request: the verdict and why first,
// each failed or inconclusive measure with its why, the table, the
// machine and the notes folded under it.
func comparisonMarkdown(b *strings.Builder, r *compare.Comparison) {
	fmt.Fprintf(b, "### pgscale ab: %s\n\n", mdText(r.Workload))
	for i, v := range r.Verdicts {
		mark := outcomeMark(v.Outcome)
		line := r.CandidateHeadline(i)
		var why []string
		if i < len(r.Why) {
			why = r.Why[i].Explained()
		}
		if len(r.Verdicts) == 1 {
			fmt.Fprintf(b, "%s **%s**\n", mark, mdText(line))
			if len(why) > 0 {
				fmt.Fprintf(b, "\n%s\n", mdText(strings.Join(why, " ")))
			}
			if fns := changedFunctions(r, i, ""); len(fns) > 0 {
				b.WriteString("\n")
				functionsMarkdown(b, fns, "", noLink)
			}
		} else {
			fmt.Fprintf(b, "- %s **%s**", mark, mdText(line))
			if len(why) > 0 {
				fmt.Fprintf(b, "<br>%s", mdText(strings.Join(why, " ")))
			}
			b.WriteString("\n")
			if fns := changedFunctions(r, i, ""); len(fns) > 0 {
				b.WriteString("\n")
				functionsMarkdown(b, fns, "", noLink)
			}
		}
		if i < len(r.Findings) && len(r.Findings[i]) > 0 {
			b.WriteString("\n")
			for _, f := range r.Findings[i] {
				fmt.Fprintf(b, "- %s %s\n", outcomeMark(f.Assessment.Outcome), mdText(f.Line()))
			}
		}
	}
	if r.Reach != nil {
		fmt.Fprintf(b, "\n%s\n", reachMarkdown(r.Reach))
	}
	if r.Incomplete != "" {
		fmt.Fprintf(b, "\n⚠️ **Incomplete:** %s\n", mdText(r.Incomplete))
	}
	summary := make([]string, len(r.Verdicts))
	for i, v := range r.Verdicts {
		summary[i] = v.Counts()
		if len(r.Verdicts) > 1 {
			summary[i] = r.Candidates[i] + ": " + summary[i]
		}
	}
	fmt.Fprintf(b, "\n<details>\n<summary>%s</summary>\n\n", mdText(strings.Join(summary, "; ")))
	comparisonTable(r, false).markdown(b)
	fmt.Fprintf(b, "\n%s.\n", mdText(methodLine(r)))
	if r.Machine != nil && len(r.Machine.Text) > 0 {
		b.WriteString("\nMachine:\n")
		for _, n := range r.Machine.Text {
			fmt.Fprintf(b, "- %s\n", mdText(n))
		}
	}
	if notes := reportNotes(r); len(notes) > 0 {
		b.WriteString("\nNotes:\n")
		for _, n := range notes {
			fmt.Fprintf(b, "- %s\n", mdText(n))
		}
	}
	b.WriteString("\n</details>\n")
}

// reachMarkdown is what this runner could not decide, as a paragraph.
func reachMarkdown(r *compare.Reach) string {
	return "ℹ️ " + mdText(r.Text)
}

// outcomeMark is an outcome's mark in markdown.
func outcomeMark(o stats.Outcome) string {
	switch o {
	case stats.Fail:
		return "❌"
	case stats.Inconclusive:
		return "❔"
	case stats.Pass:
		return "✅"
	}
	return "ℹ️"
}

func changeColor(a stats.Assessment) string {
	switch {
	case a.Outcome == stats.Fail:
		return ansiBoldRed
	case a.Effect == stats.Improved:
		return ansiGreen
	case a.Effect == stats.Regressed:
		return ansiRed
	}
	return ""
}

func statusColor(a stats.Assessment) string {
	if a.Outcome == stats.Fail {
		return ansiBoldRed
	}
	return ""
}

// whyText writes a differential diagnosis's sentences under a verdict,
// wrapped, the first line led by lead and the rest indented to match.
func whyText(sentences []string, lead string) string {
	var b strings.Builder
	pad := strings.Repeat(" ", len([]rune(lead)))
	for i, s := range sentences {
		for j, l := range prose.Wrap(s, 96-len(pad)) {
			switch {
			case i == 0 && j == 0:
				b.WriteString(lead)
			case j == 0:
				b.WriteString(pad)
			default:
				b.WriteString(pad + "  ")
			}
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
