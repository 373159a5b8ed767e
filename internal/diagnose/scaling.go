package diagnose

import "github.com/pgscale/pgscale/internal/result"

// Scaling fills in each step's speedup and efficiency against the first:
// speedup is tps over the first step's, efficiency the speedup over the
// ratio of client counts.
func Scaling(steps []result.Step) {
	if len(steps) == 0 || steps[0].Summary.TPS <= 0 {
		return
	}
	base := steps[0]
	for i := range steps {
		s := &steps[i].Summary
		s.Speedup = s.TPS / base.Summary.TPS
		s.Efficiency = s.Speedup / (float64(steps[i].Clients) / float64(base.Clients))
	}
}
