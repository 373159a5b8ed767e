package report

import (
	"fmt"
	"strings"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/stats"
)

// suiteTable is the suite's matrix: a row per cell and client count, with
// the cell's parameters, every target's median tps and each candidate's
// change against the baseline (coloured when significant, with color),
// and the baseline's verdict at that step.
func suiteTable(s *compare.Suite, color bool) *table {
	var head []string
	for _, a := range s.Axes {
		head = append(head, a.Name)
	}
	bounded := false
	for _, v := range s.Verdicts {
		bounded = bounded || v.Bounded > 0
	}
	lead := suiteLead(s) // what the rows show: tps, or a counted suite's instructions
	head = append(head, "clients", s.Baseline+lead)
	for _, c := range s.Candidates {
		head = append(head, c+lead, "change")
		if bounded {
			head = append(head, "outcome")
		}
	}
	alone := len(s.Candidates) == 0 // one target: its own scaling instead of changes
	perCPU := alone && len(perCPUCells(s)) > 0
	if alone {
		if perCPU {
			head = append(head, "tps/cpu-s") // what some cells' speedup is of (perCPUNote)
		}
		head = append(head, "speedup", "efficiency", "server cpu/txn", "in sql")
	}
	disturbed := s.Disturbed() // a disturbance study: each target's tps during and after the window
	if disturbed {
		for _, name := range append([]string{s.Baseline}, s.Candidates...) {
			if alone {
				name = ""
			} else {
				name += " "
			}
			head = append(head, name+"during/before", name+"after/before")
		}
	}
	verdicts := false
	for _, sc := range s.Cells {
		for _, in := range sc.Inputs {
			for _, st := range in.File.Steps {
				verdicts = verdicts || st.Probes != nil
			}
		}
	}
	if verdicts {
		head = append(head, "verdict")
	}
	t := newTable(head...)
	last := len(head)
	if verdicts {
		last--
	}
	for i := range head[:last] {
		t.alignRight(i)
	}
	for _, sc := range s.Cells {
		if len(sc.Inputs) == 0 {
			cells := make([]cell, 0, len(head))
			for _, p := range sc.Params {
				cells = append(cells, cell_(p.Value))
			}
			cells = append(cells, cell_("-"), cell_(sc.Status)) // clients, then where the tps would be
			for len(cells) < len(head) {
				cells = append(cells, cell_(""))
			}
			t.rows = append(t.rows, cells)
			continue
		}
		for _, st := range sc.Steps {
			c := st.Clients
			cells := make([]cell, 0, len(head))
			for _, p := range sc.Params {
				cells = append(cells, cell_(p.Value))
			}
			cells = append(cells, cell_(fmt.Sprint(c)))
			values, measure, unit := st.TPS, "tps", ""
			if st.Counted != "" {
				values, measure = st.Lead, st.Counted
				if lead == "" {
					unit = " " + st.Counted // cells of several kinds: each says its own
				}
			}
			for ii, v := range values {
				cells = append(cells, cell_(FormatValue(v)+unit))
				if ii == 0 {
					continue
				}
				a, ok := leadAssessment(sc, ii-1, c, measure)
				if !ok {
					cells = append(cells, cell_("-"))
					if bounded {
						cells = append(cells, cell_("-"))
					}
					continue
				}
				esc := ""
				if color {
					esc = changeColor(a)
				}
				cells = append(cells, cell{text: stats.FormatChange(a.Change, a.Lo, a.Hi), color: esc,
					md: mdChange(a)})
				if bounded {
					o := sc.Comparison.StepOutcome(ii-1, compare.StepLabel(c))
					text := o.String()
					if o == stats.NoBound {
						text = "-"
					}
					oc := cell{text: text, md: outcomeMark(o) + " " + text}
					if color && o == stats.Fail {
						oc.color = ansiBoldRed
					}
					cells = append(cells, oc)
				}
			}
			if alone {
				if perCPU {
					per := "-"
					if st.Last != nil && st.PerCPU && st.TPSPerCPU > 0 {
						per = FormatValue(st.TPSPerCPU)
					}
					cells = append(cells, cell_(per))
				}
				cells = append(cells, aloneCells(st)...)
			}
			if disturbed {
				for _, e := range st.Effects {
					during, after := "-", "-"
					if e != nil {
						during, after = windowChange(e.TPS), windowChange(e.AfterTPS)
					}
					cells = append(cells, cell_(during), cell_(after))
				}
			}
			for len(cells) < last {
				cells = append(cells, cell_("-"))
			}
			if verdicts {
				v := stepVerdict(st, sc.Inputs)
				if st.Counted != "" {
					v = "counted" // Valgrind's throughput judges no bottleneck (countedRowsNote)
				}
				cells = append(cells, cell_(v))
			}
			t.rows = append(t.rows, cells)
		}
	}
	return t
}

