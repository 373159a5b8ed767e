package stats

import (
	"math"
	"strings"

	"github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchmath"
)

// PairedTest names the test that decides a paired comparison.
const PairedTest = "paired t-test on log ratios"

// PairedDetail holds the pieces a paired comparison is built from. Changes
// are relative (ratio − 1), like Comparison.Change.
type PairedDetail struct {
	// MeanLog and SDLog are the mean and sample standard deviation of the
	// per-round log ratios ln(cand/base).
	MeanLog, SDLog float64
	// T and DF are the t statistic and its degrees of freedom (n − 1).
	T, DF float64
	// TLo and THi bound the t interval on the mean log ratio, transformed
	// back to a change: exp(mean ± t·sd/√n) − 1.
	TLo, THi float64
	// Median is the median ratio − 1; MedianLo and MedianHi bound
	// benchmath's distribution-free interval on it (order statistics of
	// the ratios), which is infinite with too few rounds.
	// MedianConfidence is that interval's actual level (≥ requested).
	Median, MedianLo, MedianHi, MedianConfidence float64
	// Wider says which interval was wider, "t" or "median"; the reported
	// interval is the hull of both (or the t interval alone when the
	// median one is infinite).
	Wider string
	// SignedRank is the Wilcoxon signed-rank test on the log ratios,
	// reported beside the t-test but not used for the decision. Its P is
	// NaN when it could not be run.
	SignedRank SignedRankResult

	// logs are the per-unit log ratios, for the tests against a bound.
	logs []float64
}

// ComparePaired compares per-round values where base[i] and cand[i] were
// measured in the same round i.
//
// The change is the geometric mean of the per-round ratios cand[i]/base[i]
// minus 1. Its interval is the hull of (a) the Student t interval on the
// mean log ratio, transformed back, and (b) benchmath's distribution-free
// interval on the median ratio; the hull is at least as wide as the wider of
// the two and always contains the change. With too few rounds for (b) (6 at
// 95 %) the interval is (a) alone, with a warning. P is the one-sample
// t-test of mean log ratio = 0 (PairedTest); the signed-rank p-value is in
// the detail, and a warning says when the two tests disagree.
//
// Rounds in which either value is zero, negative or not finite are left out
// with a warning; so are the extra rounds when the slices differ in length.
// The inputs are not modified.
func ComparePaired(m Measure, base, cand []float64, opt Options) Comparison {
	return comparePaired(m, base, cand, opt, "round")
}

// comparePaired is ComparePaired over values paired by unit: "round", or
// "layout" for the per-layout means of CompareLayouts, as the warnings
// name them.
func comparePaired(m Measure, base, cand []float64, opt Options, unit string) Comparison {
	c := comparePairedAt(m, base, cand, opt, unit)
	b, x := append([]float64(nil), base...), append([]float64(nil), cand...)
	c.again = func(conf float64) Comparison { return comparePairedAt(m, b, x, Options{Confidence: conf}, unit) }
	return c
}

