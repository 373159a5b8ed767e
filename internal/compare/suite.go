package compare

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/micro"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
)

// Suite is a suite's comparison: every cell's comparison of the candidates
// with the baseline, judged together — one Holm correction over every
// measure of every cell, so that a suite of many cells does not turn noise
// into changes — with a verdict per candidate, group summaries per axis
// value, and the suite's decision rules checked on every cell and target.
type Suite struct {
	Name       string
	Baseline   string
	Candidates []string
	Axes       []result.SuiteAxis
	Cells      []SuiteCell
	// Verdicts hold one verdict per candidate over the whole suite (nil
	// with a single target: nothing is compared).
	Verdicts []stats.Verdict
	// Groups summarise tps per axis value and candidate.
	Groups []Group
	// Expect are the suite's decision rules; Outcomes each one's outcome
	// per cell and target.
	Expect   []Expectation
	Outcomes []ExpectOutcome
	// Notes are caveats about the comparison as a whole.
	Notes []string
	// Incomplete says which cells are missing or incomplete; empty when
	// every cell was measured.
	Incomplete string
	// Family is how many measures Holm's correction of the effects ran
	// over: every macro cell's and every micro cell's (SuiteOptions.Micro).
	Family int
	// Reach says once, for the whole suite, what this runner could not
	// decide; nil when every bound was judged.
	Reach *Reach
}

// SuiteCell is one cell: its parameters, its files and their comparison.
type SuiteCell struct {
	Key    string
	Params []Param // in axis order
	Status string
	Reason string
	Inputs []Input // its result files, baseline first; none when missing
	// Files are the analysis of each of Inputs on its own.
	Files []FileAnalysis
	// Comparison compares them, its assessments judged suite-wide; nil
	// with a single target or when no round completed.
	Comparison *Comparison
	// Steps are the cell's client counts with each file's tps and the
	// baseline's diagnosis; none when the cell is missing.
	Steps []SuiteStep
}

// Run is the A/B run of the cell's files (result.AB.Run), "" when it has
// none.
func (sc SuiteCell) Run() string {
	if len(sc.Inputs) > 0 && sc.Inputs[0].File != nil && sc.Inputs[0].File.AB != nil {
		return sc.Inputs[0].File.AB.Run
	}
	return ""
}

// Param is one parameter of a cell.
type Param struct{ Name, Value string }

// Group sums up one axis value for one candidate: the tps changes of every
// step of the cells with that value.
type Group struct {
	Axis, Value, Candidate string
	// Steps counts the (cell, client count) pairs; Faster and Slower those
	// whose tps change is significant.
	Steps, Faster, Slower int
	// Median, Lo and Hi are the median tps change and the range of the
	// changes over the steps.
	Median, Lo, Hi float64
}

// SuiteOptions configure CompareSuite.
type SuiteOptions struct {
	// Expect are the suite's decision rules.
	Expect []Expectation
	// Bounds, when set, judge every cell instead of the bounds each
	// cell's files recorded (pgscale compare BUNDLE --bound ...).
	Bounds *stats.Bounds
	Stats  stats.Options
	// Micro are the suite's micro-benchmark cells, judged with the macro
	// cells: every measure's effect Holm-corrected over all of them, each
	// cell (macro or micro) deciding its bounded measures with an equal
	// share of alpha. Their assessments are replaced (micro.Rejudge).
	Micro []*micro.Analysis
	// Say words the remedies the cells' notes, verdicts and diagnoses
	// name (Options.Say).
	Say diagnose.Say
}

// CompareSuite compares the cells of a suite bundle: x is its index,
// cells[i] the files of x.Cells[i] (baseline first; empty when missing).
func CompareSuite(x *result.SuiteIndex, cells [][]Input, o SuiteOptions) (*Suite, error) {
	opt := o.Stats
	s := &Suite{Name: x.Name, Baseline: x.Baseline, Axes: x.Axes}
	for _, t := range x.Targets[1:] {
		s.Candidates = append(s.Candidates, t.Name)
	}
	var missing []string
	for i, c := range x.Cells {
		sc := SuiteCell{Key: c.Key, Status: c.Status, Reason: c.Reason, Inputs: cells[i], Files: analyzeFiles(cells[i])}
		sc.Steps = suiteSteps(sc.Files)
		for _, a := range x.Axes {
			sc.Params = append(sc.Params, Param{Name: a.Name, Value: c.Params[a.Name]})
		}
		if c.Status != result.CellComplete {
			missing = append(missing, fmt.Sprintf("%s %s", c.Key, c.Status))
		}
		if len(cells[i]) >= 2 && SameRun(cells[i]) && cells[i][0].File.AB.RoundsDone > 0 {
			cmp, _, err := OfRun(cells[i], o.Say)
			if o.Bounds != nil {
				cmp, err = Compare(cells[i], Options{Bounds: *o.Bounds, Stats: opt, Say: o.Say})
			}
			if err != nil {
				return nil, fmt.Errorf("cell %s: %w", c.Key, err)
			}
			sc.Comparison = cmp
		}
		s.Cells = append(s.Cells, sc)
	}
	if len(missing) > 0 {
		s.Incomplete = fmt.Sprintf("%d of %d cells not complete (%s)", len(missing), len(x.Cells), strings.Join(missing, "; "))
	}
	if len(s.Candidates) > 0 {
		if err := s.judge(opt, o.Micro, o.Say); err != nil {
			return nil, err
		}
		s.groups()
	}
	s.Expect = o.Expect
	for _, cell := range s.Cells {
		for _, in := range cell.Inputs {
			for _, out := range Check(in.File, o.Expect) {
				out.Target = in.Name
				if cell.Key != "all" {
					out.Cell = cell.Key
				}
				s.Outcomes = append(s.Outcomes, out)
			}
		}
	}
	return s, nil
}

