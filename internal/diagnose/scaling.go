package diagnose

import (
	"math"
	"sort"

	"github.com/pgscale/pgscale/internal/result"
)

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

// ScalingStep is the scaling analysis of one client count of a sweep: the
// figures a decision rule reads ("contention below 20 % at 8 clients").
// With several steps of a count (the rounds of an A/B run) each figure is
// the median over them. A figure that was not measured is NaN.
type ScalingStep struct {
	Clients int
	TPS     float64
	// Speedup and Efficiency are against the sweep's first client count.
	Speedup, Efficiency float64
	// GainPerDoubling is the throughput factor per doubling of clients
	// from the previous count, (tps / previous tps)^(1 / doublings): 2 is
	// linear. LossPerDoubling is the efficiency lost per doubling,
	// 1 − GainPerDoubling/2 (negative when scaling is better than linear).
	// Both are NaN at the first count.
	GainPerDoubling, LossPerDoubling float64
	// Waits is the share of the backends' time lost to contention waits
	// (ContentionClasses), CPUWait the share they spent runnable but
	// waiting for a CPU (schedstat; NaN without it), ClientWait the share
	// waiting for the client: shares of one whole (BackendTime).
	Waits, CPUWait, ClientWait float64
}

// ScalingOf analyses a sweep's steps by client count, in the order the
// counts first ran; steps cut short are left out unless none completed.
func ScalingOf(steps []result.Step) []ScalingStep {
	ok := counted(steps)
	var order []int
	by := map[int][]int{}
	for i, s := range steps {
		if !ok[i] {
			continue
		}
		if _, seen := by[s.Clients]; !seen {
			order = append(order, s.Clients)
		}
		by[s.Clients] = append(by[s.Clients], i)
	}
	var out []ScalingStep
	for _, c := range order {
		var tps, waits, cpuw, clw []float64
		for _, i := range by[c] {
			tps = append(tps, steps[i].Summary.TPS)
			t := Compute(steps[i]).Time
			if t.Known {
				waits = append(waits, t.Contention())
				clw = append(clw, t.In("Client"))
				if t.Schedstat {
					cpuw = append(cpuw, t.CPUWait)
				}
			}
		}
		out = append(out, ScalingStep{Clients: c, TPS: median(tps), Waits: median(waits), CPUWait: median(cpuw), ClientWait: median(clw),
			GainPerDoubling: math.NaN(), LossPerDoubling: math.NaN()})
	}
	for i := range out {
		s, first := &out[i], out[0]
		if first.TPS > 0 {
			s.Speedup = s.TPS / first.TPS
			s.Efficiency = s.Speedup / (float64(s.Clients) / float64(first.Clients))
		} else {
			s.Speedup, s.Efficiency = math.NaN(), math.NaN()
		}
		if i == 0 {
			continue
		}
		prev := out[i-1]
		if d := math.Log2(float64(s.Clients) / float64(prev.Clients)); d > 0 && prev.TPS > 0 && s.TPS > 0 {
			s.GainPerDoubling = math.Pow(s.TPS/prev.TPS, 1/d)
			s.LossPerDoubling = 1 - s.GainPerDoubling/2
		}
	}
	return out
}

// median is the median of xs; NaN when empty.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
