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
	s := Summary{N: len(xs), Median: nan, Lo: math.Inf(-1), Hi: math.Inf(1), Mean: nan, StdDev: nan, Min: nan, Max: nan}
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
	s.Warnings = warns
	return s
}
