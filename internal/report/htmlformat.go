package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/report/html"
	"github.com/pgscale/pgscale/internal/stats"
)

// writeHTML writes the document as one self-contained HTML page
// (internal/report/html): a bisect's log, the history's trends, or its
// files with the comparison, the noise or the suite in the words of the
// text format.
func writeHTML(w io.Writer, d *Doc) error {
	switch k := d.Kind(); {
	case k == KindBisect:
		return writeBisectHTML(w, d.Bisect)
	case k == KindHistory:
		return writeHistoryHTML(w, d.History)
	case !k.analysis():
		return notShown("html", d)
	}
	return html.Write(w, htmlDoc(d))
}

// htmlDoc is the document as the HTML page takes it.
func htmlDoc(d *Doc) html.Doc {
	d = d.analyzed()
	doc := html.Doc{Flames: d.Flames}
	doc.Files = d.Files
	switch d.Kind() {
	case KindComparison:
		run := ""
		if len(d.Files) > 0 && d.Files[0].File != nil && d.Files[0].File.AB != nil {
			run = d.Files[0].File.AB.Run
		}
		doc.Comparison = htmlComparison(d.Comparison, run)
	case KindNoise:
		doc.Noise = htmlNoise(d.Noise)
	case KindSuite:
		doc.Matrices = htmlSuite(d.Suite)
		doc.Title = "suite " + d.Suite.Name
	case KindMicro:
		if len(d.Files) == 0 {
			doc.Title = "micro-benchmarks"
		}
	}
	doc.Micro = htmlMicro(d.Micro)
	for _, r := range docRules(d) {
		doc.Rules = append(doc.Rules, html.Rule{Text: r.text, Holds: r.holds})
	}
	return doc
}

// htmlSuite is a suite's matrix of changes for the page, with the suite's
// headline's lead as its title (the measures it names are the findings
// under the grid): a row per cell and client count, named by the
// cell's parameters, and a column per candidate and measure that some
// cell shows (compare.Row.Shown: bounded, or changed; throughput always),
// counted measures included, each with its outcome against its bound.
func htmlSuite(s *compare.Suite) []html.Matrix {
	if len(s.Candidates) == 0 {
		return nil
	}
	m := html.Matrix{Title: s.Lead(), Corner: "cell, clients", Outcome: s.Outcome().Verdict(), Class: outcomeClass(s.Outcome()),
		Findings: suiteFindings(s), Why: suiteWhy(s, false), Machine: suiteMachine(s), Note: suiteCellNote(s)}
	for ci, cand := range s.Candidates {
		for _, sc := range s.Cells {
			m.Functions = append(m.Functions, htmlFunctions(changedFunctions(sc.Comparison, ci, sc.Key), cand, sc.Run())...)
		}
	}
	if len(m.Functions) > 0 {
		m.FunctionsLead = functionsLeadText()
	}
	if s.Reach != nil {
		m.Findings = append([]string{s.Reach.Text}, m.Findings...)
	}
	type column struct {
		ci      int
		measure string
	}
	var cols []column
	seen := map[column]bool{}
	for _, sc := range s.Cells {
		if sc.Comparison == nil {
			continue
		}
		for _, row := range sc.Comparison.Rows {
			for ci := range s.Candidates {
				if k := (column{ci, row.Measure.Name}); row.Shown(ci) && !seen[k] {
					seen[k] = true
					cols = append(cols, k)
					title := measureLabel(row.Measure)
					if len(s.Candidates) > 1 {
						title = s.Candidates[ci] + ": " + title
					}
					m.Cols = append(m.Cols, title)
				}
			}
		}
	}
	empty := func() []html.MatrixCell {
		cells := make([]html.MatrixCell, len(cols))
		for i := range cells {
			cells[i].Empty = true
		}
		return cells
	}
	for _, sc := range s.Cells {
		if len(sc.Inputs) == 0 || sc.Comparison == nil {
			m.Rows = append(m.Rows, html.MatrixRow{Label: sc.Key + " (" + sc.Status + ")", Cells: empty()})
			continue
		}
		run := sc.Run()
		for _, st := range sc.Steps {
			row := html.MatrixRow{Label: fmt.Sprintf("%s, %d", sc.Key, st.Clients), Cells: empty()}
			for k, col := range cols {
				cr, ok := comparisonRow(sc.Comparison, col.measure, st.Clients)
				if !ok || col.ci >= len(cr.Cells) {
					continue
				}
				row.Cells[k] = htmlMatrixCell(cr, col.ci, run, s.Candidates[col.ci])
			}
			m.Rows = append(m.Rows, row)
		}
	}
	return []html.Matrix{m}
}

// comparisonRow is the row of a measure at a client count.
func comparisonRow(c *compare.Comparison, measure string, clients int) (compare.Row, bool) {
	step := compare.StepLabel(clients)
	for _, row := range c.Rows {
		if row.Measure.Name == measure && row.Measure.Step == step {
			return row, true
		}
	}
	return compare.Row{}, false
}

