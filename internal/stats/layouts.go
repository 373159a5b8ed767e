package stats

import (
	"math"

	"github.com/aclements/go-moremath/stats"
)

// LayoutTest names the test that decides a comparison whose rounds ran on
// cluster layouts drawn anew every few rounds (CompareLayouts).
const LayoutTest = "t-test on the per-layout mean log ratios"

// LayoutDetail holds what a comparison over cluster layouts adds to the
// paired detail, which there describes the per-layout means.
type LayoutDetail struct {
	// Layouts counts the layouts with a usable round, Rounds the rounds
	// used.
	Layouts, Rounds int
	// WithinSD is the pooled standard deviation of the per-round log
	// ratios about their layout's mean: the noise inside one layout. NaN
	// when no layout has two usable rounds.
	WithinSD float64
	// BetweenSD estimates the standard deviation of the layout effect:
	// how much the A/B difference itself moves from one pair of clusters
	// to the next, beyond what WithinSD explains (one-way random effects,
	// method of moments; 0 when the layout means spread no more than the
	// within-layout noise predicts). NaN with fewer than two layouts or
	// without WithinSD.
	BetweenSD float64
	// MeansSD is the sample standard deviation of the per-layout mean log
	// ratios: the noise the test sees, both parts together. NaN with
	// fewer than two layouts.
	MeansSD float64
}

// CompareLayouts compares per-round values where base[i] and cand[i] were
// measured in round i, on cluster layout layouts[i]: the servers were
// re-created every few rounds, so a layout's rounds share whatever fixed
// difference that pair of clusters had (memory placement, data-directory
// layout), and the layout, not the round, is the unit of replication.
//
// Each layout contributes the mean of its rounds' log ratios ln(cand/base);
// the change is the geometric mean over layouts of exp(that mean) − 1 (for
// layouts of equal size, the geometric mean of the per-round ratios), and
// interval, test and cross-checks are ComparePaired's over the layouts
// (LayoutTest: a t-test with layouts − 1 degrees of freedom). For layouts
// of equal size this is the exact test of the random-effects model; with a
// round missing here and there each layout still counts once. Rounds with a
// value that is zero, negative or not finite are left out with a warning.
func CompareLayouts(m Measure, base, cand []float64, layouts []int, opt Options) Comparison {
	n := min(len(base), len(cand), len(layouts))
	var warns []error
	if len(base) != n || len(cand) != n || len(layouts) != n {
		warns = append(warns, warnf(LeftOut, "%s: %d baseline rounds, %d candidate rounds and %d layouts; only the first %d are paired", m.Key(), len(base), len(cand), len(layouts), n))
	}
	var logs []float64
	var ids, out []int
	type sums struct{ b, c float64 }
	layout := map[int]*sums{}
	var order []int
	for i := 0; i < n; i++ {
		b, x := base[i], cand[i]
		if !(b > 0) || !(x > 0) || math.IsInf(b, 1) || math.IsInf(x, 1) {
			out = append(out, i+1)
			continue
		}
		logs = append(logs, math.Log(x/b))
		ids = append(ids, layouts[i])
		s := layout[layouts[i]]
		if s == nil {
			s = &sums{}
			layout[layouts[i]] = s
			order = append(order, layouts[i])
		}
		s.b += math.Log(b)
		s.c += math.Log(x)
	}
	if len(out) > 0 {
		warns = append(warns, warnf(LeftOut, "%s: rounds %v left out: a value is zero, negative or not finite", m.Key(), out))
	}
	count := map[int]int{}
	for _, id := range ids {
		count[id]++
	}
	bs := make([]float64, len(order))
	cs := make([]float64, len(order))
	for i, id := range order {
		k := float64(count[id])
		bs[i], cs[i] = math.Exp(layout[id].b/k), math.Exp(layout[id].c/k)
	}
	c := comparePaired(m, bs, cs, opt, "layout")
	c.Test = LayoutTest
	c.Warnings = append(warns, c.Warnings...)
	d := LayoutSpread(logs, ids)
	c.LayoutDetail = &d
	return c
}

