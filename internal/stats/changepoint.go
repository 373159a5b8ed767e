package stats

import (
	"fmt"
	"math"
	"slices"

	"github.com/aclements/go-moremath/mathx"
	"github.com/aclements/go-moremath/stats"
)

// ChangePointTest names the test behind a ChangePoint's P.
const ChangePointTest = "Student t-test between the segments either side"

// Defaults of ChangePointOptions. MaxP is Otava's default; the window is
// shorter than Otava's 50: a change that is undone within the window (a
// slow spell of 10 runs, a reverted commit) splits no whole window of 50
// significantly: a 3 % dip of 10 values in 1 % noise was found in 30 % of
// drawn series with window 50 and in 99.6 % with 30, at the same
// false-positive rate on flat noise (TestChangePointsBump,
// docs/history.md).
const (
	DefaultChangePointWindow = 30
	DefaultChangePointMaxP   = 0.001
)

// ChangePointOptions configures ChangePoints.
type ChangePointOptions struct {
	// Options sets the confidence level of each change's interval (not the
	// significance of the detection, which is MaxP).
	Options
	// Window is the length of the sliding windows the split step searches;
	// zero means DefaultChangePointWindow. At least 2.
	Window int
	// MaxP is the p-value a change point must stay under; zero means
	// DefaultChangePointMaxP. It is not a false-positive rate: the test is
	// made where the statistic found the strongest split, so flat series
	// show change points more often than MaxP says (docs/history.md gives
	// the rate measured on Gaussian noise).
	MaxP float64
	// MinChange drops a significant change point whose relative change,
	// the larger of |after/before − 1| and |before/after − 1|, is not above
	// it; zero keeps every significant one.
	MinChange float64
}

// ChangePoint is a place in a series where its mean moves.
type ChangePoint struct {
	// Index is the position of the first value after the change.
	Index int
	// NBefore and NAfter count the values of the segments either side: from
	// the previous change point (or the start) to Index, and from Index to
	// the next change point (or the end).
	NBefore, NAfter int
	// Before and After are the means of those segments.
	Before, After float64
	// Change is After/Before − 1: -0.03 means 3 % lower; NaN when Before
	// is not positive.
	Change float64
	// Lo and Hi bound the confidence interval on Change (infinite when
	// none could be formed) at level Confidence.
	Lo, Hi, Confidence float64
	// P is the two-sided p-value of the t-test (ChangePointTest) between the
	// two segments.
	P float64
	// QHat is the E-Divisive statistic of the split, the divergence of the
	// segments either side in the window where it was found.
	QHat float64
}

// String formats the change point as "at 40: -3.1% ± 0.8%, p=2.1e-09".
func (c ChangePoint) String() string {
	return fmt.Sprintf("at %d: %s, p=%.2g", c.Index, FormatChange(c.Change, c.Lo, c.Hi), c.P)
}

// ChangePoints finds the places where the mean of a series (values in time
// order) moves, with E-Divisive means and a t-test, as Apache Otava does it
// (otava/analysis.py, compute_change_points; the method of D. Daly et al.,
// "The Use of Change Point Detection to Identify Software Performance
// Regressions in a Continuous Integration System", ICPE 2020, and
// M. Fleming et al., "Hunter: Using Change Point Detection to Hunt for
// Performance Regressions", ICPE 2023, on the E-Divisive statistic of
// D. S. Matteson and N. A. James, "A Nonparametric Approach for Multiple
// Change Point Analysis of Multivariate Data", JASA 2014).
//
// Split: windows of Window values, each starting half a window after the
// last (or at the last change point found in the one before), are searched
// recursively: the split that maximises the E-Divisive statistic
// Q̂(X, Y) = 2/(n+m)·Σ|Xi−Yj| − 2m/((n+m)(n−1))·Σi<k|Xi−Xk| − 2n/((n+m)(m−1))·Σj<k|Yj−Yk|
// (distances to the first power; Y may end before the window does) over the
// segments between the change points already found is a change point when
// a two-sided Student t-test between the values either side of it, within
// that segment, gives p ≤ 10·MaxP (Otava's relaxed first pass). Merge: the
// union of these weak change points is re-tested over the whole series,
// each against its neighbours; the weakest (highest p; once all pass, the
// smallest change, against MinChange) is removed and the rest re-tested,
// until every one has p < MaxP and a change above MinChange.
//
// Differences from Otava: the t-test uses sample standard deviations
// (Otava passes population ones to SciPy, which makes small segments look
// surer), and after a removal every change point is re-tested, not two of
// them. Each Change has an interval from the same pooled variance as the
// test: ln(After/Before) ± t·sₚ·√(1/(n₁·Before²) + 1/(n₂·After²)) with
// n₁+n₂−2 degrees of freedom (the delta method), transformed back.
//
// Non-finite values are replaced by the value before them (the first by the
// first finite one), as Otava fills gaps, with a warning. The input is not
// modified. The result is deterministic: no resampling.
func ChangePoints(values []float64, opt ChangePointOptions) ([]ChangePoint, []error) {
	conf, warns := opt.confidence()
	window := opt.Window
	if window == 0 {
		window = DefaultChangePointWindow
	}
	if window < 2 {
		warns = append(warns, warnf(BadOption, "change point window %d is below 2; using %d", window, DefaultChangePointWindow))
		window = DefaultChangePointWindow
	}
	maxP := opt.MaxP
	if maxP == 0 {
		maxP = DefaultChangePointMaxP
	}
	if !(maxP > 0 && maxP < 1) {
		warns = append(warns, warnf(BadOption, "change point max p %v is not between 0 and 1; using %v", maxP, DefaultChangePointMaxP))
		maxP = DefaultChangePointMaxP
	}
	xs, filled := fillGaps(values)
	if filled > 0 {
		warns = append(warns, warnf(LeftOut, "%d non-finite values replaced by the value before them", filled))
	}
	if filled == len(values) && len(values) > 0 {
		warns = append(warns, warnf(TooFew, "no finite values"))
		return nil, warns
	}
	weak := splitStep(xs, window, firstPassP(maxP), conf)
	return mergeStep(xs, weak, maxP, opt.MinChange, conf), warns
}