// htmlMatrixCell is candidate ci's change in a row, linked to the
// evidence of A/B run run.
func htmlMatrixCell(row compare.Row, ci int, run, cand string) html.MatrixCell {
	cell := row.Cells[ci]
	a := cell.Assessment
	return html.MatrixCell{Change: a.Change, Lo: a.Lo, Hi: a.Hi, Confidence: a.Confidence,
		Text: stats.FormatChange(a.Change, a.Lo, a.Hi), Outcome: boundOutcome(a), Improved: a.Effect == stats.Improved,
		Regressed: a.Effect == stats.Regressed, Outside: a.Outcome == stats.Fail,
		Key: row.Measure.Key(), Why: cell.Why, Run: run, Candidate: cand, Clients: row.Clients(), Pooler: poolerMeasure(row.Measure.Name)}
}

// poolerMeasure says a measure is the pooler's: its evidence is the
// pooler's profile rather than the server's.
func poolerMeasure(name string) bool { return strings.HasPrefix(name, "pooler") }

// suiteCellNote says what a cell of a suite's matrix holds: the change
// of a candidate's measure, of which central value, at what level.
func suiteCellNote(s *compare.Suite) string {
	for _, sc := range s.Cells {
		if c := sc.Comparison; c != nil && len(c.Verdicts) > 0 {
			return fmt.Sprintf("Each cell: a measure of the candidate (each side's %s of its rounds) against the baseline's, the change ± its %s interval, and its outcome against the bound where one applied.",
				c.Centre, levelPct(1-c.Verdicts[0].Alpha))
		}
	}
	return ""
}

// boundOutcome is a bounded assessment's outcome word, "" without a
// bound.
func boundOutcome(a stats.Assessment) string {
	if a.Bound == nil {
		return ""
	}
	return a.Outcome.String()
}

// htmlComparison words a comparison for the page as comparisonText does
// for a terminal.
func htmlComparison(r *compare.Comparison, run string) *html.Comparison {
	c := &html.Comparison{Of: r, Method: methodLine(r), Notes: reportNotes(r), Run: run}
	if r.Machine != nil {
		c.Machine = r.Machine.Text
	}
	for i, v := range r.Verdicts {
		hc := html.Candidate{Name: r.Candidates[i], Outcome: v.Outcome.Verdict(), Class: outcomeClass(v.Outcome), Headline: r.CandidateHeadline(i), Counts: v.Counts()}
		if i < len(r.Why) {
			hc.Why = strings.Join(r.Why[i].Explained(), " ")
		}
		c.Functions = append(c.Functions, htmlFunctions(changedFunctions(r, i, ""), r.Candidates[i], run)...)
		if i < len(r.Findings) {
			for _, f := range r.Findings[i] {
				hc.Findings = append(hc.Findings, f.Line())
			}
		}
		c.Candidates = append(c.Candidates, hc)
	}
	if len(c.Functions) > 0 {
		c.FunctionsLead = functionsLeadText()
	}
	for _, row := range r.Rows {
		base := math.NaN()
		if len(row.Cells) > 0 {
			base = row.Cells[0].Assessment.Base
		}
		hr := html.ComparisonRow{Measure: measureLabel(row.Measure), BaseText: FormatValue(base), Pooler: poolerMeasure(row.Measure.Name)}
		for _, cell := range row.Cells {
			a := cell.Assessment
			hr.Cells = append(hr.Cells, html.CellWords{MedianText: FormatValue(a.Cand), Bound: boundText(a), Outcome: boundOutcome(a)})
		}
		c.Rows = append(c.Rows, hr)
	}
	return c
}

// outcomeClass is an outcome's badge class on the page.
func outcomeClass(o stats.Outcome) string {
	switch o {
	case stats.Pass:
		return "ok"
	case stats.Fail:
		return "bad"
	case stats.Inconclusive:
		return "warn"
	}
	return "info"
}

// htmlNoise words a calibration's noise for the page as noiseText does.
func htmlNoise(r *compare.Noise) *html.Noise {
	n := &html.Noise{Of: r, Headline: noiseHeadline(r), Footnote: noiseFootnote, Notes: noiseNotes(r)}
	if r.Layouts > 0 {
		n.Footnote += " " + layoutFootnote(r)
	}
	for _, row := range r.Rows {
		hr := html.NoiseRow{Measure: measureLabel(row.Measure), SDText: sdText(row)}
		if r.Layouts > 0 {
			hr.LayoutSDText, hr.Separate2, hr.Separate5 = layoutSDText(row), layoutRounds(row.Layouts2, row.PerLayout), layoutRounds(row.Layouts5, row.PerLayout)
		}
		n.Rows = append(n.Rows, hr)
	}
	return n
}

// htmlFunctions are changed functions for the page, candidate cand's in
// A/B run run.
func htmlFunctions(rows []functionRow, cand, run string) []html.ChangedFunction {
	var out []html.ChangedFunction
	for _, r := range rows {
		out = append(out, html.ChangedFunction{Candidate: cand, Cell: r.Cell, Clients: r.Clients, Process: r.Process, Function: r.Name(),
			Symbol: r.Function, Object: r.Object,
			Base: r.Base, Cand: r.Cand, Change: r.DeltaText() + " (" + r.RelativeText() + ")", Part: r.PartText(), Run: run})
	}
	return out
}
