// Package report renders what pgscale measured, and computes nothing: result
// files, the comparisons internal/compare makes of them and the diagnoses
// internal/diagnose makes, in every format behind one registry (format.go):
// terminal text, markdown, verdict JSON, Go benchmark format, Bencher
// Metric Format and a self-contained HTML page (internal/report/html).
// Live output (Live) is written by the text format's own functions, so a
// run prints what `pgscale report` prints of its result file.
package report

import (
	"github.com/pgscale/pgscale/internal/compare"
)

// Doc is what one report shows.
type Doc struct {
	// Files are result files, each with the name it goes by (its path).
	Files []compare.Input
	// Comparison, when set, compares the files: an A/B run, pgscale
	// compare. The text and markdown formats then show it instead of the
	// files' sweeps.
	Comparison *compare.Comparison
	// Noise, when set, is an A/A calibration of the files (ab
	// --calibrate), shown instead of the files' sweeps.
	Noise *compare.Noise
	// Suite, when set, is a suite's comparison of its cells (Files are
	// then every cell's files), shown instead of the files' sweeps.
	Suite *compare.Suite
	// Color marks significant changes in text with ANSI colours; set it
	// only when writing to a terminal that shows them.
	Color bool
	// HTMLFile is the HTML report the comment format links its flame
	// graphs to (default report.html, beside the comment).
	HTMLFile string
}
