package stats

import (
	"math"

	"github.com/aclements/go-moremath/stats"
)

// WindowTest names the test behind a window comparison's P.
const WindowTest = "Welch t-test on batch means"

// WindowOptions configures CompareWindows.
type WindowOptions struct {
	Options
	// SkipBefore is the number of warm-up seconds dropped from the start
	// of the before series.
	SkipBefore int
	// SkipDuring is the number of seconds dropped from the start of the
	// during series, while the disturbance takes hold.
	SkipDuring int
	// BatchLen is the number of consecutive seconds averaged into one
	// batch; zero picks ⌈√n⌉ for n the length of the shorter series
	// after skipping.
	BatchLen int
}

// WindowDetail holds the pieces a window comparison is built from.
type WindowDetail struct {
	// BatchLen is the batch length in seconds that was used.
	BatchLen int
	// BatchesBefore and BatchesDuring count the batches on each side.
	BatchesBefore, BatchesDuring int
	// DroppedBefore and DroppedDuring count the seconds not used: skipped
	// as warm-up, non-finite, or left over from whole batches (taken from
	// the start of the series, next to the warm-up).
	DroppedBefore, DroppedDuring int
	// SELog is the standard error of ln(during mean / before mean) and DF
	// its Welch-Satterthwaite degrees of freedom.
	SELog, DF float64
	// Lag1 is the lag-1 autocorrelation of the batch means, pooled over
	// both series; NaN with fewer than 3 batches a side.
	Lag1 float64
}

// CompareWindows compares per-second samples taken during a disturbance
// window with those taken before it, after dropping the given warm-up
// seconds. The change is the ratio of the means, during/before − 1.
//
// Per-second samples are autocorrelated (a checkpoint or a lock convoy lasts
// longer than a second), so treating them as independent would give an
// interval far too narrow. The method is non-overlapping batch means: each
// series is cut into batches of BatchLen consecutive seconds (⌈√n⌉ by
// default), and the batch means, which are nearly independent when batches
// are longer than the correlation time, stand in for the samples. The
// interval on the log of the ratio uses the delta method,
// se² = s²_before/(k_b·m_b²) + s²_during/(k_d·m_d²) with s² the variance of
// the batch means, k the batch counts and m the means, and a t quantile with
// Welch-Satterthwaite degrees of freedom; it is transformed back to a
// change. P is the matching Welch t-test. The method is deterministic (no
// resampling). A warning flags batch means that still look autocorrelated
// (lag-1 autocorrelation above 2/√K over K ≥ 8 batches, Bartlett's
// approximate 5 % limit); longer batches are then needed.
//
// Non-finite values are dropped with a warning. The inputs are not
// modified.
func CompareWindows(m Measure, before, during []float64, opt WindowOptions) Comparison {
	conf, warns := opt.confidence()
	c := newComparison(m, Window, conf, WindowTest)
	alpha := Alpha(conf)
	d := &WindowDetail{SELog: math.NaN(), DF: math.NaN(), Lag1: math.NaN()}
	c.WindowDetail = d

	bs, bDrop := finiteAfter(before, opt.SkipBefore)
	ds, dDrop := finiteAfter(during, opt.SkipDuring)
	if bDrop > 0 || dDrop > 0 {
		warns = append(warns, warnf(LeftOut, "%s: %d seconds before and %d during left out as not finite", m.Key(), bDrop, dDrop))
	}
	d.DroppedBefore, d.DroppedDuring = len(before)-len(bs), len(during)-len(ds)
	c.Warnings = warns
	if len(bs) == 0 || len(ds) == 0 {
		c.Warnings = append(c.Warnings, warnf(TooFew, "%s: no seconds left before or during the window after the warm-up", m.Key()))
		return c
	}

	b := opt.BatchLen
	if b <= 0 {
		b = int(math.Ceil(math.Sqrt(float64(min(len(bs), len(ds))))))
	}
	d.BatchLen = b
	mb, db := batchMeans(bs, b), batchMeans(ds, b)
	d.BatchesBefore, d.BatchesDuring = len(mb), len(db)
	if len(mb) < 2 || len(db) < 2 {
		// Too short to batch: the means of all seconds, no interval.
		c.N1, c.N2 = len(bs), len(ds)
		c.Base, c.Cand = stats.Mean(bs), stats.Mean(ds)
		c.Change = c.Cand/c.Base - 1
		c.Warnings = append(c.Warnings, warnf(TooFew, "%s: %d seconds before and %d during make fewer than 2 batches of %d s a side; no interval", m.Key(), len(bs), len(ds), b))
		return c
	}
	c.N1, c.N2 = len(mb)*b, len(db)*b
	d.DroppedBefore += len(bs) - c.N1
	d.DroppedDuring += len(ds) - c.N2
	c.Base, c.Cand = stats.Mean(mb), stats.Mean(db)
	if !(c.Base > 0) || !(c.Cand > 0) {
		if c.Base != 0 {
			c.Change = c.Cand/c.Base - 1
		}
		c.Warnings = append(c.Warnings, warnf(LeftOut, "%s: mean before %.6g, during %.6g: a ratio interval needs positive means", m.Key(), c.Base, c.Cand))
		return c
	}
	l := math.Log(c.Cand / c.Base)
	c.Change = math.Expm1(l)

	kb, kd := float64(len(mb)), float64(len(db))
	ab := stats.Variance(mb) / (kb * c.Base * c.Base)
	ad := stats.Variance(db) / (kd * c.Cand * c.Cand)
	d.SELog = math.Sqrt(ab + ad)
	d.Lag1 = pooledLag1(mb, db)
	if k := kb + kd; len(mb) >= 3 && len(db) >= 3 && k >= 8 && d.Lag1 > 2/math.Sqrt(k) {
		c.Warnings = append(c.Warnings, warnf(Autocorrelated, "%s: batch means of %d s are still autocorrelated (lag-1 %.2f); the interval is likely too narrow: set a longer batch", m.Key(), b, d.Lag1))
	}
	if d.SELog == 0 {
		c.Warnings = append(c.Warnings, warnf(NoVariation, "%s: the batch means do not vary; the interval has no width", m.Key()))
		c.Lo, c.Hi = c.Change, c.Change
		c.P = 1
		if l != 0 {
			c.P = 0
		}
		return c
	}
	d.DF = (ab + ad) * (ab + ad) / (ab*ab/(kb-1) + ad*ad/(kd-1))
	tq := tQuantile(1-alpha/2, d.DF)
	c.Lo, c.Hi = math.Expm1(l-tq*d.SELog), math.Expm1(l+tq*d.SELog)
	c.P = tTwoSidedP(l/d.SELog, d.DF)
	return c
}

