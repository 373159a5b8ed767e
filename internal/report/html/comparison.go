package html

import (
	"fmt"
	"math"
	"sort"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/stats"
)

// Comparison is a comparison of the page's files as internal/compare made
// it (Of: each row's centres, change, interval, test and outcome) and
// internal/report words it; the page lays it out and computes nothing.
// Relative changes are fractions (-0.054 is 5.4 % lower); a figure that
// could not be computed is NaN, an interval that could not be formed is
// infinite.
type Comparison struct {
	Of         *compare.Comparison
	Candidates []Candidate
	// Method says how the numbers were made, in one line.
	Method string
	// Rows are how internal/report words each of Of's rows, in order.
	Rows  []ComparisonRow
	Notes []string
	// Machine says what disturbed the measurements.
	Machine []string
	// Run is the A/B run compared (result.AB.Run), "" when the files
	// are not of one: the matrix's cells link to its evidence.
	Run string
	// Functions are the functions whose own count per transaction
	// changed, every candidate's, under FunctionsLead: listed first.
	Functions     []ChangedFunction
	FunctionsLead string
}

// Candidate is one candidate's verdict against the baseline.
type Candidate struct {
	Name string `json:"name"`
	// Outcome is the verdict's word: "passed", "failed", "inconclusive"
	// or "no bounds given"; Class its badge's class (ok, bad, warn, info).
	Outcome  string `json:"outcome"`
	Class    string `json:"-"`
	Headline string `json:"headline"` // "Compared slow with base: failed: 2 of 8 bounded measures past their bounds: ..."
	Counts   string `json:"counts"`   // "8 measures, 4 bounded: 2 pass, 2 fail, ..."
	// Why is the differential diagnosis in words: why the candidate is
	// slower or faster, from the evidence both targets recorded.
	Why string `json:"why,omitempty"`
	// Findings are the failed and inconclusive measures, each with its
	// why, one line each.
	Findings []string `json:"findings,omitempty"`
}

// ComparisonRow is a row of the comparison (a measure at a step) in
// internal/report's words: its measure's label ("tps (txn/s)"), the
// baseline's central value, and each candidate's cell; Pooler says the
// measure is the pooler's, whose evidence is the pooler's profile.
type ComparisonRow struct {
	Measure  string
	BaseText string
	Cells    []CellWords
	Pooler   bool
}

// worded says c has the words of each of its rows and cells.
func (c *Comparison) worded() bool {
	if c.Of == nil || len(c.Rows) != len(c.Of.Rows) {
		return false
	}
	for i, r := range c.Of.Rows {
		if len(c.Rows[i].Cells) != len(r.Cells) {
			return false
		}
	}
	return true
}

// CellWords are a candidate's cell in words: its central value, the
// bound that applied ("-5%", "" when none did) and its outcome against it
// ("pass", "fail", "inconclusive"; "" without one).
type CellWords struct {
	MedianText, Bound, Outcome string
}

// Noise is an A/A calibration's noise as internal/compare measured it
// (Of: each measure's A/A change, paired spread and the rounds an A/B run
// needs) and internal/report words it.
type Noise struct {
	Of       *compare.Noise
	Headline string
	// Rows are how internal/report words each of Of's rows, in order.
	Rows []NoiseRow
	// Footnote says what the columns mean; Notes are the warnings.
	Footnote string
	Notes    []string
}

// NoiseRow is a row of the noise table (a measure at a step) in
// internal/report's words: its measure's label, its paired spread, and
// with Of.Layouts the spread between layouts and the rounds (layouts)
// an A/B run on separate clusters needs.
type NoiseRow struct {
	Measure, SDText                    string
	LayoutSDText, Separate2, Separate5 string
}

