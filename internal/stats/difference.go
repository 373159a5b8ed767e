package stats

import (
	"math"

	"github.com/aclements/go-moremath/stats"
)

// Difference is the paired difference cand − base of a quantity that may
// be zero on either side, such as a share of time (a ratio would be
// undefined): the mean of the per-round differences, its t interval and
// the two-sided p-value of a paired t-test that it is zero.
type Difference struct {
	// N counts the rounds used (both values finite).
	N int
	// Base and Cand are the means of each side over those rounds.
	Base, Cand float64
	// Diff is the mean difference; Lo and Hi bound its interval (±Inf
	// with fewer than 2 rounds). P is NaN with fewer than 2 rounds.
	Diff, Lo, Hi, P float64
}

// PairedDifference compares base and cand round by round as differences,
// at the confidence of opt. Rounds where either value is NaN or infinite
// are left out.
func PairedDifference(base, cand []float64, opt Options) Difference {
	conf, _ := opt.confidence()
	d := Difference{Base: math.NaN(), Cand: math.NaN(), Diff: math.NaN(), Lo: math.Inf(-1), Hi: math.Inf(1), P: math.NaN()}
	var bs, cs, ds []float64
	for i := 0; i < min(len(base), len(cand)); i++ {
		b, c := base[i], cand[i]
		if math.IsNaN(b) || math.IsNaN(c) || math.IsInf(b, 0) || math.IsInf(c, 0) {
			continue
		}
		bs, cs, ds = append(bs, b), append(cs, c), append(ds, c-b)
	}
	d.N = len(ds)
	if d.N == 0 {
		return d
	}
	d.Base, d.Cand, d.Diff = stats.Mean(bs), stats.Mean(cs), stats.Mean(ds)
	if d.N < 2 {
		return d
	}
	sd := stats.StdDev(ds)
	if sd == 0 {
		d.Lo, d.Hi = d.Diff, d.Diff
		d.P = 1
		if d.Diff != 0 {
			d.P = 0
		}
		return d
	}
	se := sd / math.Sqrt(float64(d.N))
	df := float64(d.N - 1)
	tq := tQuantile(1-(1-conf)/2, df)
	d.Lo, d.Hi = d.Diff-tq*se, d.Diff+tq*se
	d.P = tTwoSidedP(d.Diff/se, df)
	return d
}
