package stats

import (
	"errors"
	"math"
	"sort"

	"github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchmath"
)

// UnpairedTest names the test that decides an unpaired comparison.
const UnpairedTest = "Mann-Whitney U"

// maxPairwise caps n1·n2 for the Hodges-Lehmann interval, which sorts all
// pairwise log ratios.
const maxPairwise = 4_000_000

// UnpairedDetail holds the pieces an unpaired comparison is built from.
type UnpairedDetail struct {
	// BaseLo, BaseHi, CandLo, CandHi bound benchmath's distribution-free
	// confidence intervals on each side's median.
	BaseLo, BaseHi, CandLo, CandHi float64
	// U is the Mann-Whitney U statistic of the baseline (ties count 0.5).
	U float64
	// Shift is the Hodges-Lehmann estimate of the ratio − 1: the median of
	// all n1·n2 ratios cand[j]/base[i]. The reported interval is the
	// Moses interval around it: order statistics k and n1·n2+1−k of
	// those ratios, with k from the exact U distribution (normal
	// approximation past 50 values a side).
	Shift float64
	// HLConfidence is the actual level of that interval (≥ requested).
	HLConfidence float64
}

// CompareUnpaired compares two independent sets of values, such as the
// rounds of two saved result files. As benchstat does, the test is the
// Mann-Whitney U test (benchmath.AssumeNothing) and the change is the change
// of the medians, cand median / base median − 1.
//
// The interval is the Hodges-Lehmann (Moses) distribution-free interval on
// the ratio, the interval that inverts the same U test; it is centred on the
// median of the pairwise ratios, which is close to but not always exactly
// the ratio of the medians. Each result carries an Unpaired warning: an
// unpaired comparison does not cancel drift between rounds, so it needs a
// larger change to see it than an interleaved paired run.
//
// Zero, negative and non-finite values are left out with a warning. The
// inputs are not modified.
func CompareUnpaired(m Measure, base, cand []float64, opt Options) Comparison {
	c := compareUnpairedAt(m, base, cand, opt)
	b, x := append([]float64(nil), base...), append([]float64(nil), cand...)
	c.again = func(conf float64) Comparison { return compareUnpairedAt(m, b, x, Options{Confidence: conf}) }
	return c
}

// compareUnpairedAt is CompareUnpaired without the way to make it again.
func compareUnpairedAt(m Measure, base, cand []float64, opt Options) Comparison {
	conf, warns := opt.confidence()
	c := newComparison(m, Independent, conf, UnpairedTest)
	alpha := Alpha(conf)
	warns = append(warns, warnf(Unpaired, "%s: unpaired comparison (Mann-Whitney U): drift between runs is not cancelled as in an interleaved A/B run", m.Key()))

	bs, bOut := positive(base)
	cs, cOut := positive(cand)
	if len(bOut) > 0 {
		warns = append(warns, warnf(LeftOut, "%s: baseline values %v left out: zero, negative or not finite", m.Key(), bOut))
	}
	if len(cOut) > 0 {
		warns = append(warns, warnf(LeftOut, "%s: candidate values %v left out: zero, negative or not finite", m.Key(), cOut))
	}
	c.N1, c.N2 = len(bs), len(cs)
	c.Warnings = warns
	if len(bs) == 0 || len(cs) == 0 {
		c.Warnings = append(c.Warnings, warnf(TooFew, "%s: no usable values on one side", m.Key()))
		return c
	}

	// benchmath sorts in place: hand it copies.
	th := &benchmath.Thresholds{CompareAlpha: alpha}
	sb := benchmath.NewSample(append([]float64(nil), bs...), th)
	sc := benchmath.NewSample(append([]float64(nil), cs...), th)
	mb := benchmath.AssumeNothing.Summary(sb, conf)
	mc := benchmath.AssumeNothing.Summary(sc, conf)
	c.Base, c.Cand = mb.Center, mc.Center
	c.Change = mc.Center/mb.Center - 1
	d := &UnpairedDetail{BaseLo: mb.Lo, BaseHi: mb.Hi, CandLo: mc.Lo, CandHi: mc.Hi, U: math.NaN(), Shift: math.NaN()}
	c.UnpairedDetail = d

	// benchmath reports a failed U test (all values equal) as P = 1 with
	// the error among its warnings.
	cmp := benchmath.AssumeNothing.Compare(sb, sc)
	c.P = cmp.P
	c.Warnings = append(c.Warnings, prefixed(m, cmp.Warnings)...)
	if res, err := stats.MannWhitneyUTest(bs, cs, stats.LocationDiffers); err == nil {
		d.U = res.U
	}

	if len(bs)*len(cs) > maxPairwise {
		c.Warnings = append(c.Warnings, warnf(TooFew, "%s: %d×%d values: too many for the Hodges-Lehmann interval; no interval", m.Key(), len(bs), len(cs)))
		return c
	}
	ratios := make([]float64, 0, len(bs)*len(cs))
	for _, b := range bs {
		for _, x := range cs {
			ratios = append(ratios, x/b)
		}
	}
	sort.Float64s(ratios)
	d.Shift = stats.Sample{Xs: ratios, Sorted: true}.Quantile(0.5) - 1
	k, level := mosesK(len(bs), len(cs), alpha)
	d.HLConfidence = level
	if k < 1 {
		c.Warnings = append(c.Warnings, warnf(TooFew, "%s: %d and %d values are too few for a %v interval on the change", m.Key(), len(bs), len(cs), conf))
		return c
	}
	c.Lo, c.Hi = ratios[k-1]-1, ratios[len(ratios)-k]-1
	return c
}

// mosesK returns the order k of the Moses interval [D(k), D(n1·n2+1−k)] on
// the sorted pairwise differences, and its actual confidence level: k − 1
// is the largest u with P(U ≤ u) ≤ alpha/2 under the null distribution of
// U without ties. k is 0 when even u = 0 is too likely.
func mosesK(n1, n2 int, alpha float64) (int, float64) {
	if n1 > 50 || n2 > 50 {
		nn := float64(n1 * n2)
		mu := nn / 2
		sigma := math.Sqrt(nn * float64(n1+n2+1) / 12)
		u := math.Floor(mu - 0.5 - zQuantile(1-alpha/2)*sigma)
		if u < 0 {
			return 0, math.NaN()
		}
		return int(u) + 1, 1 - 2*zCDF((u+0.5-mu)/sigma)
	}
	dist := stats.UDist{N1: n1, N2: n2}
	if dist.CDF(0) > alpha/2 {
		return 0, math.NaN()
	}
	// CDF is increasing in u; find the largest u with CDF(u) ≤ alpha/2.
	lo, hi := 0, n1*n2/2 // CDF(lo) ≤ alpha/2; CDF(hi) ≥ 0.5 > alpha/2
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if dist.CDF(float64(mid)) <= alpha/2 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo + 1, 1 - 2*dist.CDF(float64(lo))
}

// prefixed turns benchmath's warnings into Warnings that name the measure.
func prefixed(m Measure, errs []error) []error {
	out := make([]error, 0, len(errs))
	for _, e := range errs {
		kind := TooFew
		if errors.Is(e, stats.ErrSamplesEqual) || errors.Is(e, stats.ErrZeroVariance) {
			kind = NoVariation
		}
		out = append(out, warnf(kind, "%s: %v", m.Key(), e))
	}
	return out
}