// Matrix is a grid of changes against a baseline on a colour scale: green
// better, red worse, the deeper the larger, pale when not significant,
// each cell's interval on hover. Its rows and columns are the caller's:
// the page makes one of every comparison (steps × candidate measures); a
// suite's runner gives its own (cells × candidates).
type Matrix struct {
	Title string
	// Corner labels the row names' column.
	Corner string
	Cols   []string
	Rows   []MatrixRow
	// Outcome and Class are the suite's verdict word and its badge's
	// class; Findings its failed or inconclusive measures with their why,
	// Why each cell's differential diagnosis, Machine what disturbed each
	// cell: lines under the grid.
	Outcome, Class         string
	Findings, Why, Machine []string
	// Note says what a cell holds: which change of which central value,
	// at what level (the figure's caption).
	Note string
	// Functions are the functions whose own count per transaction
	// changed, in every cell, under FunctionsLead: listed first.
	Functions     []ChangedFunction
	FunctionsLead string
}

// MatrixRow is one row of a Matrix, a cell per column.
type MatrixRow struct {
	Label string
	Cells []MatrixCell
}

// MatrixCell is one change. Empty marks a cell with nothing measured.
type MatrixCell struct {
	Change, Lo, Hi, Confidence float64
	// Text is what the cell shows ("-5.4% ± 0.9%"); Outcome its
	// outcome against its bound ("pass", "fail", "inconclusive"), ""
	// when none applied.
	Text                         string
	Outcome                      string
	Improved, Regressed, Outside bool
	Empty                        bool
	// Key names the measure at its step ("pooler-instr/txn@c=4"); Why
	// says why it got its outcome (compare.Cell.Why).
	Key, Why string
	// Run is the A/B run the change is of (result.AB.Run), Candidate the
	// candidate's target name and Clients the client count: the page
	// links the cell to that run's evidence, the pooler's profile when
	// Pooler is set. Run "" links nothing.
	Run, Candidate string
	Clients        int
	Pooler         bool
}

// comparison is the page's form of a Comparison: the numbers as the JSON
// data block holds them, with what the template needs worked out.
type comparison struct {
	Baseline   string          `json:"baseline"`
	Candidates []Candidate     `json:"candidates"`
	Method     string          `json:"method"`
	Incomplete string          `json:"incomplete,omitempty"`
	Rows       []comparisonRow `json:"rows"`
	Notes      []string        `json:"notes,omitempty"`
	Centre     string          `json:"centre"`
	Machine    []string        `json:"machine,omitempty"`
	Reach      string          `json:"reach,omitempty"`
	// Matrix is the rows again as a grid: a row per step, a column per
	// candidate and measure.
	Matrix        *matrix           `json:"matrix"`
	Functions     []changedFunction `json:"functions,omitempty"`
	FunctionsLead string            `json:"functions_lead,omitempty"`
}

type comparisonRow struct {
	Step     string     `json:"step"`
	Measure  string     `json:"measure"`
	Base     num        `json:"baseline_centre"`
	BaseText string     `json:"baseline_text"`
	Cells    []compCell `json:"cells"`
}

type compCell struct {
	Median     num    `json:"median"`
	MedianText string `json:"median_text"`
	change
	ChangeText string `json:"change_text"`
	P          *num   `json:"p,omitempty"`
	PHolm      *num   `json:"p_holm,omitempty"`
	N          int    `json:"n"`
	Bound      string `json:"bound,omitempty"`
	Status     string `json:"status"`
	Class      string `json:"class"`
	Outside    bool   `json:"outside,omitempty"`
	// Title is the cell's hover text: the interval and the test.
	Title string `json:"-"`
}

type noiseTable struct {
	Headline string     `json:"headline"`
	Layouts  bool       `json:"layouts,omitempty"`
	Rows     []noiseRow `json:"rows"`
	Footnote string     `json:"footnote,omitempty"`
	Notes    []string   `json:"notes,omitempty"`
}

