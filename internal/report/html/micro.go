package html

import (
	_ "embed"
	"math"
	"strconv"
)

// sortJS sorts a table of the page's micro section by the column whose
// header is clicked; the page carries it where it has such a table.
//
//go:embed sort.js
var sortJS string

var sortScript = newScript(compact(sortJS))

// Micro is a micro-benchmark run's comparison of one candidate with the
// baseline, laid out for the page's micro section: the bot's headline,
// the benchmarks' measures (the failed and inconclusive first, then by
// change, as the renderer orders them) and the group lines.
type Micro struct {
	// Title names the run and the candidate: "micro cell go: slow
	// against base".
	Title string `json:"title"`
	// Outcome and Class are the badge ("failed", "bad").
	Outcome  string     `json:"outcome"`
	Class    string     `json:"class"`
	Headline string     `json:"headline"`
	Baseline string     `json:"baseline"`
	Name     string     `json:"candidate"`
	Rows     []MicroRow `json:"rows"`
	Groups   []string   `json:"groups,omitempty"`
	// Footnote says what ran, how many rounds and how long; Problems
	// what made it incomplete.
	Footnote string   `json:"footnote"`
	Problems []string `json:"problems,omitempty"`
}

// MicroRow is one measure of one benchmark: its figures as text, its
// change as a fraction with whether it is a significant improvement or
// regression (the page colours it on the comparison's scale), Outside for
// a bounded measure that did not pass, Title its why.
type MicroRow struct {
	Bench, Unit, Base, Cand, Change, Bound, Status string
	ChangeValue                                    float64 `json:"-"`
	Improved, Regressed                            bool    `json:"-"`
	Outside                                        bool    `json:"outside"`
	Title                                          string  `json:"title"`
	Class                                          string  `json:"class"`
}

// pageMicro colours each row's change.
func pageMicro(ms []Micro) []Micro {
	out := make([]Micro, len(ms))
	for i, m := range ms {
		m.Rows = append([]MicroRow(nil), m.Rows...)
		for j := range m.Rows {
			r := &m.Rows[j]
			r.Class = changeClass(r.ChangeValue, r.Improved, r.Regressed)
		}
		out[i] = m
	}
	return out
}

// SortChange is the row's change as sort.js orders the change column by
// it: the fraction, "" when there is none.
func (r MicroRow) SortChange() string {
	if math.IsNaN(r.ChangeValue) || math.IsInf(r.ChangeValue, 0) {
		return ""
	}
	return strconv.FormatFloat(r.ChangeValue, 'g', -1, 64)
}
