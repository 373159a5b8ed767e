package report

// Kind is what a document shows, decided once from what it holds
// (Doc.Kind): each format lays out the kinds it shows (Format.Shows), one
// case each, and no format tests the document's parts itself.
type Kind int

// The kinds of document.
const (
	// KindFiles is result files on their own, each a sweep (run, report).
	KindFiles Kind = iota
	// KindComparison is files compared: an A/B run's, pgscale compare's.
	KindComparison
	// KindNoise is an A/A calibration run's noise.
	KindNoise
	// KindSuite is a suite's cells compared, and its micro cells judged.
	KindSuite
	// KindMicro is micro-benchmark runs judged on their own.
	KindMicro
	// KindBisect is a bisect's log.
	KindBisect
	// KindHistory is the run history's series with their change points
	// (history show).
	KindHistory
	// KindCheck is the history's change points checked against bounds
	// (history check).
	KindCheck
	// KindSeries is the list of the history's series (history list).
	KindSeries
)

// analysis says the kind is an analysis of result files (or
// micro-benchmarks), the first five.
func (k Kind) analysis() bool { return k <= KindMicro }

// kindNames name the kinds in errors.
var kindNames = map[Kind]string{
	KindFiles: "result files", KindComparison: "a comparison", KindNoise: "an A/A run's noise", KindSuite: "a suite",
	KindMicro: "micro-benchmarks", KindBisect: "a bisect", KindHistory: "the run history", KindCheck: "a history check",
	KindSeries: "the history's series",
}

// String names the kind.
func (k Kind) String() string { return kindNames[k] }

// Kind is what the document shows: a bisect's log, the history, a check
// or a list of series when it holds one; else what its analysis is of,
// the first of a suite, an A/A run's noise, a comparison and
// micro-benchmark runs alone that it holds; else its files.
func (d *Doc) Kind() Kind {
	switch {
	case d.Bisect != nil:
		return KindBisect
	case d.History != nil:
		return KindHistory
	case d.Check != nil:
		return KindCheck
	case d.Series != nil:
		return KindSeries
	case d.Analysis == nil:
		return KindFiles
	case d.Suite != nil:
		return KindSuite
	case d.Noise != nil:
		return KindNoise
	case d.Comparison != nil:
		return KindComparison
	case len(d.Micro) > 0:
		return KindMicro
	}
	return KindFiles
}