// comparePairedAt is comparePaired without the way to make it again.
func comparePairedAt(m Measure, base, cand []float64, opt Options, unit string) Comparison {
	conf, warns := opt.confidence()
	c := newComparison(m, Paired, conf, PairedTest)
	alpha := Alpha(conf)

	n := min(len(base), len(cand))
	if len(base) != len(cand) {
		warns = append(warns, warnf(LeftOut, "%s: baseline has %d %ss and candidate %d; only the first %d are paired", m.Key(), len(base), unit, len(cand), n))
	}
	var bs, cs, logs, ratios []float64
	var out []int
	for i := 0; i < n; i++ {
		b, x := base[i], cand[i]
		if !(b > 0) || !(x > 0) || math.IsInf(b, 1) || math.IsInf(x, 1) {
			out = append(out, i+1)
			continue
		}
		bs, cs = append(bs, b), append(cs, x)
		logs = append(logs, math.Log(x/b))
		ratios = append(ratios, x/b)
	}
	if len(out) > 0 {
		warns = append(warns, warnf(LeftOut, "%s: %ss %v left out: a value is zero, negative or not finite", m.Key(), unit, out))
	}
	c.N1, c.N2 = len(logs), len(logs)
	c.Warnings = warns
	if len(logs) == 0 {
		c.Warnings = append(c.Warnings, warnf(TooFew, "%s: no usable %ss", m.Key(), unit))
		return c
	}

	c.Base, c.Cand = geoMean(bs), geoMean(cs)
	mean := stats.Mean(logs)
	c.Change = math.Expm1(mean)
	d := &PairedDetail{MeanLog: mean, SDLog: math.NaN(), T: math.NaN(), DF: float64(len(logs) - 1),
		TLo: math.Inf(-1), THi: math.Inf(1), SignedRank: SignedRankResult{P: math.NaN()}}
	c.PairedDetail = d
	d.logs = logs

	// Distribution-free interval on the median ratio. NewSample sorts its
	// argument in place, so it gets a copy: ratios keeps the pairing order.
	sample := benchmath.NewSample(append([]float64(nil), ratios...), &benchmath.Thresholds{CompareAlpha: alpha})
	med := benchmath.AssumeNothing.Summary(sample, conf)
	d.Median, d.MedianLo, d.MedianHi, d.MedianConfidence = med.Center-1, med.Lo-1, med.Hi-1, med.Confidence

	if len(logs) == 1 {
		c.Warnings = append(c.Warnings, warnf(TooFew, "%s: 1 %s: no interval and no test", m.Key(), unit))
		return c
	}
	d.SDLog = stats.StdDev(logs)
	if d.SDLog == 0 {
		// Every round gave the same ratio: there is no spread to
		// estimate the uncertainty from.
		c.Warnings = append(c.Warnings, warnf(NoVariation, "%s: all %d %ss gave the same ratio %.6g; the interval has no width", m.Key(), len(logs), unit, ratios[0]))
		c.Lo, c.Hi, d.TLo, d.THi = c.Change, c.Change, c.Change, c.Change
		if mean == 0 {
			c.P = 1
		} else {
			c.P = 0
		}
		d.Wider = "t"
		return c
	}

	nf := float64(len(logs))
	se := d.SDLog / math.Sqrt(nf)
	tq := tQuantile(1-alpha/2, d.DF)
	d.TLo, d.THi = math.Expm1(mean-tq*se), math.Expm1(mean+tq*se)
	d.T = mean / se
	c.P = tTwoSidedP(d.T, d.DF)

	c.Lo, c.Hi, d.Wider = d.TLo, d.THi, "t"
	if math.IsInf(d.MedianLo, 0) || math.IsInf(d.MedianHi, 0) {
		c.Warnings = append(c.Warnings, warnf(TooFew, "%s: %d %ss are too few for the distribution-free cross-check (%v); the interval is the t interval alone", m.Key(), len(logs), unit, joinErrs(med.Warnings)))
	} else {
		if d.MedianHi-d.MedianLo > d.THi-d.TLo {
			d.Wider = "median"
		}
		c.Lo, c.Hi = math.Min(d.TLo, d.MedianLo), math.Max(d.THi, d.MedianHi)
	}

	sr, err := SignedRank(logs)
	d.SignedRank = sr
	if err == nil && signedRankCanReject(sr.N, alpha) && (c.P <= alpha) != (sr.P <= alpha) {
		c.Warnings = append(c.Warnings, warnf(Disagree, "%s: the t-test (p=%.3g) and the signed-rank test (p=%.3g) disagree at alpha %.3g; the log ratios may not be normal (an outlier %s?)", m.Key(), c.P, sr.P, alpha, unit))
	}
	return c
}

// signedRankCanReject reports whether a signed-rank test on n differences
// can reach p ≤ alpha at all: its smallest two-sided p-value is 2/2^n.
func signedRankCanReject(n int, alpha float64) bool {
	return n > 0 && math.Ldexp(2, -n) <= alpha
}

// joinErrs formats warnings from another package into one phrase.
func joinErrs(errs []error) string {
	if len(errs) == 0 {
		return "no interval"
	}
	parts := make([]string, len(errs))
	for i, e := range errs {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}
