// Package report renders what pgscale measured, and computes nothing: the
// analysis internal/compare (with internal/diagnose) makes of result files
// — every step's figures and verdict, a sweep's diagnosis, the comparison,
// its outcomes and why, the flame graphs — a bisect's log and the run
// history's values, in every format behind one registry (format.go):
// terminal text, markdown, verdict JSON, Go benchmark format, Bencher
// Metric Format and a self-contained HTML page (internal/report/html).
// Live output (Live) is written by the text format's own functions, so a
// run prints what `pgscale report` prints of its result file.
package report

import (
	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/trend"
)

// Doc is what one report shows: the analysis internal/compare made of the
// result files (each file on its own, and their comparison, an A/A run's
// noise or a suite's comparison), or a bisect's log, or the run history's
// values, laid out by every format as it is. What it shows is its Kind.
type Doc struct {
	*compare.Analysis
	// Bisect is a bisect's log (pgscale bisect), its steps judged as it
	// ran them.
	Bisect *result.Bisect
	// History is the run history's series with their change points
	// (history show); Check the change points since the acknowledged
	// ones judged against bounds (history check); Series the list of
	// the history's series (history list).
	History *History
	Check   *trend.Check
	Series  *Series
	// Color marks significant changes in text with ANSI colours; set it
	// only when writing to a terminal that shows them.
	Color bool
	// Outputs are the files this invocation writes, by format name, so
	// that one format may link to what another writes beside it (the
	// comment links to the HTML report's flame graphs; default
	// report.html beside it).
	Outputs map[string]string
}

// NewDoc is the document of an analysis.
func NewDoc(a *compare.Analysis) *Doc { return &Doc{Analysis: a} }

// analyzed is d with an analysis, an empty one when it has none, for the
// formats that lay out an analysis.
func (d *Doc) analyzed() *Doc {
	if d.Analysis != nil {
		return d
	}
	c := *d
	c.Analysis = &compare.Analysis{}
	return &c
}