// judge evaluates every measure of every cell together: each measure's
// effect is Holm-corrected over the whole suite, so that many cells do not
// turn noise into changes, and each cell's bounded measures (its own
// bounds, recorded in its files) are decided as a family of their own with
// an equal share of alpha, at the look of the cell's last round when it
// rounded until decided: a cell decided alone during the run is decided
// the same way here. say words the remedies the verdicts and diagnoses
// name.
func (s *Suite) judge(opt stats.Options, ms []*micro.Analysis, say diagnose.Say) error {
	compared := 0
	for _, cell := range s.Cells {
		if cell.Comparison != nil {
			compared++
		}
	}
	family := 0
	for ci, cand := range s.Candidates {
		// The micro cells that compare this candidate, each a family.
		type microAt struct {
			m  *micro.Analysis
			ci int
		}
		var micros []microAt
		for _, m := range ms {
			for k, c := range m.Candidates {
				if c.Name == cand {
					micros = append(micros, microAt{m, k})
				}
			}
		}
		families := compared + len(micros)
		var groups []stats.Group
		type at struct{ cell, row int }
		var where []at
		for i, cell := range s.Cells {
			cmp := cell.Comparison
			if cmp == nil || ci >= len(cmp.Verdicts) {
				continue
			}
			g := stats.Group{Options: opt}
			g.Options.Sequential = cmp.Sequential
			if families > 1 {
				g.Options.Share = 1 / float64(families)
			}
			for ri, row := range cmp.Rows {
				g.Comparisons = append(g.Comparisons, row.Cells[ci].Assessment.Comparison)
				where = append(where, at{i, ri})
			}
			for _, a := range cmp.Verdicts[ci].Assessments {
				if a.Bound != nil && !hasBound(g.Bounds, *a.Bound) {
					g.Bounds = append(g.Bounds, *a.Bound)
				}
			}
			groups = append(groups, g)
		}
		for _, mc := range micros {
			g := stats.Group{Options: mc.m.Stats}
			if families > 1 {
				g.Options.Share = 1 / float64(families)
			}
			for _, r := range mc.m.Candidates[mc.ci].Rows {
				g.Comparisons = append(g.Comparisons, r.Comparison)
				if r.Bound != nil && !hasBound(g.Bounds, *r.Bound) {
					g.Bounds = append(g.Bounds, *r.Bound)
				}
			}
			groups = append(groups, g)
		}
		v, err := stats.EvaluateGroups(groups, opt)
		if err != nil {
			return err
		}
		family = max(family, v.Total)
		if len(micros) > 0 {
			rest := v.Assessments[len(where):]
			for _, mc := range micros {
				n := len(mc.m.Candidates[mc.ci].Rows)
				mc.m.Rejudge(mc.ci, rest[:n], v.Alpha)
				rest = rest[n:]
			}
			v.Assessments = v.Assessments[:len(where)]
			v = stats.Tally(v)
		}
		sayInstead(&v, say)
		for k, w := range where {
			cell := s.Cells[w.cell]
			cell.Comparison.Rows[w.row].Cells[ci].Assessment = v.Assessments[k]
			// In the suite's verdict a measure names its cell:
			// "tps@c=4 [partitions=32]".
			v.Assessments[k].Measure.Step += " [" + cell.Key + "]"
		}
		s.Verdicts = append(s.Verdicts, v)
	}
	s.Family = family
	s.Reach = reachOf(s.Verdicts)
	// Significance is the suite's now: explain every cell again with it.
	for _, cell := range s.Cells {
		if cell.Comparison != nil {
			if len(s.Verdicts) > 0 {
				cell.Comparison.suiteFamily = family
			}
			cell.Comparison.explain(opt, say)
			cell.Comparison.findings()
		}
	}
	return nil
}