// aloneCells are a single target's scaling at a step: speedup and
// efficiency against the sweep's baseline step (diagnose.Baseline), server CPU per transaction,
// and the share of a transaction's latency spent running its SQL in the
// server (pg_stat_statements), from the last complete step.
func aloneCells(st compare.SuiteStep) []cell {
	if st.Last == nil {
		return []cell{cell_("-"), cell_("-"), cell_("-"), cell_("-")}
	}
	fg := st.Figures
	srv, sql := "-", "-"
	if fg.HasServer {
		srv = fmt.Sprintf("%.1f µs", fg.ServerCPUPerTxnUS)
	}
	if fg.HasStatements && fg.LatencyMs > 0 {
		sql = prose.Share(fg.ServerMsPerTxn / fg.LatencyMs)
	}
	sum := st.Last.Summary
	return []cell{cell_(fmt.Sprintf("%.2f×", sum.Speedup)), cell_(fmt.Sprintf("%.0f%%", sum.Efficiency*100)), cell_(srv), cell_(sql)}
}

// perCPUCells are the keys of the cells whose speedup and efficiency are
// of throughput per CPU-second the system had (compare.SuiteStep.PerCPU).
func perCPUCells(s *compare.Suite) []string {
	var out []string
	for _, sc := range s.Cells {
		for _, st := range sc.Steps {
			if st.Last != nil && st.PerCPU {
				out = append(out, sc.Key)
				break
			}
		}
	}
	return out
}

// perCPUNote says, under a one-target suite's table, which cells' speedup
// and efficiency are per CPU-second (the tps/cpu-s column), as the sweep
// table's diagnosis does; "" when none is.
func perCPUNote(s *compare.Suite) string {
	if len(s.Candidates) > 0 {
		return ""
	}
	keys := perCPUCells(s)
	if len(keys) == 0 {
		return ""
	}
	whose := "their"
	if len(keys) == 1 {
		whose = "its"
	}
	return "Speedup and efficiency of " + strings.Join(keys, ", ") + " are of throughput per CPU-second the server and load generator had (tps/cpu-s), " +
		"not of throughput: other processes took the machine's CPU unevenly across " + whose + " steps"
}

// cell_ is a plain cell.
func cell_(s string) cell { return cell{text: s} }

// mdChange marks a failed change in markdown, and a significant one by
// its direction.
func mdChange(a stats.Assessment) string {
	s := mdText(stats.FormatChange(a.Change, a.Lo, a.Hi))
	switch {
	case a.Outcome == stats.Fail:
		return "❌ **" + s + "**"
	case a.Effect == stats.Improved:
		return "🟢 " + s
	case a.Effect == stats.Regressed:
		return "🔴 " + s
	}
	return s
}

// leadAssessment is candidate ci's assessment of measure (the row's:
// tps, or a counted step's instructions) at c clients in a cell.
func leadAssessment(cell compare.SuiteCell, ci, c int, measure string) (stats.Assessment, bool) {
	if cell.Comparison == nil {
		return stats.Assessment{}, false
	}
	step := compare.StepLabel(c)
	for _, row := range cell.Comparison.Rows {
		if row.Measure.Name == measure && row.Measure.Step == step && ci < len(row.Cells) {
			return row.Cells[ci].Assessment, true
		}
	}
	return stats.Assessment{}, false
}