type noiseRow struct {
	Step    string `json:"step"`
	Measure string `json:"measure"`
	change
	ChangeText string `json:"change_text"`
	SDLog      *num   `json:"sd_log,omitempty"`
	SDText     string `json:"sd_text"`
	Rounds2    int    `json:"rounds_for_2pct,omitempty"`
	Rounds5    int    `json:"rounds_for_5pct,omitempty"`
	LayoutSD   string `json:"layout_sd_text,omitempty"`
	Separate2  string `json:"separate_for_2pct,omitempty"`
	Separate5  string `json:"separate_for_5pct,omitempty"`
	Title      string `json:"-"`
}

// matrix is a Matrix laid out for the page.
type matrix struct {
	ID       string      `json:"id"`
	Title    string      `json:"title"`
	Corner   string      `json:"corner"`
	Cols     []string    `json:"cols"`
	Rows     []matrixRow `json:"rows"`
	Outcome  string      `json:"outcome,omitempty"`
	Class    string      `json:"-"`
	Findings []string    `json:"findings,omitempty"`
	Why      []string    `json:"why,omitempty"`
	Machine  []string    `json:"machine,omitempty"`
	Note     string      `json:"note,omitempty"`
	// Cards are the evidence of each change drawn, in row order: what a
	// cell links to.
	Cards         []card            `json:"evidence,omitempty"`
	Functions     []changedFunction `json:"functions,omitempty"`
	FunctionsLead string            `json:"functions_lead,omitempty"`
}

// card is one change's evidence: what it is, its outcome and why, and
// links to the timeline, the differential flame graph and the steps'
// evidence of its run at its client count.
type card struct {
	ID      string   `json:"id"`
	Title   string   `json:"title"`
	Text    string   `json:"text"`
	Outcome string   `json:"outcome,omitempty"`
	Class   string   `json:"class"`
	Why     string   `json:"why,omitempty"`
	Links   []keyVal `json:"links,omitempty"` // href, text
	// src is the cell it explains, at row ri and column ci, for linking
	// once the page is built.
	src    MatrixCell
	ri, ci int
}

type matrixRow struct {
	Label string       `json:"label"`
	Cells []matrixCell `json:"cells"`
}

type matrixCell struct {
	change
	Text    string `json:"text"`
	Outcome string `json:"outcome,omitempty"`
	Class   string `json:"class"`
	Outside bool   `json:"outside,omitempty"`
	Empty   bool   `json:"empty,omitempty"`
	Title   string `json:"-"`
	// Href is the cell's evidence card on the page.
	Href string `json:"href,omitempty"`
}

// pageComparison lays out c; its matrix has a row per step and a column
// per candidate and measure that some step shows (compare.Row.Shown:
// bounded, or changed), each cell linking to its evidence.
func pageComparison(c *Comparison) *comparison {
	of := c.Of
	pc := &comparison{Baseline: of.Baseline, Candidates: c.Candidates, Method: c.Method, Incomplete: of.Incomplete, Notes: c.Notes,
		Centre: of.Centre, Machine: c.Machine, Functions: pageFunctions(c.Functions), FunctionsLead: c.FunctionsLead}
	if of.Reach != nil {
		pc.Reach = of.Reach.Text
	}
	m := &matrix{ID: "matrix-comparison", Corner: "clients", Title: "Change against " + of.Baseline}
	colName := func(ci int, w ComparisonRow) string {
		if len(c.Candidates) > 1 && ci < len(c.Candidates) {
			return c.Candidates[ci].Name + ": " + w.Measure
		}
		return w.Measure
	}
	col := map[string]int{}
	for ri, r := range of.Rows {
		for ci := range r.Cells {
			if name := colName(ci, c.Rows[ri]); r.Shown(ci) && !hasKey(col, name) {
				col[name] = len(m.Cols)
				m.Cols = append(m.Cols, name)
			}
		}
	}
	row := map[string]int{}
	for ri, r := range of.Rows {
		w := c.Rows[ri]
		step := r.Measure.Step
		pr := comparisonRow{Step: step, Measure: w.Measure, Base: num(math.NaN()), BaseText: w.BaseText}
		if len(r.Cells) > 0 {
			pr.Base = num(r.Cells[0].Assessment.Base)
		}
		if _, ok := row[step]; !ok {
			row[step] = len(m.Rows)
			label := step
			if r.Clients() > 0 {
				label = clientsWord(r.Clients())
			}
			m.Rows = append(m.Rows, matrixRow{Label: label, Cells: emptyCells(len(m.Cols))})
		}
		for ci, cell := range r.Cells {
			a := cell.Assessment
			pr.Cells = append(pr.Cells, pageCell(a, w.Cells[ci]))
			k, ok := col[colName(ci, w)]
			if !ok {
				continue
			}
			mc := MatrixCell{Change: a.Change, Lo: a.Lo, Hi: a.Hi, Confidence: a.Confidence,
				Text: stats.FormatChange(a.Change, a.Lo, a.Hi), Outcome: w.Cells[ci].Outcome, Improved: a.Effect == stats.Improved,
				Regressed: a.Effect == stats.Regressed, Outside: a.Outcome == stats.Fail,
				Key: r.Measure.Key(), Why: cell.Why, Run: c.Run, Clients: r.Clients(), Pooler: w.Pooler}
			if ci < len(c.Candidates) {
				mc.Candidate = c.Candidates[ci].Name
			}
			m.put(row[step], k, mc)
		}
		pc.Rows = append(pc.Rows, pr)
	}
	if len(m.Cols) > 0 {
		m.sortCards()
		pc.Matrix = m
	}
	return pc
}