// firstPassP is the relaxed significance of the split step, as in Otava.
func firstPassP(maxP float64) float64 {
	switch {
	case maxP < 0.05:
		return maxP * 10
	case maxP < 0.5:
		return maxP * 2
	}
	return maxP
}

// splitStep returns the weak change points of xs: the union of those found
// in each sliding window, tested over the whole series between them.
func splitStep(xs []float64, window int, p, conf float64) []ChangePoint {
	var found []ChangePoint
	step := window / 2
	for start := 0; start < len(xs); {
		end := min(start+window, len(xs))
		cps := divisive(xs[start:end], p, conf)
		last := 0
		for _, c := range cps {
			c.Index += start
			last = c.Index
			if !slices.ContainsFunc(found, func(f ChangePoint) bool { return f.Index == c.Index }) {
				found = append(found, c)
			}
		}
		start = max(last, start+step)
	}
	slices.SortFunc(found, func(a, b ChangePoint) int { return a.Index - b.Index })
	retest(xs, found, conf)
	return found
}

// divisive is Matteson and James's E-Divisive procedure on one window with
// the t-test as significance test: split the segment holding the best
// candidate while the split is significant at p.
func divisive(xs []float64, p, conf float64) []ChangePoint {
	q := newQCalc(xs)
	var cps []ChangePoint
	for {
		bounds := segmentBounds(cps, len(xs))
		best, bestQ, seg := -1, math.Inf(-1), -1
		for i := 0; i+1 < len(bounds); i++ {
			if bounds[i+1]-bounds[i] < 2 {
				continue
			}
			if tau, v := q.candidate(bounds[i], bounds[i+1]); v > bestQ {
				best, bestQ, seg = tau, v, i
			}
		}
		if best < 0 {
			return cps
		}
		c := tTestSplit(xs[bounds[seg]:best], xs[best:bounds[seg+1]], conf)
		c.Index, c.QHat = best, bestQ
		if !(c.P <= p) {
			return cps
		}
		cps = append(cps, c)
		slices.SortFunc(cps, func(a, b ChangePoint) int { return a.Index - b.Index })
	}
}

// mergeStep removes weak change points until each is significant at maxP
// and larger than minChange, re-testing the rest after every removal.
func mergeStep(xs []float64, cps []ChangePoint, maxP, minChange, conf float64) []ChangePoint {
	for len(cps) > 0 {
		weakest := 0
		for i, c := range cps {
			if pOrOne(c.P) > pOrOne(cps[weakest].P) {
				weakest = i
			}
		}
		if pOrOne(cps[weakest].P) < maxP {
			for i, c := range cps {
				if magnitude(c) < magnitude(cps[weakest]) {
					weakest = i
				}
			}
			if magnitude(cps[weakest]) > minChange {
				return cps
			}
		}
		cps = slices.Delete(cps, weakest, weakest+1)
		retest(xs, cps, conf)
	}
	return cps
}

// pOrOne treats a p-value that could not be computed as 1.
func pOrOne(p float64) float64 {
	if math.IsNaN(p) {
		return 1
	}
	return p
}

// magnitude is Otava's change magnitude: the larger of the forward and the
// backward relative change; 0 when a mean is 0.
func magnitude(c ChangePoint) float64 {
	var f, b float64
	if c.Before != 0 {
		f = math.Abs(c.After/c.Before - 1)
	}
	if c.After != 0 {
		b = math.Abs(c.Before/c.After - 1)
	}
	return math.Max(f, b)
}

// retest recomputes each change point's test against the segments between
// its neighbours; cps is sorted by index.
func retest(xs []float64, cps []ChangePoint, conf float64) {
	for i := range cps {
		lo, hi := 0, len(xs)
		if i > 0 {
			lo = cps[i-1].Index
		}
		if i+1 < len(cps) {
			hi = cps[i+1].Index
		}
		c := tTestSplit(xs[lo:cps[i].Index], xs[cps[i].Index:hi], conf)
		c.Index, c.QHat = cps[i].Index, cps[i].QHat
		cps[i] = c
	}
}