// suiteLead is what the suite table's value columns hold, after each
// target's name: " tps", or when every row was counted under Valgrind
// the counted measure they all show (" instr/txn"); "" when the rows
// differ, each cell then saying its own.
func suiteLead(s *compare.Suite) string {
	lead, native := "", false
	for _, sc := range s.Cells {
		for _, st := range sc.Steps {
			switch {
			case st.Counted == "":
				native = true
			case lead == "":
				lead = st.Counted
			case lead != st.Counted:
				return ""
			}
		}
	}
	switch {
	case lead == "":
		return " tps"
	case native:
		return ""
	}
	return " " + lead
}

// countedRowsNote says, under the suite table, what a counted row shows;
// "" when no row was counted.
func countedRowsNote(s *compare.Suite) string {
	for _, sc := range s.Cells {
		for _, st := range sc.Steps {
			if st.Counted != "" {
				return "A counted row (verdict \"counted\") shows the instructions per transaction counted under Valgrind (pooler-instr/txn, the pooler's, where a pooler was counted; else instr/txn, the client backends'), their change and the step's outcome over every bounded measure; its throughput and any bottleneck judged on it are Valgrind's, not the workload's, and stay in the result files"
			}
		}
	}
	return ""
}

// stepVerdict is the baseline's diagnosis at a step, with fast-path
// exhaustion named, in any round: the lock study's question. With several
// targets it names those whose slots were exhausted ("on master"), so the
// others' were not.
func stepVerdict(st compare.SuiteStep, inputs []compare.Input) string {
	if st.Verdict == nil {
		return "-" // no evidence (slices): no verdict
	}
	v := st.Verdict.Verdict
	var on []string
	for i, n := range st.Exhausted {
		if n > 0 && i < len(inputs) {
			on = append(on, inputs[i].Name)
		}
	}
	switch {
	case len(on) == 0:
	case len(inputs) == 1:
		v += ", fast-path slots exhausted"
	default:
		v += ", fast-path slots exhausted on " + strings.Join(on, ", ")
	}
	return v
}

// suiteGroups are the group summaries: per axis value and candidate.
func suiteGroups(s *compare.Suite) []string {
	var out []string
	for _, g := range s.Groups {
		who := ""
		if len(s.Candidates) > 1 {
			who = " (" + g.Candidate + ")"
		}
		out = append(out, fmt.Sprintf("%s=%s%s: %d of %d steps faster, %d slower; median tps change %s (%s … %s)",
			g.Axis, g.Value, who, g.Faster, g.Steps, g.Slower, stats.FormatPercent(g.Median), stats.FormatPercent(g.Lo), stats.FormatPercent(g.Hi)))
	}
	return out
}

// suiteWhy is the differential diagnosis of every cell and candidate with
// a step significantly slower or faster, a counted measure that changed,
// or (withFunctions) a function that changed: "partitions=32, patch:
// Slower at 4 clients ...". Without withFunctions the per-function
// tests' sentences are left to a table of their own (suiteFunctions).
func suiteWhy(s *compare.Suite, withFunctions bool) []string {
	var out []string
	for _, cell := range s.Cells {
		if cell.Comparison == nil {
			continue
		}
		for ci, w := range cell.Comparison.Why {
			sentences := w.Explained()
			if withFunctions {
				sentences = w.Sentences()
			}
			if len(w.Steps) == 0 && len(w.Counted) == 0 && (!withFunctions || len(w.ChangedFunctions()) == 0) {
				continue
			}
			lead := s.Candidates[ci]
			if cell.Key != "all" {
				lead = cell.Key + ", " + lead
			}
			out = append(out, lead+": "+strings.Join(sentences, " "))
		}
	}
	return out
}

