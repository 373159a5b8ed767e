package html

import (
	"math"
	"sort"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
)

// geometric says whether client counts grow by a roughly constant factor
// of at least 1.5, as 1,2,4,8 or 1,4,16 do: such a sweep reads best on a
// log axis, where every step is the same distance from the next.
func geometric(cs []int) bool {
	if len(cs) < 2 || cs[0] < 1 {
		return false
	}
	first := float64(cs[1]) / float64(cs[0])
	if first < 1.5 {
		return false
	}
	for i := 2; i < len(cs); i++ {
		r := float64(cs[i]) / float64(cs[i-1])
		if math.Abs(r/first-1) > 0.1 {
			return false
		}
	}
	return true
}

// sweepSeries is one sweep file's curve; d gives the knee and the peak.
func sweepSeries(label, name string, f *result.File, d *result.Diagnosis) scalingSeries {
	s := scalingSeries{Label: label, Source: name}
	for _, st := range f.Steps {
		sum := st.Summary
		s.Points = append(s.Points, scalingPoint{Clients: st.Clients, TPS: num(sum.TPS), P99Ms: num(sum.Latency.P99Ms),
			Speedup: numPtr(sum.Speedup), Efficiency: numPtr(sum.Efficiency), Incomplete: !st.Complete})
	}
	if d != nil {
		if d.Knee >= 0 {
			s.Knee = f.Steps[d.Knee].Clients
		}
		s.Peak = f.Steps[d.Peak].Clients
		s.PerCPU = d.PerCPU
	}
	return s
}

// abSeries is one A/B target's curve: at each client count the median
// over the rounds whose step completed, with its confidence interval
// (stats.Summarize), and every round's value; the knee is diagnose.Knee
// of the medians.
func abSeries(label, name string, f *result.File) scalingSeries {
	s := scalingSeries{Label: label, Source: name}
	if f.AB != nil {
		s.Rounds = f.AB.Rounds
	}
	type acc struct {
		tps, p99 []float64
		cut      int
	}
	byClients := map[int]*acc{}
	var order []int
	for _, st := range f.Steps {
		a := byClients[st.Clients]
		if a == nil {
			a = &acc{}
			byClients[st.Clients] = a
			order = append(order, st.Clients)
		}
		if !st.Complete {
			a.cut++
			continue
		}
		a.tps = append(a.tps, st.Summary.TPS)
		a.p99 = append(a.p99, st.Summary.Latency.P99Ms)
	}
	sort.Ints(order)
	var medians []result.Step
	for _, c := range order {
		a := byClients[c]
		if len(a.tps) == 0 {
			s.Points = append(s.Points, scalingPoint{Clients: c, TPS: num(math.NaN()), P99Ms: num(math.NaN()), Incomplete: true, LeftOut: a.cut})
			continue
		}
		t := stats.Summarize(a.tps, stats.Options{})
		l := stats.Summarize(a.p99, stats.Options{})
		pt := scalingPoint{Clients: c, TPS: num(t.Median), TPSLo: numPtr(t.Lo), TPSHi: numPtr(t.Hi),
			P99Ms: num(l.Median), P99Lo: numPtr(l.Lo), P99Hi: numPtr(l.Hi), LeftOut: a.cut, Incomplete: a.cut > 0}
		for i := range a.tps {
			pt.RoundTPS = append(pt.RoundTPS, num(a.tps[i]))
			pt.RoundP99 = append(pt.RoundP99, num(a.p99[i]))
		}
		s.Points = append(s.Points, pt)
		medians = append(medians, result.Step{Clients: c, Complete: true, Summary: result.Summary{TPS: t.Median}})
	}
	if k := diagnose.Knee(medians); k >= 0 {
		s.Knee = medians[k].Clients
	}
	peak := 0
	for i, m := range medians {
		if m.Summary.TPS > medians[peak].Summary.TPS {
			peak = i
		}
	}
	if len(medians) > 0 {
		s.Peak = medians[peak].Clients
	}
	return s
}