// segmentBounds returns 0, the change point indices in order, and n.
func segmentBounds(cps []ChangePoint, n int) []int {
	b := make([]int, 0, len(cps)+2)
	b = append(b, 0)
	for _, c := range cps {
		b = append(b, c.Index)
	}
	return append(b, n)
}

// tTestSplit compares the values before and after a split with a
// two-sided Student t-test (pooled variance), and puts an interval at level
// conf on the change from the same variance. P is 1 with two values or fewer
// in all, as in Otava.
func tTestSplit(before, after []float64, conf float64) ChangePoint {
	n1, n2 := float64(len(before)), float64(len(after))
	c := ChangePoint{NBefore: len(before), NAfter: len(after), P: 1, Change: math.NaN(),
		Lo: math.Inf(-1), Hi: math.Inf(1), Confidence: conf}
	c.Before, c.After = stats.Mean(before), stats.Mean(after)
	if c.Before > 0 {
		c.Change = c.After/c.Before - 1
	}
	if len(before)+len(after) <= 2 {
		return c
	}
	df := n1 + n2 - 2
	sp2 := (sumSquares(before, c.Before) + sumSquares(after, c.After)) / df
	se := math.Sqrt(sp2 * (1/n1 + 1/n2))
	switch {
	case se > 0:
		// Two-sided tail of Student's t straight from the incomplete beta
		// function: 1 − CDF would lose every p below 1e-16.
		t := (c.After - c.Before) / se
		c.P = mathx.BetaInc(df/(df+t*t), df/2, 0.5)
	case c.After != c.Before:
		c.P = 0
	}
	if c.Before > 0 && c.After > 0 {
		l := math.Log(c.After / c.Before)
		seLog := math.Sqrt(sp2 * (1/(n1*c.Before*c.Before) + 1/(n2*c.After*c.After)))
		tq := tQuantile(1-(1-conf)/2, df)
		c.Lo, c.Hi = math.Expm1(l-tq*seLog), math.Expm1(l+tq*seLog)
	}
	return c
}

// sumSquares returns Σ(x − mean)².
func sumSquares(xs []float64, mean float64) float64 {
	var s float64
	for _, x := range xs {
		s += (x - mean) * (x - mean)
	}
	return s
}

// fillGaps replaces each non-finite value with the finite one before it
// (leading ones with the first finite value) and counts them.
func fillGaps(values []float64) ([]float64, int) {
	xs := slices.Clone(values)
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	n := 0
	first := slices.IndexFunc(xs, finite)
	if first < 0 {
		return xs, len(xs)
	}
	for i := range xs {
		if finite(xs[i]) {
			continue
		}
		n++
		if i < first {
			xs[i] = xs[first]
		} else {
			xs[i] = xs[i-1]
		}
	}
	return xs, n
}

// qCalc evaluates the E-Divisive statistic over the segments of one series
// in O(n²) per segment, from row prefix sums of the distance matrix:
// pre[k][i] = Σ_{i' < i} |x_{i'} − x_k|.
type qCalc struct {
	pre [][]float64
}

func newQCalc(xs []float64) *qCalc {
	n := len(xs)
	pre := make([][]float64, n)
	for k := range pre {
		row := make([]float64, n+1)
		for i, x := range xs {
			row[i+1] = row[i] + math.Abs(x-xs[k])
		}
		pre[k] = row
	}
	return &qCalc{pre: pre}
}

// sum returns Σ_{i ∈ [a, b)} |x_i − x_k|.
func (q *qCalc) sum(k, a, b int) float64 { return q.pre[k][b] - q.pre[k][a] }

// candidate returns the split τ of segment [s, e) that maximises
// Q̂(x[s:τ], x[τ:κ]) over s < τ < κ ≤ e, and that maximum; the first in
// (τ, κ) order on ties, as numpy's argmax in Otava.
func (q *qCalc) candidate(s, e int) (int, float64) {
	best, bestQ := -1, math.Inf(-1)
	within := 0.0 // Σ_{s ≤ i < k < τ} |x_i − x_k|
	for tau := s + 1; tau < e; tau++ {
		within += q.sum(tau-1, s, tau-1)
		n := float64(tau - s)
		var between, after float64 // Σ |X_i − Y_j| and Σ_{j < k} |Y_j − Y_k|
		for kappa := tau + 1; kappa <= e; kappa++ {
			j := kappa - 1
			between += q.sum(j, s, tau)
			after += q.sum(j, tau, j)
			m := float64(kappa - tau)
			v := 2 / (n + m) * between
			if n > 1 {
				v -= 2 * m / ((n + m) * (n - 1)) * within
			}
			if m > 1 {
				v -= 2 * n / ((n + m) * (m - 1)) * after
			}
			if v > bestQ {
				best, bestQ = tau, v
			}
		}
	}
	return best, bestQ
}