// suiteFunctions are candidate ci's functions that changed, cell by cell.
func suiteFunctions(s *compare.Suite, ci int) []functionRow {
	var out []functionRow
	for _, cell := range s.Cells {
		out = append(out, changedFunctions(cell.Comparison, ci, cell.Key)...)
	}
	return out
}

// suiteFindings are every cell's failed or inconclusive measures, each
// with its why: "workload=select-only, cand: pooler-cpu/txn@c=4 ...".
func suiteFindings(s *compare.Suite) []string {
	var out []string
	for _, cell := range s.Cells {
		if cell.Comparison == nil {
			continue
		}
		for ci, fs := range cell.Comparison.Findings {
			for _, f := range fs {
				lead := s.Candidates[ci]
				if cell.Key != "all" {
					lead = cell.Key + ", " + lead
				}
				out = append(out, lead+": "+f.Line())
			}
		}
	}
	return out
}

// suiteMachine is what disturbed each cell's measurements.
func suiteMachine(s *compare.Suite) []string {
	var out []string
	for _, cell := range s.Cells {
		if cell.Comparison == nil || cell.Comparison.Machine == nil {
			continue
		}
		for _, t := range cell.Comparison.Machine.Text {
			if cell.Key != "all" {
				t = cell.Key + ": " + t
			}
			out = append(out, t)
		}
	}
	return out
}

// suiteRule states the decision rules' outcomes, one line per rule, cell
// and target.
func suiteRule(s *compare.Suite) []string {
	var out []string
	for _, o := range s.Outcomes {
		out = append(out, o.String())
	}
	return out
}

// suiteMethod says how the suite's numbers were made.
func suiteMethod(s *compare.Suite) string {
	n := 0
	for _, c := range s.Cells {
		if len(c.Inputs) > 0 {
			n++
		}
	}
	line := fmt.Sprintf("suite %s: %d of %d cells measured on %d target%s", s.Name, n, len(s.Cells), 1+len(s.Candidates), plural1(1+len(s.Candidates)))
	if len(s.Verdicts) > 0 {
		v := s.Verdicts[0]
		family, micro := v.Total, ""
		if s.Family > v.Total {
			family, micro = s.Family, fmt.Sprintf(" (%d of them its micro cells')", s.Family-v.Total)
		}
		line += fmt.Sprintf("; each cell paired by round, each side's geometric mean of its rounds, changes Holm-corrected over all %d measures of the suite%s; %g%% intervals", family, micro, 100*(1-v.Alpha))
		if v.Bounded > 0 {
			line += fmt.Sprintf("; each cell's bounded measures decided as a family with an equal share of alpha (%s)", stats.FailRule)
		}
	}
	if s.Incomplete != "" {
		line += "; INCOMPLETE: " + s.Incomplete
	}
	return line
}

