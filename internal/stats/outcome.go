package stats

import (
	"fmt"
	"math"
)

// Outcome is what a measure's bound says of it: pass, fail or
// inconclusive, or nothing when no bound applied.
type Outcome int

const (
	// NoBound: no bound applied; the measure decides nothing.
	NoBound Outcome = iota
	// Pass: the measure's interval lies wholly on the good side of its
	// bound.
	Pass
	// Inconclusive: the interval reaches across the bound, or it is past
	// the bound without the evidence a failure needs (FailRule).
	Inconclusive
	// Fail: the measure is past its bound with the evidence FailRule
	// asks for.
	Fail
)

// String returns "no bound", "pass", "inconclusive" or "fail".
func (o Outcome) String() string {
	switch o {
	case NoBound:
		return "no bound"
	case Pass:
		return "pass"
	case Inconclusive:
		return "inconclusive"
	case Fail:
		return "fail"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Verdict returns the outcome as a verdict says it: "passed", "failed",
// "inconclusive", or "no bounds given".
func (o Outcome) Verdict() string {
	switch o {
	case Pass:
		return "passed"
	case Fail:
		return "failed"
	case Inconclusive:
		return "inconclusive"
	}
	return "no bounds given"
}

// Worst returns the worst of outcomes: fail over inconclusive over pass
// over no bound.
func Worst(os ...Outcome) Outcome {
	w := NoBound
	for _, o := range os {
		w = max(w, o)
	}
	return w
}

// FailRule says, in words, what a bounded measure needs to fail; the
// docs (docs/statistics.md) give the false-alarm rates it was chosen
// from.
const FailRule = "past its bound by the t-test against it after Holm's correction over the bounded measures, with the interval at the decision's level, its signed-rank part included, past the bound too"

// MinFailRounds is the fewest rounds (or layouts) a paired measure needs
// before it can fail at the given confidence: the distribution-free
// interval of the signed-rank test, which a failure must agree with, is
// infinite with fewer (the test's smallest two-sided p-value is 2·2⁻ⁿ).
// 6 at 95 %.
func MinFailRounds(confidence float64) int {
	a := Alpha(confidence)
	if !(a > 0 && a < 1) {
		return 0
	}
	return int(math.Ceil(math.Log2(2/a) - 1e-9))
}

// decisionAlpha is the level a measure's interval is judged at against
// its bound: alpha, or when the run looks after every round the part of
// it this look spends; familyAlpha is what Holm's correction over the
// family's t-tests against their bounds runs at: that, times the family's
// share of alpha (a suite's cell). A pass needs no share (every measure
// must pass on its own, which no multiplicity makes easier), nor does the
// signed-rank guard of a failure, which holds each measure apart; the
// family's false failures are Holm's.
func (o Options) decisionAlpha() (decision, family float64) {
	conf, _ := o.confidence()
	a := Alpha(conf)
	if s := o.Sequential; s != nil {
		a = s.Spend(a)
	}
	family = a
	if o.Share > 0 && o.Share < 1 {
		family *= o.Share
	}
	return a, family
}

// again returns c as it would be at another confidence level, or false
// when c was not made by this package's comparisons (a change point, a
// comparison built by hand): it is then taken as it is.
func (c Comparison) at(conf float64) (Comparison, bool) {
	if c.again == nil {
		return c, false
	}
	if conf == c.Confidence {
		return c, true
	}
	return c.again(conf), true
}

// badSide reports whether x lies past limit in m's bad direction.
func badSide(m Measure, x, limit float64) bool {
	if m.Direction == LowerIsBetter {
		return x > limit
	}
	return x < limit
}

// pastBound reports whether c's interval lies wholly past limit in the bad
// direction; with strict, a paired comparison's distribution-free interval
// must be finite, since a failure needs it to agree.
func pastBound(c Comparison, limit float64, strict bool) bool {
	if math.IsNaN(c.Change) {
		return false
	}
	if strict && !c.Measure.Counted && c.PairedDetail != nil && (math.IsInf(c.PairedDetail.HLLo, 0) || math.IsInf(c.PairedDetail.HLHi, 0)) {
		return false
	}
	if c.Measure.Direction == LowerIsBetter {
		return c.Lo > limit
	}
	return c.Hi < limit
}

// withinBound reports whether c's interval lies wholly on the good side of
// limit.
func withinBound(c Comparison, limit float64) bool {
	if math.IsNaN(c.Change) {
		return false
	}
	if c.Measure.Direction == LowerIsBetter {
		return c.Hi < limit
	}
	return c.Lo > limit
}

// boundP is the p-value of the test that c is past limit, on the scale of
// a two-sided test (twice the one-sided p-value): an interval at level
// 1 − alpha lies wholly past the bound exactly when it is at most alpha.
// For a paired comparison it is the t-test's against the bound (the
// test Holm's correction runs over; the signed-rank test must agree
// besides, at the decision's level, through the interval). Other
// comparisons find the smallest alpha at whose level their interval lies
// past the bound; one made elsewhere gets the normal approximation from
// its own interval. 1 when the change is not past the bound at all.
func boundP(c Comparison, limit float64) float64 {
	if math.IsNaN(c.Change) || !badSide(c.Measure, c.Change, limit) {
		return 1
	}
	if d := c.PairedDetail; d != nil && len(d.logs) > 0 {
		return tBoundP(c, limit)
	}
	if c.again == nil {
		return normalBoundP(c, limit)
	}
	past := func(a float64) bool {
		x, _ := c.at(1 - a)
		return pastBound(x, limit, true)
	}
	lo, hi := 1e-12, 1-1e-9
	if !past(hi) {
		return 1
	}
	if past(lo) {
		return lo
	}
	// Bisect on a log scale: p-values span many decades.
	for i := 0; i < 50 && hi/lo > 1.0001; i++ {
		mid := math.Sqrt(lo * hi)
		if past(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// tBoundP is the t-test of the mean log ratio against the bound's,
// two-sided scale.
func tBoundP(c Comparison, limit float64) float64 {
	d := c.PairedDetail
	n := float64(len(d.logs))
	if n < 2 || math.IsNaN(d.SDLog) {
		return 1
	}
	x := d.MeanLog - math.Log1p(limit)
	if d.SDLog == 0 {
		if badSide(c.Measure, math.Expm1(d.MeanLog), limit) {
			return 0
		}
		return 1
	}
	return tTwoSidedP(x/(d.SDLog/math.Sqrt(n)), n-1)
}

// normalBoundP is boundP from an interval alone, read as a normal one at
// its confidence on the log-ratio scale.
func normalBoundP(c Comparison, limit float64) float64 {
	if math.IsInf(c.Lo, 0) || math.IsInf(c.Hi, 0) || !(c.Confidence > 0 && c.Confidence < 1) {
		return 1
	}
	lo, hi, x, l := math.Log1p(c.Lo), math.Log1p(c.Hi), math.Log1p(c.Change), math.Log1p(limit)
	half := zQuantile(1 - Alpha(c.Confidence)/2)
	se := (hi - lo) / (2 * half)
	if !(se > 0) {
		if badSide(c.Measure, c.Change, limit) {
			return 0
		}
		return 1
	}
	z := math.Abs(x-l) / se
	return math.Min(1, 2*(1-zCDF(z)))
}

// spreadOf is the per-unit spread of a paired comparison (the standard
// deviation of the per-round, or per-layout, log ratios) and its unit;
// NaN when unknown.
func spreadOf(c Comparison) (float64, string) {
	if c.PairedDetail == nil {
		return math.NaN(), ""
	}
	unit := "round"
	if c.LayoutDetail != nil {
		unit = "layout"
	}
	return c.PairedDetail.SDLog, unit
}

// roundsNeeded is how many rounds (or layouts) at c's spread would decide
// it against limit at the decision's level alpha with 80 % power, if the
// change is what was measured: enough for the interval to clear the bound
// on the side the change is on (the t-test's, at the level Holm's
// correction over the family's bounded measures asks of the first), and
// for a failure at least MinFailRounds. 0 when unknown; -1 when the change
// is too close to the bound for any number of rounds at this spread.
func roundsNeeded(c Comparison, limit, alpha, familyAlpha float64, family int) int {
	sd, _ := spreadOf(c)
	if math.IsNaN(sd) || math.IsNaN(c.Change) || c.PairedDetail == nil {
		return 0
	}
	d := math.Abs(c.PairedDetail.MeanLog - math.Log1p(limit))
	level := 1 - alpha
	if badSide(c.Measure, c.Change, limit) {
		level = 1 - familyAlpha/float64(max(1, family))
	}
	n := RoundsToDetect(sd, math.Expm1(d), level, DefaultPower)
	if n == 0 || n > maxRoundsNeeded {
		return -1
	}
	if badSide(c.Measure, c.Change, limit) && !c.Measure.Counted {
		n = max(n, MinFailRounds(1-alpha))
	}
	return max(n, c.N1+1)
}

// maxRoundsNeeded is the most rounds roundsNeeded names; beyond it the
// change is said to be about at its bound.
const maxRoundsNeeded = 10000
