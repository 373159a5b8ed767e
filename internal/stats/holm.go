package stats

import (
	"math"
	"sort"
)

// Holm returns Holm-Bonferroni adjusted p-values in the order given. With
// the p-values sorted, p(1) ≤ … ≤ p(m), the adjusted value of p(i) is
// min(1, max over j ≤ i of (m−j+1)·p(j)); rejecting the hypotheses whose
// adjusted p-value is ≤ alpha is Holm's step-down procedure, which keeps the
// chance of any false rejection in the family at most alpha. A NaN p-value
// (no test could be run) counts as 1 and still counts in m.
func Holm(ps []float64) []float64 {
	m := len(ps)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	p := func(i int) float64 {
		if math.IsNaN(ps[i]) {
			return 1
		}
		return ps[i]
	}
	sort.SliceStable(idx, func(a, b int) bool { return p(idx[a]) < p(idx[b]) })
	adj := make([]float64, m)
	run := 0.0
	for rank, i := range idx {
		run = math.Max(run, math.Min(1, float64(m-rank)*p(i)))
		adj[i] = run
	}
	return adj
}
