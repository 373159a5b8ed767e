package stats

import (
	"math"

	"github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchmath"
)

// Summary describes one set of values, such as the TPS of the rounds of one
// step.
type Summary struct {
	// N counts the values (NaN values are left out).
	N int
	// Median is the sample median; Lo and Hi bound benchmath's
	// distribution-free confidence interval on it (infinite with too few
	// values) and Confidence is that interval's actual level.
	Median, Lo, Hi, Confidence float64
	// Mean and StdDev are the arithmetic mean and sample standard
	// deviation; Min and Max the extremes.
	Mean, StdDev, Min, Max float64
	// GeoMean is the geometric mean of the positive values, the centre a
	// paired comparison's change is of (its ratio is the geometric mean of
	// the per-round ratios), and GeoLo and GeoHi bound the t interval on
	// the mean of their logs, transformed back (infinite with fewer than
	// two); NaN without positive values.
	GeoMean, GeoLo, GeoHi float64
	// Warnings are caveats about these numbers.
	Warnings []error
}

// Summarize returns the Summary of values, which it does not modify.
func Summarize(values []float64, opt Options) Summary {
	conf, warns := opt.confidence()
	xs := make([]float64, 0, len(values))
	for _, x := range values {
		if !math.IsNaN(x) {
			xs = append(xs, x)
		}
	}
	if len(xs) < len(values) {
		warns = append(warns, warnf(LeftOut, "%d NaN values left out", len(values)-len(xs)))
	}
	nan := math.NaN()
	s := Summary{N: len(xs), Median: nan, Lo: math.Inf(-1), Hi: math.Inf(1), Mean: nan, StdDev: nan, Min: nan, Max: nan,
		GeoMean: nan, GeoLo: math.Inf(-1), GeoHi: math.Inf(1)}
	if len(xs) == 0 {
		s.Warnings = append(warns, warnf(TooFew, "no values"))
		return s
	}
	// NewSample sorts in place; xs is already a copy.
	sample := benchmath.NewSample(xs, &benchmath.Thresholds{CompareAlpha: Alpha(conf)})
	sum := benchmath.AssumeNothing.Summary(sample, conf)
	s.Median, s.Lo, s.Hi, s.Confidence = sum.Center, sum.Lo, sum.Hi, sum.Confidence
	for _, w := range sum.Warnings {
		warns = append(warns, warnf(TooFew, "%v", w))
	}
	s.Mean = stats.Mean(xs)
	s.Min, s.Max = xs[0], xs[len(xs)-1]
	if len(xs) > 1 {
		s.StdDev = stats.StdDev(xs)
	}
	s.GeoMean, s.GeoLo, s.GeoHi = geoInterval(xs, conf)
	s.Warnings = warns
	return s
}

// geoInterval is the geometric mean of the positive values of xs and the
// t interval on the mean of their logs at conf, transformed back.
func geoInterval(xs []float64, conf float64) (float64, float64, float64) {
	var logs []float64
	for _, x := range xs {
		if x > 0 && !math.IsInf(x, 1) {
			logs = append(logs, math.Log(x))
		}
	}
	if len(logs) == 0 {
		return math.NaN(), math.Inf(-1), math.Inf(1)
	}
	m := stats.Mean(logs)
	if len(logs) < 2 {
		return math.Exp(m), math.Inf(-1), math.Inf(1)
	}
	half := tQuantile(1-Alpha(conf)/2, float64(len(logs)-1)) * stats.StdDev(logs) / math.Sqrt(float64(len(logs)))
	return math.Exp(m), math.Exp(m - half), math.Exp(m + half)
}
