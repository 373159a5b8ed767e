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
// (internal/report/html): its files, and the comparison or the noise in
// the words of the text format.
func writeHTML(w io.Writer, d *Doc) error { return html.Write(w, htmlDoc(d)) }

// htmlDoc is the document as the HTML page takes it.
func htmlDoc(d *Doc) html.Doc {
	doc := html.Doc{}
	if d.Analysis == nil {
		return doc
	}
	for _, fa := range d.Files {
		name := fa.Name
		if fa.Path != "" {
			name = fa.Path
		}
		doc.Files = append(doc.Files, html.NamedFile{Name: name, File: fa.File, Analysis: fa})
	}
	if d.Comparison != nil {
		doc.Comparison = htmlComparison(d.Comparison)
	}
	if d.Noise != nil {
		doc.Noise = htmlNoise(d.Noise)
	}
	if d.Suite != nil {
		doc.Matrices = htmlSuite(d.Suite)
		doc.Title = "suite " + d.Suite.Name
	}
	for _, r := range docRules(d) {
		doc.Rules = append(doc.Rules, html.Rule{Text: r.text, Holds: r.holds})
	}
	return doc
}

// htmlSuite is a suite's matrix of tps changes for the page: a row per cell
// and client count, a column per candidate; with the suite's headline as
// its title.
func htmlSuite(s *compare.Suite) []html.Matrix {
	if len(s.Candidates) == 0 {
		return nil
	}
	m := html.Matrix{Title: s.Headline(), Corner: "cell, clients", Cols: s.Candidates, Outcome: s.Outcome().Verdict(), Class: outcomeClass(s.Outcome()),
		Findings: suiteFindings(s), Why: suiteWhy(s), Machine: suiteMachine(s), Note: suiteCellNote(s)}
	for _, sc := range s.Cells {
		if len(sc.Inputs) == 0 {
			row := html.MatrixRow{Label: sc.Key + " (" + sc.Status + ")"}
			for range s.Candidates {
				row.Cells = append(row.Cells, html.MatrixCell{Empty: true})
			}
			m.Rows = append(m.Rows, row)
			continue
		}
		for _, st := range sc.Steps {
			c := st.Clients
			row := html.MatrixRow{Label: fmt.Sprintf("%s, %d", sc.Key, c)}
			for ci := range s.Candidates {
				a, ok := tpsAssessment(sc, ci, c)
				if !ok {
					row.Cells = append(row.Cells, html.MatrixCell{Empty: true})
					continue
				}
				row.Cells = append(row.Cells, html.MatrixCell{Change: a.Change, Lo: a.Lo, Hi: a.Hi, Confidence: a.Confidence,
					Text: stats.FormatChange(a.Change, a.Lo, a.Hi), Outcome: boundOutcome(a), Improved: a.Effect == stats.Improved,
					Regressed: a.Effect == stats.Regressed, Outside: a.Outcome == stats.Fail})
			}
			m.Rows = append(m.Rows, row)
		}
	}
	return []html.Matrix{m}
}

// suiteCellNote says what a cell of a suite's matrix holds: the change
// of the candidate's throughput, of which central value, at what level.
func suiteCellNote(s *compare.Suite) string {
	for _, sc := range s.Cells {
		if c := sc.Comparison; c != nil && len(c.Verdicts) > 0 {
			return fmt.Sprintf("Each cell: the candidate's throughput (tps, each side's %s of its rounds) against the baseline's, the change ± its %s interval, and its outcome against the bound where one applied.",
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
func htmlComparison(r *compare.Comparison) *html.Comparison {
	c := &html.Comparison{Baseline: r.Baseline, Method: methodLine(r), Incomplete: r.Incomplete, Notes: reportNotes(r), Centre: r.Centre}
	if r.Machine != nil {
		c.Machine = r.Machine.Text
	}
	for i, v := range r.Verdicts {
		hc := html.Candidate{Name: r.Candidates[i], Outcome: v.Outcome.Verdict(), Class: outcomeClass(v.Outcome), Headline: r.CandidateHeadline(i), Counts: v.Counts()}
		if i < len(r.Why) {
			hc.Why = strings.Join(r.Why[i].Sentences(), " ")
		}
		if i < len(r.Findings) {
			for _, f := range r.Findings[i] {
				hc.Findings = append(hc.Findings, f.Line())
			}
		}
		c.Candidates = append(c.Candidates, hc)
	}
	for _, row := range r.Rows {
		base := math.NaN()
		if len(row.Cells) > 0 {
			base = row.Cells[0].Assessment.Base
		}
		hr := html.ComparisonRow{Step: row.Measure.Step, Measure: measureLabel(row.Measure), Base: base, BaseText: FormatValue(base)}
		for _, cell := range row.Cells {
			a := cell.Assessment
			hr.Cells = append(hr.Cells, html.ComparisonCell{Median: a.Cand, MedianText: FormatValue(a.Cand),
				Change: a.Change, Lo: a.Lo, Hi: a.Hi, Confidence: a.Confidence, ChangeText: stats.FormatChange(a.Change, a.Lo, a.Hi),
				P: a.P, PHolm: a.PHolm, N: a.N2, Bound: boundText(a), Status: a.StatusText(),
				Improved: a.Effect == stats.Improved, Regressed: a.Effect == stats.Regressed, Outside: a.Outcome == stats.Fail})
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
	n := &html.Noise{Headline: noiseHeadline(r), Footnote: noiseFootnote, Notes: noiseNotes(r), Layouts: r.Layouts > 0}
	if r.Layouts > 0 {
		n.Footnote += " " + layoutFootnote(r)
	}
	for _, row := range r.Rows {
		hr := html.NoiseRow{Step: row.Measure.Step, Measure: measureLabel(row.Measure),
			Change: row.Change, Lo: row.Lo, Hi: row.Hi, Confidence: row.Confidence,
			ChangeText: stats.FormatChange(row.Change, row.Lo, row.Hi), SDLog: row.SDLog, SDText: sdText(row),
			Rounds2: row.Rounds2, Rounds5: row.Rounds5}
		if r.Layouts > 0 {
			hr.LayoutSDText, hr.Separate2, hr.Separate5 = layoutSDText(row), layoutRounds(row.Layouts2, row.PerLayout), layoutRounds(row.Layouts5, row.PerLayout)
		}
		n.Rows = append(n.Rows, hr)
	}
	return n
}