// LayoutSpread splits the spread of per-round log ratios into the noise
// within a layout and the spread between layouts (see LayoutDetail), from
// the rounds' log ratios and the layout of each.
func LayoutSpread(logs []float64, layouts []int) LayoutDetail {
	d := LayoutDetail{Rounds: len(logs), WithinSD: math.NaN(), BetweenSD: math.NaN(), MeansSD: math.NaN()}
	sum := map[int]float64{}
	count := map[int]int{}
	var order []int
	for i, x := range logs {
		id := layouts[i]
		if count[id] == 0 {
			order = append(order, id)
		}
		sum[id] += x
		count[id]++
	}
	d.Layouts = len(order)
	if d.Layouts == 0 {
		return d
	}
	mean := map[int]float64{}
	means := make([]float64, len(order))
	for i, id := range order {
		mean[id] = sum[id] / float64(count[id])
		means[i] = mean[id]
	}
	var ssw float64
	for i, x := range logs {
		ssw += (x - mean[layouts[i]]) * (x - mean[layouts[i]])
	}
	nf, b := float64(len(logs)), float64(d.Layouts)
	if dfw := nf - b; dfw > 0 {
		d.WithinSD = math.Sqrt(ssw / dfw)
	}
	if d.Layouts < 2 {
		return d
	}
	d.MeansSD = stats.StdDev(means)
	if math.IsNaN(d.WithinSD) {
		return d
	}
	var grand, ssb, sq float64
	for _, x := range logs {
		grand += x
	}
	grand /= nf
	for _, id := range order {
		k := float64(count[id])
		ssb += k * (mean[id] - grand) * (mean[id] - grand)
		sq += k * k
	}
	msb := ssb / (b - 1)
	n0 := (nf - sq/nf) / (b - 1) // rounds per layout, for unequal layouts
	d.BetweenSD = math.Sqrt(math.Max(0, (msb-d.WithinSD*d.WithinSD)/n0))
	return d
}

// NoiseLayouts is NoiseAA for an A/A run whose clusters were re-created
// every few rounds (layouts[i] is round i's layout). SDLog is the noise
// within a layout and Rounds2 and Rounds5 the rounds an A/B run on one
// cluster needs (same-cluster targets see no layout difference); the
// layout fields add the spread between layouts and what an A/B run on
// separate clusters, re-created as often as here, needs with it included.
func NoiseLayouts(m Measure, base, cand []float64, layouts []int, opt NoiseOptions) Noise {
	c := CompareLayouts(m, base, cand, layouts, opt.Options)
	d := c.LayoutDetail
	n := Noise{Comparison: c, SDLog: d.WithinSD, Power: opt.Power, Layouts: d.Layouts,
		BetweenSD: d.BetweenSD, LayoutSD: d.MeansSD}
	if !(n.Power > 0 && n.Power < 1) {
		if n.Power != 0 {
			n.Warnings = append(n.Warnings, warnf(BadOption, "power %v is not between 0 and 1; using %v", n.Power, DefaultPower))
		}
		n.Power = DefaultPower
	}
	if d.Layouts > 0 {
		n.PerLayout = max(1, int(math.Round(float64(d.Rounds)/float64(d.Layouts))))
	}
	if d.Layouts < 2 {
		return n
	}
	if d.Layouts < 5 {
		n.Warnings = append(n.Warnings, warnf(TooFew, "%s: a spread from %d layouts is itself rough; the layout counts are a guide", m.Key(), d.Layouts))
	}
	if c.P <= 1-c.Confidence {
		n.Warnings = append(n.Warnings, warnf(AANotNull, "%s: the A/A run shows a significant change %s (p=%.3g) across %d layouts: the two sides differ or the rounds drift", m.Key(), FormatChange(c.Change, c.Lo, c.Hi), c.P, d.Layouts))
	}
	if !math.IsNaN(n.SDLog) {
		n.Rounds2 = RoundsToDetect(n.SDLog, 0.02, c.Confidence, n.Power)
		n.Rounds5 = RoundsToDetect(n.SDLog, 0.05, c.Confidence, n.Power)
	}
	n.Layouts2 = RoundsToDetect(n.LayoutSD, 0.02, c.Confidence, n.Power)
	n.Layouts5 = RoundsToDetect(n.LayoutSD, 0.05, c.Confidence, n.Power)
	return n
}
