// Package html renders result files as one self-contained HTML page: the
// comparison internal/compare made of them (verdicts, a colour-scale
// matrix and the per-measure table) or an A/A run's noise, scaling curves,
// a per-second timeline of every step, the evidence behind each step's
// verdict, and flame graphs of recorded profiles with differential ones of
// an A/B run's candidates against the baseline. The page draws its charts
// and flame graphs itself, from its JSON data block: charts.js hands the
// charts to uPlot (vendored under uplot/: hover, drag to zoom, legends
// that toggle), flame.js draws the flame graphs (hover, zoom, search) and
// sort.js sorts the micro-benchmark tables; the Content-Security-Policy
// allows those scripts by their hashes, and nothing else. The page needs
// no network. Everything taken from a result file is escaped by
// html/template, and the scripts set it as text only.
package html

import (
	"errors"
	"fmt"
	"io"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/flame"
)

// Doc is what one page shows: result files with what internal/compare
// made of each on its own (its steps' figures and verdicts, a sweep's knee
// and diagnosis, each measure's central value per client count), shown by
// the path each was read from (Location), and the comparison, noise or
// suite worded as internal/report words them. The page draws those,
// computing none.
type Doc struct {
	Files []compare.FileAnalysis
	// Comparison, when set, compares the files (an A/B run, pgscale
	// compare): the page opens with its verdict, a matrix of the changes
	// and the per-measure table.
	Comparison *Comparison
	// Noise, when set, is the A/A noise of a calibration run's files.
	Noise *Noise
	// Matrices are further grids of changes, each drawn as given: the
	// place of a suite's matrix of cells against the baseline.
	Matrices []Matrix
	// Title, when set, names the page instead of its runs (a suite).
	Title string
	// Rules are the decision rules' outcomes (--expect, a suite's rule:),
	// each worded as the text format words it.
	Rules []Rule
	// Micro are micro-benchmark runs' comparisons, one per run and
	// candidate (pgscale micro, a suite's micro cells).
	Micro []Micro
	// Flames are the flame graphs the analysis made of the files'
	// profiles (compare.Analysis.Flames), indexed by Files; nil draws
	// none.
	Flames *flame.Set
}

// Rule is one decision rule's outcome on one target (and cell).
type Rule struct {
	Text string
	// Holds says the rule held; a rule that failed or could not be
	// checked does not.
	Holds bool
}

// Write renders doc as one HTML page on w. It refuses a file that fails
// result validation.
func Write(w io.Writer, doc Doc) error {
	if len(doc.Files) == 0 && len(doc.Micro) == 0 {
		return errors.New("html report: no result files")
	}
	for _, f := range doc.Files {
		if f.File == nil {
			return fmt.Errorf("html report: %s: no result", f.Location())
		}
		if f.Rescaled == nil || len(f.Steps) != len(f.File.Steps) {
			return fmt.Errorf("html report: %s: no analysis of the file (compare.AnalyzeFile)", f.Location())
		}
		// The checks result.Read makes, for files that did not come
		// through it: an unredacted password among them.
		if err := f.File.Validate(); err != nil {
			return fmt.Errorf("html report: %s: %w", f.Location(), err)
		}
	}
	if c := doc.Comparison; c != nil && !c.worded() {
		return errors.New("html report: the comparison's words are not those of its rows")
	}
	if n := doc.Noise; n != nil && (n.Of == nil || len(n.Rows) != len(n.Of.Rows)) {
		return errors.New("html report: the noise's words are not those of its rows")
	}
	m := build(doc)
	return render(w, m)
}