func plural1(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// suiteText writes the suite for a terminal.
func suiteText(b *strings.Builder, s *compare.Suite, color bool) {
	b.WriteString(s.Lead() + "\n")
	for _, d := range s.Details() {
		b.WriteString(whyText([]string{d}, "  - "))
	}
	if s.Reach != nil {
		b.WriteString(whyText([]string{s.Reach.Text}, "  note: "))
	}
	b.WriteString(suiteMethod(s) + "\n\n")
	suiteTable(s, color).text(b, 0)
	for _, n := range []string{perCPUNote(s), countedRowsNote(s)} {
		if n != "" {
			b.WriteString("\n" + strings.Join(prose.Wrap(n+".", 96), "\n") + "\n")
		}
	}
	if g := suiteGroups(s); len(g) > 0 {
		b.WriteString("\ngroups:\n")
		for _, l := range g {
			b.WriteString("  " + l + "\n")
		}
	}
	if f := suiteFindings(s); len(f) > 0 {
		b.WriteString("\nfailed or inconclusive:\n")
		for _, l := range f {
			b.WriteString(whyText([]string{l}, "  "))
		}
	}
	if w := suiteWhy(s, true); len(w) > 0 {
		b.WriteString("\nwhy:\n")
		for _, l := range w {
			b.WriteString(whyText([]string{l}, "  "))
		}
	}
	if m := suiteMachine(s); len(m) > 0 {
		b.WriteString("\nmachine:\n")
		for _, l := range m {
			b.WriteString(whyText([]string{l}, "  "))
		}
	}
	if r := suiteRule(s); len(r) > 0 {
		b.WriteString("\nrules:\n")
		for _, l := range r {
			b.WriteString("  " + l + "\n")
		}
	}
	if notes := suiteNotes(s); len(notes) > 0 {
		b.WriteString("\nnotes:\n")
		for _, n := range notes {
			b.WriteString("  " + n + "\n")
		}
	}
}

// suiteMarkdown writes the suite as a pull-request comment.
func suiteMarkdown(b *strings.Builder, s *compare.Suite) {
	fmt.Fprintf(b, "### pgscale suite: %s\n\n", mdText(s.Name))
	fmt.Fprintf(b, "%s **%s**\n\n", outcomeMark(s.Outcome()), mdText(s.Lead()))
	if d := s.Details(); len(d) > 0 {
		for _, l := range d {
			fmt.Fprintf(b, "- %s\n", mdText(l))
		}
		b.WriteString("\n")
	}
	if s.Reach != nil {
		fmt.Fprintf(b, "%s\n\n", reachMarkdown(s.Reach))
	}
	fmt.Fprintf(b, "%s.\n\n", mdText(suiteMethod(s)))
	// The functions that changed first: the totals rarely show them.
	for ci, cand := range s.Candidates {
		if fns := suiteFunctions(s, ci); len(fns) > 0 {
			if len(s.Candidates) > 1 {
				fmt.Fprintf(b, "**%s**:\n\n", mdText(cand))
			}
			functionsMarkdown(b, fns, "cell", noLink)
		}
	}
	suiteTable(s, false).markdown(b)
	for _, n := range []string{perCPUNote(s), countedRowsNote(s)} {
		if n != "" {
			fmt.Fprintf(b, "\n%s.\n", mdText(n))
		}
	}
	mdList(b, "\n", suiteGroups(s))
	mdList(b, "\n**Failed or inconclusive**\n\n", suiteFindings(s))
	mdList(b, "\n**Why**\n\n", suiteWhy(s, false))
	mdList(b, "\n**Machine**\n\n", suiteMachine(s))
	mdList(b, "\n**Rules**\n\n", suiteRule(s))
	if notes := suiteNotes(s); len(notes) > 0 {
		mdList(b, "\n<details>\n<summary>notes</summary>\n\n", notes)
		b.WriteString("\n</details>\n")
	}
}

// disturbedNote says what the table's during/before and after/before
// columns are.
const disturbedNote = "during/before and after/before: the throughput while the first disturbance window ran, and once it ended, " +
	"against the quiet stretch before it, in the last complete step of each cell and client count, with its interval from batch " +
	"means of the per-interval series (? where too few intervals; each step's whole figures: pgscale report on the cell's file)"

// suiteNotes are the suite's notes, then every cell's, merged.
func suiteNotes(s *compare.Suite) []string {
	out := append([]string(nil), s.Notes...)
	if s.Disturbed() {
		out = append(out, disturbedNote)
	}
	var errs []error
	seen := map[string]bool{}
	for _, c := range s.Cells {
		if c.Comparison == nil {
			continue
		}
		for _, n := range c.Comparison.Notes {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	for _, v := range s.Verdicts {
		errs = append(errs, v.Warnings...)
	}
	return append(out, mergeWarnings(errs)...)
}

// mdList writes a markdown list of lines after head, nothing when there
// are no lines.
func mdList(b *strings.Builder, head string, lines []string) {
	if len(lines) == 0 {
		return
	}
	b.WriteString(head)
	for _, l := range lines {
		b.WriteString("- " + mdText(l) + "\n")
	}
}
