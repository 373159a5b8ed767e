package stats

import "math"

// Method says how a Comparison was made.
type Method int

const (
	// Paired compares per-round values where round i of the baseline and
	// round i of the candidate belong together (interleaved A/B rounds).
	Paired Method = iota + 1
	// Independent compares two unrelated sets of values, such as two saved
	// result files (pgscale compare A.json B.json).
	Independent
	// Window compares per-second samples during a disturbance window with
	// those before it.
	Window
)

// String returns "paired", "unpaired" or "window".
func (m Method) String() string {
	switch m {
	case Paired:
		return "paired"
	case Independent:
		return "unpaired"
	case Window:
		return "window"
	}
	return "unknown"
}

// Comparison is the change of one measure from a baseline to a candidate.
type Comparison struct {
	// Measure is what was compared.
	Measure Measure
	// Method says how.
	Method Method
	// N1 and N2 count the values used from the baseline and the candidate
	// (rounds for Paired, equal; seconds for Window).
	N1, N2 int
	// Base and Cand are the centres of each side: geometric means of the
	// rounds used (Paired), medians (Independent), means of the seconds
	// used (Window).
	Base, Cand float64
	// Change is the relative change cand/base − 1: -0.054 means 5.4 %
	// lower. NaN when nothing could be compared.
	Change float64
	// Lo and Hi bound the confidence interval of Change; they are -Inf and
	// +Inf when no interval could be formed.
	Lo, Hi float64
	// Confidence is the level of the interval [Lo, Hi] as requested (the
	// distribution-free parts may reach a higher actual level; see the
	// details).
	Confidence float64
	// P is the two-sided p-value of the test named by Test, before any
	// correction for multiple comparisons. NaN when no test could be run;
	// Evaluate then treats it as 1.
	P float64
	// Test names the test behind P.
	Test string
	// PairedDetail holds the pieces of a Paired comparison; nil otherwise.
	PairedDetail *PairedDetail
	// LayoutDetail holds, for a comparison over cluster layouts
	// (CompareLayouts), the layouts and the spread within and between
	// them; PairedDetail then describes the per-layout means. Nil
	// otherwise.
	LayoutDetail *LayoutDetail
	// UnpairedDetail holds the pieces of an Independent comparison; nil
	// otherwise.
	UnpairedDetail *UnpairedDetail
	// WindowDetail holds the pieces of a Window comparison; nil otherwise.
	WindowDetail *WindowDetail
	// Warnings are caveats about these numbers.
	Warnings []error

	// again makes the comparison again from the same values at another
	// confidence level, for the decisions against a bound (Evaluate);
	// nil for comparisons made elsewhere.
	again func(conf float64) Comparison
}

// String formats the comparison as in the verdict: "tps@c=16 -5.4% ± 0.9%".
func (c Comparison) String() string {
	return c.Measure.Key() + " " + FormatChange(c.Change, c.Lo, c.Hi)
}

// newComparison returns a Comparison with nothing computed yet.
func newComparison(m Measure, method Method, conf float64, test string) Comparison {
	return Comparison{
		Measure:    m,
		Method:     method,
		Base:       math.NaN(),
		Cand:       math.NaN(),
		Change:     math.NaN(),
		Lo:         math.Inf(-1),
		Hi:         math.Inf(1),
		Confidence: conf,
		P:          math.NaN(),
		Test:       test,
	}
}
