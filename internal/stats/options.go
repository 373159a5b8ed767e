package stats

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/aclements/go-moremath/stats"
)

// DefaultConfidence is the confidence level used when Options.Confidence is
// zero: 95 % intervals, tests at alpha = 0.05.
const DefaultConfidence = 0.95

// Options configures comparisons and verdicts.
type Options struct {
	// Confidence is the level of every interval, in (0, 1); zero means
	// DefaultConfidence. Tests are two-sided at alpha = 1 − Confidence,
	// and Evaluate applies Holm's correction at that alpha.
	Confidence float64
	// Share, in (0, 1), is the part of alpha a family of bounded measures
	// gets when it is one of several judged together (a suite's cell:
	// 1/cells); 0 means all of it.
	Share float64
	// Sequential, when set, decides as at one look of a run that looks
	// after every round (rounds until decided): at the part of alpha
	// the look may spend.
	Sequential *Sequential
}

// confidence returns the confidence level to use and a warning when the
// option was out of range.
func (o Options) confidence() (float64, []error) {
	c := o.Confidence
	if c == 0 {
		return DefaultConfidence, nil
	}
	if !(c > 0 && c < 1) {
		return DefaultConfidence, []error{warnf(BadOption, "confidence %v is not between 0 and 1; using %v", c, DefaultConfidence)}
	}
	return c, nil
}

// Alpha is the significance level of a confidence level, 1 − conf, rounded
// to twelve decimals: 1 − 0.95 is 0.050000000000000044 in floating point,
// and the level is printed in notes and written in JSON, where it must
// read 0.05.
func Alpha(conf float64) float64 { return math.Round((1-conf)*1e12) / 1e12 }

// tQuantile returns the p-quantile of Student's t distribution with df
// degrees of freedom. The inverse is a bisection over the incomplete beta
// function, some 50 evaluations, and a verdict asks for the same few
// quantiles again and again (RoundsToDetect, for every measure, at every
// count of rounds it tries): those of whole degrees of freedom are kept
// once computed, the same value every time. They were three quarters of
// internal/stats' simulations' CPU time.
func tQuantile(p, df float64) float64 {
	if df != math.Trunc(df) || df < 1 || df > maxKeptDF {
		return stats.InvCDF(stats.TDist{V: df})(p)
	}
	k := tKey{p, df}
	if q, ok := tKept.Load(k); ok {
		return q.(float64)
	}
	q := stats.InvCDF(stats.TDist{V: df})(p)
	if tKeptN.Add(1) <= maxKept {
		tKept.Store(k, q)
	}
	return q
}

// The kept t quantiles: at most maxKept, of at most maxKeptDF degrees of
// freedom (a few levels of alpha and power, by the rounds of a run).
const maxKept, maxKeptDF = 1 << 14, 1000

type tKey struct{ p, df float64 }

var (
	tKept  sync.Map // tKey → float64
	tKeptN atomic.Int64
)

// tTwoSidedP returns the two-sided p-value of statistic t with df degrees of
// freedom.
func tTwoSidedP(t, df float64) float64 {
	return 2 * (1 - stats.TDist{V: df}.CDF(math.Abs(t)))
}

// zQuantile returns the p-quantile of the standard normal distribution.
func zQuantile(p float64) float64 {
	return stats.StdNormal.InvCDF(p)
}

// positive splits xs into the values usable on a log scale (finite and > 0)
// and the 1-based positions of those left out.
func positive(xs []float64) (kept []float64, out []int) {
	kept = make([]float64, 0, len(xs))
	for i, x := range xs {
		if x > 0 && !math.IsInf(x, 1) {
			kept = append(kept, x)
		} else {
			out = append(out, i+1)
		}
	}
	return kept, out
}

// geoMean returns the geometric mean of positive values.
func geoMean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += math.Log(x)
	}
	return math.Exp(s / float64(len(xs)))
}