func hasKey(m map[string]int, k string) bool {
	_, ok := m[k]
	return ok
}

func emptyCells(n int) []matrixCell {
	cells := make([]matrixCell, n)
	for i := range cells {
		cells[i] = matrixOf(MatrixCell{Empty: true})
	}
	return cells
}

// put lays out cell c at row ri, column ci, and gives a change its
// evidence card, which the cell links to.
func (m *matrix) put(ri, ci int, c MatrixCell) {
	mc := matrixOf(c)
	if !c.Empty {
		id := fmt.Sprintf("%s-ev-%d-%d", m.ID, ri, ci)
		mc.Href = "#" + id
		title := m.Rows[ri].Label
		if ci < len(m.Cols) {
			title += " · " + m.Cols[ci]
		}
		m.Cards = append(m.Cards, card{ID: id, Title: title, Text: c.Text, Outcome: c.Outcome, Class: mc.Class, Why: c.Why,
			src: c, ri: ri, ci: ci})
	}
	m.Rows[ri].Cells[ci] = mc
}

// sortCards puts the cards in the matrix's reading order.
func (m *matrix) sortCards() {
	sort.SliceStable(m.Cards, func(i, j int) bool {
		a, b := m.Cards[i], m.Cards[j]
		return a.ri < b.ri || a.ri == b.ri && a.ci < b.ci
	})
}

func pageCell(a stats.Assessment, w CellWords) compCell {
	out := compCell{Median: num(a.Cand), MedianText: w.MedianText, change: changeOf(a.Change, a.Lo, a.Hi, a.Confidence),
		ChangeText: stats.FormatChange(a.Change, a.Lo, a.Hi), P: numPtr(a.P), PHolm: numPtr(a.PHolm), N: a.N2, Bound: w.Bound, Status: a.StatusText(),
		Class: changeClass(a.Change, a.Effect == stats.Improved, a.Effect == stats.Regressed), Outside: a.Outcome == stats.Fail}
	out.Title = intervalTitle(out.change)
	if out.P != nil {
		out.Title += fmt.Sprintf("; p = %.2g", float64(*out.P))
		if out.PHolm != nil {
			out.Title += fmt.Sprintf(", %.2g after Holm's correction", float64(*out.PHolm))
		}
	}
	if a.N2 > 0 {
		out.Title += fmt.Sprintf("; n = %d", a.N2)
	}
	return out
}