// finiteAfter returns the finite values of xs after its first skip entries
// and how many non-finite values it dropped.
func finiteAfter(xs []float64, skip int) ([]float64, int) {
	if skip < 0 {
		skip = 0
	}
	if skip > len(xs) {
		skip = len(xs)
	}
	out := make([]float64, 0, len(xs)-skip)
	dropped := 0
	for _, x := range xs[skip:] {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			dropped++
			continue
		}
		out = append(out, x)
	}
	return out, dropped
}

// batchMeans returns the means of consecutive batches of b values, dropping
// the len(xs) mod b values at the start.
func batchMeans(xs []float64, b int) []float64 {
	k := len(xs) / b
	out := make([]float64, k)
	start := len(xs) - k*b
	for i := range out {
		out[i] = stats.Mean(xs[start+i*b : start+(i+1)*b])
	}
	return out
}

// pooledLag1 returns the lag-1 autocorrelation of two series about their
// own means, with numerator and denominator sums pooled; NaN unless each has
// at least 3 values.
func pooledLag1(a, b []float64) float64 {
	if len(a) < 3 || len(b) < 3 {
		return math.NaN()
	}
	var num, den float64
	for _, xs := range [][]float64{a, b} {
		m := stats.Mean(xs)
		for i, x := range xs {
			den += (x - m) * (x - m)
			if i > 0 {
				num += (x - m) * (xs[i-1] - m)
			}
		}
	}
	if den == 0 {
		return math.NaN()
	}
	return num / den
}
