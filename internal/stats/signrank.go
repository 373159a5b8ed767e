package stats

import (
	"errors"
	"math"
	"sort"
)

// SignedRankResult is the outcome of a two-sided Wilcoxon signed-rank test.
type SignedRankResult struct {
	// N counts the non-zero differences the test used; Zeros counts the
	// zero differences dropped (Wilcoxon's convention, as R's wilcox.test).
	N, Zeros int
	// V is the sum of the ranks of the positive differences (R calls it V).
	V float64
	// P is the two-sided p-value.
	P float64
	// Exact is true when P comes from the exact null distribution; false
	// when from the normal approximation with tie and continuity
	// corrections.
	Exact bool
}

// signedRankExactLimit is the number of non-zero differences below which the
// exact distribution is used when there are no ties and no zeros; the same
// rule as R's wilcox.test.
const signedRankExactLimit = 50

// SignedRank runs the two-sided Wilcoxon signed-rank test of the hypothesis
// that the differences d are symmetric about zero. Zero differences are
// dropped and tied absolute differences get their average rank. With fewer
// than 50 non-zero differences and neither ties nor zeros the p-value is
// exact; otherwise it comes from the normal approximation with tie
// correction and continuity correction, exactly as R's wilcox.test does.
// go-moremath has no signed-rank test, hence this one.
//
// It returns an error when no non-zero difference is left.
func SignedRank(d []float64) (SignedRankResult, error) {
	var r SignedRankResult
	abs := make([]float64, 0, len(d))
	type item struct {
		a   float64
		pos bool
	}
	items := make([]item, 0, len(d))
	for _, x := range d {
		switch {
		case math.IsNaN(x):
			continue
		case x == 0:
			r.Zeros++
		default:
			items = append(items, item{math.Abs(x), x > 0})
		}
	}
	r.N = len(items)
	if r.N == 0 {
		r.P = math.NaN()
		return r, errors.New("signed-rank test: no non-zero differences")
	}
	sort.Slice(items, func(i, j int) bool { return items[i].a < items[j].a })
	for _, it := range items {
		abs = append(abs, it.a)
	}

	// Average ranks over runs of ties; collect tie sizes for the variance.
	var ties []int
	for i := 0; i < len(items); {
		j := i
		for j < len(items) && abs[j] == abs[i] {
			j++
		}
		rank := float64(i+1+j) / 2 // mean of ranks i+1 .. j
		for k := i; k < j; k++ {
			if items[k].pos {
				r.V += rank
			}
		}
		if j-i > 1 {
			ties = append(ties, j-i)
		}
		i = j
	}

	n := float64(r.N)
	if r.N < signedRankExactLimit && len(ties) == 0 && r.Zeros == 0 {
		r.Exact = true
		r.P = signedRankExactP(r.N, int(r.V))
		return r, nil
	}
	z := r.V - n*(n+1)/4
	var tieSum float64
	for _, t := range ties {
		tt := float64(t)
		tieSum += tt*tt*tt - tt
	}
	sigma := math.Sqrt(n*(n+1)*(2*n+1)/24 - tieSum/48)
	if sigma == 0 {
		r.P = 1
		return r, nil
	}
	z = (z - math.Copysign(0.5, z)) / sigma
	if r.V == n*(n+1)/4 {
		z = 0
	}
	r.P = math.Min(1, 2*math.Min(zCDF(z), zCDF(-z)))
	return r, nil
}

// signedRankExactP returns the exact two-sided p-value of V = v for n
// non-zero differences without ties: 2·min(P(V ≤ v), P(V ≥ v)), capped at 1.
func signedRankExactP(n, v int) float64 {
	max := n * (n + 1) / 2
	// count[s] is the number of sign assignments with rank sum s; it is
	// at most 2^49 here, exact in a float64.
	count := make([]float64, max+1)
	count[0] = 1
	for k := 1; k <= n; k++ {
		for s := max; s >= k; s-- {
			count[s] += count[s-k]
		}
	}
	total := math.Ldexp(1, n)
	var lo, hi float64 // P(V ≤ v), P(V ≥ v)
	for s := 0; s <= max; s++ {
		if s <= v {
			lo += count[s]
		}
		if s >= v {
			hi += count[s]
		}
	}
	return math.Min(1, 2*math.Min(lo, hi)/total)
}

// zCDF is the standard normal CDF.
func zCDF(z float64) float64 {
	return 0.5 * math.Erfc(-z/math.Sqrt2)
}