// pageMatrices lays out the matrices given: a suite's, ids after the
// comparison's.
func pageMatrices(ms []Matrix) []matrix {
	var out []matrix
	for i, m := range ms {
		pm := matrix{ID: fmt.Sprintf("matrix-%d", i), Title: m.Title, Corner: m.Corner, Cols: m.Cols,
			Outcome: m.Outcome, Class: m.Class, Findings: m.Findings, Why: m.Why, Machine: m.Machine, Note: m.Note,
			Functions: pageFunctions(m.Functions), FunctionsLead: m.FunctionsLead}
		for ri, r := range m.Rows {
			pm.Rows = append(pm.Rows, matrixRow{Label: r.Label, Cells: emptyCells(len(m.Cols))})
			for ci := range m.Cols {
				if ci < len(r.Cells) {
					pm.put(ri, ci, r.Cells[ci])
				}
			}
		}
		out = append(out, pm)
	}
	return out
}

func matrixOf(c MatrixCell) matrixCell {
	if c.Empty {
		return matrixCell{Empty: true, Class: "empty", Text: "–", Title: "not measured"}
	}
	out := matrixCell{change: changeOf(c.Change, c.Lo, c.Hi, c.Confidence), Text: c.Text, Outcome: c.Outcome,
		Class: changeClass(c.Change, c.Improved, c.Regressed), Outside: c.Outside}
	out.Title = intervalTitle(out.change)
	if !c.Improved && !c.Regressed {
		out.Title += "; not significant"
	}
	if c.Outcome != "" {
		out.Title += "; " + c.Outcome + " against its bound"
	} else if c.Outside {
		out.Title += "; outside its bound"
	}
	return out
}

func pageNoise(n *Noise) *noiseTable {
	t := &noiseTable{Headline: n.Headline, Layouts: n.Of.Layouts > 0, Footnote: n.Footnote, Notes: n.Notes}
	for i, r := range n.Of.Rows {
		w := n.Rows[i]
		row := noiseRow{Step: r.Measure.Step, Measure: w.Measure, change: changeOf(r.Change, r.Lo, r.Hi, r.Confidence),
			ChangeText: stats.FormatChange(r.Change, r.Lo, r.Hi), SDLog: numPtr(r.SDLog), SDText: w.SDText, Rounds2: r.Rounds2, Rounds5: r.Rounds5,
			LayoutSD: w.LayoutSDText, Separate2: w.Separate2, Separate5: w.Separate5}
		row.Title = intervalTitle(row.change)
		t.Rows = append(t.Rows, row)
	}
	return t
}

func changeOf(x, lo, hi, conf float64) change {
	return change{Change: num(x), Lo: numPtr(lo), Hi: numPtr(hi), Confidence: num(conf)}
}

// changeClass is a change's place on the colour scale: better-N or
// worse-N for a significant change, N from 1 (under 2 %) to 4 (15 % or
// more); "same" when not significant.
func changeClass(x float64, improved, regressed bool) string {
	if !improved && !regressed || math.IsNaN(x) {
		return "same"
	}
	level := 4
	switch a := math.Abs(x); {
	case a < 0.02:
		level = 1
	case a < 0.05:
		level = 2
	case a < 0.15:
		level = 3
	}
	if improved {
		return fmt.Sprintf("better-%d", level)
	}
	return fmt.Sprintf("worse-%d", level)
}

// intervalTitle says a change's interval in words, for hover text.
func intervalTitle(c change) string {
	if math.IsNaN(float64(c.Change)) {
		return "no change could be computed"
	}
	if c.Lo == nil || c.Hi == nil {
		return fmt.Sprintf("change %s; no interval could be formed", stats.FormatPercent(float64(c.Change)))
	}
	level := ""
	if c.Confidence > 0 {
		level = fmt.Sprintf("%g%% ", 100*float64(c.Confidence))
	}
	return fmt.Sprintf("change %s, %sinterval %s to %s", stats.FormatPercent(float64(c.Change)), level, stats.FormatPercent(float64(*c.Lo)), stats.FormatPercent(float64(*c.Hi)))
}
