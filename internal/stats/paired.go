package stats

import (
	"math"
	"sort"
	"strings"

	"github.com/aclements/go-moremath/stats"
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
	// HL is the Hodges–Lehmann estimate of the change (the median of the
	// Walsh averages of the log ratios, transformed back); HLLo and HLHi
	// bound the distribution-free interval that inverts the signed-rank
	// test (Walsh averages at the exact test's critical value), which is
	// infinite with too few rounds (fewer than 6 at 95 %); HLConfidence is
	// that interval's actual level (≥ requested).
	HL, HLLo, HLHi, HLConfidence float64
	// Wider says which interval was wider, "t" or "signed-rank"; the
	// reported interval is the hull of both (or the t interval alone when
	// the signed-rank one is infinite).
	Wider string
	// SignedRank is the Wilcoxon signed-rank test on the log ratios,
	// reported beside the t-test but not used for the decision. Its P is
	// NaN when it could not be run.
	SignedRank SignedRankResult

	// logs are the per-unit log ratios, for the tests against a bound.
	logs []float64
}

// Logs returns the per-round (or per-layout) log ratios ln(cand/base)
// the comparison rests on, in pairing order.
func (d *PairedDetail) Logs() []float64 { return append([]float64(nil), d.logs...) }

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

	// Distribution-free interval: the one the signed-rank test inverts.
	hl, lo, hi, level := walshInterval(logs, alpha)
	d.HL, d.HLLo, d.HLHi, d.HLConfidence = math.Expm1(hl), lo, hi, level
	if !math.IsInf(lo, 0) {
		d.HLLo, d.HLHi = math.Expm1(lo), math.Expm1(hi)
	}

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
	if math.IsInf(d.HLLo, 0) || math.IsInf(d.HLHi, 0) {
		c.Warnings = append(c.Warnings, warnf(TooFew, "%s: %d %ss are too few for the distribution-free cross-check (need %d at %v); the interval is the t interval alone", m.Key(), len(logs), unit, MinFailRounds(conf), conf))
	} else {
		if d.HLHi-d.HLLo > d.THi-d.TLo {
			d.Wider = "signed-rank"
		}
		c.Lo, c.Hi = math.Min(d.TLo, d.HLLo), math.Max(d.THi, d.HLHi)
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

// walshInterval returns, for the differences d, the Hodges–Lehmann
// estimate (the median of the n(n+1)/2 Walsh averages (d[i]+d[j])/2,
// i ≤ j) and the interval [W(k+1), W(M−k)] of the sorted Walsh averages
// where k is the largest count with P(V ≤ k) ≤ alpha/2 under the
// signed-rank test's null distribution: the interval that test inverts,
// distribution-free for differences symmetric about their centre. Its
// actual level is 1 − 2·P(V ≤ k). The interval is infinite when even k = 0
// is too likely (2⁻ⁿ > alpha/2).
func walshInterval(d []float64, alpha float64) (est, lo, hi, level float64) {
	n := len(d)
	inf := math.Inf(1)
	if n == 0 {
		return math.NaN(), -inf, inf, 0
	}
	w := make([]float64, 0, n*(n+1)/2)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			w = append(w, (d[i]+d[j])/2)
		}
	}
	sort.Float64s(w)
	m := len(w)
	est = w[m/2]
	if m%2 == 0 {
		est = (w[m/2-1] + w[m/2]) / 2
	}
	k, p := signedRankCritical(n, alpha/2)
	if k < 0 {
		return est, -inf, inf, 0
	}
	return est, w[k], w[m-1-k], 1 - 2*p
}

// signedRankCritical returns the largest k with P(V ≤ k) ≤ tail for the
// signed-rank statistic V of n differences without ties, and P(V ≤ k);
// k is -1 when P(V = 0) = 2⁻ⁿ already exceeds tail. Exact up to 100
// differences, the normal approximation beyond.
func signedRankCritical(n int, tail float64) (int, float64) {
	if n > 100 {
		nf := float64(n)
		mu, sd := nf*(nf+1)/4, math.Sqrt(nf*(nf+1)*(2*nf+1)/24)
		k := int(math.Floor(mu + sd*zQuantile(tail) - 0.5))
		return k, zCDF((float64(k) + 0.5 - mu) / sd)
	}
	max := n * (n + 1) / 2
	// prob[s] = P(V = s), built one rank at a time.
	prob := make([]float64, max+1)
	prob[0] = 1
	for r := 1; r <= n; r++ {
		for s := max; s >= 0; s-- {
			v := prob[s] / 2
			if s >= r {
				v += prob[s-r] / 2
			}
			prob[s] = v
		}
	}
	k, cum := -1, 0.0
	for s := 0; s <= max; s++ {
		if cum+prob[s] > tail*(1+1e-12) {
			break
		}
		cum += prob[s]
		k = s
	}
	return k, cum
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