func hasBound(bs stats.Bounds, b stats.Bound) bool {
	for _, x := range bs {
		if x.Measure == b.Measure && x.Step == b.Step {
			return true
		}
	}
	return false
}

// groups sums up tps per axis value and candidate.
func (s *Suite) groups() {
	for _, ax := range s.Axes {
		for _, val := range ax.Values {
			for ci, cand := range s.Candidates {
				g := Group{Axis: ax.Name, Value: val, Candidate: cand, Lo: math.Inf(1), Hi: math.Inf(-1)}
				var changes []float64
				for _, cell := range s.Cells {
					if cell.Comparison == nil || cellValue(cell, ax.Name) != val {
						continue
					}
					for _, row := range cell.Comparison.Rows {
						if row.Measure.Name != "tps" {
							continue
						}
						a := row.Cells[ci].Assessment
						if math.IsNaN(a.Change) {
							continue
						}
						g.Steps++
						switch a.Effect {
						case stats.Improved:
							g.Faster++
						case stats.Regressed:
							g.Slower++
						}
						changes = append(changes, a.Change)
						g.Lo, g.Hi = math.Min(g.Lo, a.Change), math.Max(g.Hi, a.Change)
					}
				}
				if g.Steps == 0 {
					continue
				}
				sort.Float64s(changes)
				g.Median = changes[len(changes)/2]
				if len(changes)%2 == 0 {
					g.Median = (changes[len(changes)/2-1] + changes[len(changes)/2]) / 2
				}
				s.Groups = append(s.Groups, g)
			}
		}
	}
}

func cellValue(c SuiteCell, name string) string {
	for _, p := range c.Params {
		if p.Name == name {
			return p.Value
		}
	}
	return ""
}

// Outcome is the suite's verdict: the worst outcome of any candidate's
// bounded measures, and a failure when a decision rule failed (or could
// not be checked) in some cell; stats.NoBound when nothing was bounded
// and no rule was given.
func (s *Suite) Outcome() stats.Outcome {
	w := worstOf(s.Verdicts)
	switch {
	case s.ExpectFailed():
		w = stats.Fail
	case len(s.Outcomes) > 0:
		w = stats.Worst(w, stats.Pass)
	}
	return w
}

// ExpectFailed reports whether some decision rule failed (or could not be
// checked) in some cell.
func (s *Suite) ExpectFailed() bool {
	for _, o := range s.Outcomes {
		if o.Failed() {
			return true
		}
	}
	return false
}

// Headline sums the suite up in the pooler bot's words, one clause per
// candidate: "Compared patch with master: failed: 1 of 12 bounded
// measures past its bound: ...".
func (s *Suite) Headline() string {
	if len(s.Verdicts) == 0 {
		h := fmt.Sprintf("Suite %s: %d cells of %s alone (nothing to compare)", s.Name, len(s.Cells), s.Baseline)
		if n := s.expectFailures(); n > 0 {
			h += fmt.Sprintf("; %d of %d rule checks failed", n, len(s.Outcomes))
		}
		return h
	}
	parts := make([]string, len(s.Verdicts))
	for i, v := range s.Verdicts {
		parts[i] = fmt.Sprintf("Compared %s with %s: %s", s.Candidates[i], s.Baseline, v.Headline())
	}
	h := strings.Join(parts, "; ")
	if n := s.expectFailures(); n > 0 {
		h += fmt.Sprintf("; %d of %d rule checks failed", n, len(s.Outcomes))
	}
	if s.Incomplete != "" {
		h += " (incomplete)"
	}
	return h
}

// Lead is the suite's headline in one line, without the measures it
// names: "Compared slow with base: failed: 3 of 6 bounded measures past
// their bounds; 3 inconclusive". Details are those measures, a line each.
func (s *Suite) Lead() string {
	if len(s.Verdicts) == 0 {
		return s.Headline()
	}
	parts := make([]string, len(s.Verdicts))
	for i, v := range s.Verdicts {
		parts[i] = fmt.Sprintf("Compared %s with %s: %s", s.Candidates[i], s.Baseline, v.Lead())
	}
	h := strings.Join(parts, "; ")
	if n := s.expectFailures(); n > 0 {
		h += fmt.Sprintf("; %d of %d rule checks failed", n, len(s.Outcomes))
	}
	if s.Incomplete != "" {
		h += " (incomplete)"
	}
	return h
}

// Details are the measures the headline names, a line each under Lead
// (stats.Verdict.Listed), each led by its candidate when there are
// several.
func (s *Suite) Details() []string {
	var out []string
	for i, v := range s.Verdicts {
		for _, l := range v.Listed() {
			if len(s.Verdicts) > 1 {
				l = s.Candidates[i] + ": " + l
			}
			out = append(out, l)
		}
	}
	return out
}

func (s *Suite) expectFailures() int {
	n := 0
	for _, o := range s.Outcomes {
		if o.Failed() {
			n++
		}
	}
	return n
}
