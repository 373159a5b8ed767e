package html

import (
	"math"

	"github.com/pgscale/pgscale/internal/compare"
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

// sweepSeries is one sweep file's curve, with its analysis's knee and
// peak.
func sweepSeries(label, name string, fa compare.FileAnalysis) scalingSeries {
	s := scalingSeries{Label: label, Source: name, Knee: fa.Knee, Peak: fa.Peak}
	s.PerCPU = fa.PerCPU
	for i, st := range fa.Rescaled.Steps {
		sum := st.Summary
		p := scalingPoint{Clients: st.Clients, TPS: num(sum.TPS), P99Ms: num(sum.Latency.P99Ms),
			Speedup: numPtr(sum.Speedup), Efficiency: numPtr(sum.Efficiency), Incomplete: !st.Complete}
		if s.PerCPU && fa.Steps[i].TPSPerCPU > 0 {
			p.TPSPerCPU = numPtr(fa.Steps[i].TPSPerCPU)
		}
		s.Points = append(s.Points, p)
	}
	return s
}

// abSeries is one A/B target's curve: at each client count its analysis's
// central value over the rounds whose step completed (the geometric mean)
// with its interval, and every round's value; the knee and peak are the
// analysis's, of those central values.
func abSeries(label, name string, fa compare.FileAnalysis) scalingSeries {
	s := scalingSeries{Label: label, Source: name, Knee: fa.Knee, Peak: fa.Peak}
	if fa.File.AB != nil {
		s.Rounds = fa.File.AB.Rounds
	}
	for _, p := range fa.Points {
		t, ok := p.Measures["tps"]
		if !ok {
			s.Points = append(s.Points, scalingPoint{Clients: p.Clients, TPS: num(math.NaN()), P99Ms: num(math.NaN()), Incomplete: true, LeftOut: p.LeftOut})
			continue
		}
		l := p.Measures["p99"]
		pt := scalingPoint{Clients: p.Clients, TPS: num(t.GeoMean), TPSLo: numPtr(t.GeoLo), TPSHi: numPtr(t.GeoHi),
			P99Ms: num(l.GeoMean), P99Lo: numPtr(l.GeoLo), P99Hi: numPtr(l.GeoHi), LeftOut: p.LeftOut, Incomplete: p.LeftOut > 0}
		for _, v := range p.Values["tps"] {
			pt.RoundTPS = append(pt.RoundTPS, num(v))
		}
		for _, v := range p.Values["p99"] {
			pt.RoundP99 = append(pt.RoundP99, num(v))
		}
		s.Points = append(s.Points, pt)
	}
	return s
}
