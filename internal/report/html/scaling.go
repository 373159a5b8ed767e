package html

import (
	"fmt"
	"math"
	"strings"

	"github.com/pgscale/pgscale/internal/compare"
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

// sweepSeries is one sweep file's curve, with its analysis's knee and
// peak.
func sweepSeries(label, name string, fa compare.FileAnalysis) scalingSeries {
	s := scalingSeries{Label: label, Source: name, Knee: fa.Knee, Peak: fa.Peak, workload: workloadKey(fa.Rescaled.Workload), cores: fa.Cores,
		Counted: countedFile(fa.File)}
	s.PerCPU = fa.PerCPU
	for i, st := range fa.Rescaled.Steps {
		sum := st.Summary
		p := scalingPoint{Clients: st.Clients, TPS: num(sum.TPS), P99Ms: num(sum.Latency.P99Ms),
			Speedup: numPtr(sum.Speedup), Efficiency: numPtr(sum.Efficiency), Incomplete: !st.Complete}
		if v := fa.Steps[i].IdealSpeedup; v > 0 {
			p.Ideal = numPtr(v)
		}
		if s.PerCPU && fa.Steps[i].TPSPerCPU > 0 {
			p.TPSPerCPU = numPtr(fa.Steps[i].TPSPerCPU)
		}
		for _, m := range costMeasures {
			if v, ok := fa.Steps[i].Values[m]; ok {
				p.Costs = append(p.Costs, cost{Measure: m, Value: num(v)})
			}
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
	s := scalingSeries{Label: label, Source: name, Knee: fa.Knee, Peak: fa.Peak, Counted: countedFile(fa.File)}
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
		for _, m := range costMeasures {
			if c, ok := p.Measures[m]; ok {
				pt.Costs = append(pt.Costs, cost{Measure: m, Value: num(c.GeoMean), Lo: numPtr(c.GeoLo), Hi: numPtr(c.GeoHi)})
			}
		}
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

// costMeasures are the costs per transaction a scaling panel draws
// against clients: the server's and the pooler's CPU, or, counted under
// Valgrind, their instructions.
var costMeasures = []string{"server-cpu/txn", "pooler-cpu/txn", "instr/txn", "pooler-instr/txn"}

// runChange is where a change of throughput is found: an A/B run, a
// candidate and a client count.
type runChange struct {
	run, candidate string
	clients        int
}

// tpsChanges are the comparisons' changes of throughput on the page, the
// page's own comparison's and the suite's matrices', by run, candidate
// and client count.
func tpsChanges(doc Doc) map[runChange]MatrixCell {
	out := map[runChange]MatrixCell{}
	if c := doc.Comparison; c != nil && c.Run != "" {
		for _, r := range c.Of.Rows {
			if r.Measure.Name != "tps" {
				continue
			}
			for ci, cell := range r.Cells {
				if ci < len(c.Candidates) {
					a := cell.Assessment
					out[runChange{c.Run, c.Candidates[ci].Name, r.Clients()}] = MatrixCell{Change: a.Change, Lo: a.Lo, Hi: a.Hi}
				}
			}
		}
	}
	for _, m := range doc.Matrices {
		for _, r := range m.Rows {
			for _, cell := range r.Cells {
				if !cell.Empty && cell.Run != "" && strings.HasPrefix(cell.Key, "tps@") {
					out[runChange{cell.Run, cell.Candidate, cell.Clients}] = cell
				}
			}
		}
	}
	return out
}

// workloadKey tells workloads apart by their scripts.
func workloadKey(w result.Workload) string {
	var b strings.Builder
	for _, s := range w.Scripts {
		fmt.Fprintf(&b, "%d\x00%s\x00", s.Weight, s.Source)
	}
	return b.String()
}

// baselineChanges sets, in every panel of two lines or more, each line's
// change of throughput against the panel's baseline at each client count
// (the lock study's view): for an A/B target the comparison's change with
// its interval, for a sweep of the same workload as the first the ratio
// to its throughput at the same client count (one step each: no
// interval). Sweeps of other workloads are no change of one another.
func baselineChanges(sc *scaling, doc Doc) {
	changes := tpsChanges(doc)
	for _, panel := range scalingPanels(sc) {
		if len(panel.series) < 2 {
			continue
		}
		base := panel.series[0]
		for _, i := range panel.series {
			if sc.Series[i].isBase {
				base = i
			}
		}
		at := map[int]num{}
		for _, p := range sc.Series[base].Points {
			at[p.Clients] = p.TPS
		}
		for _, i := range panel.series {
			s := &sc.Series[i]
			if i == base {
				continue
			}
			for k := range s.Points {
				p := &s.Points[k]
				if s.run != "" {
					if c, ok := changes[runChange{s.run, s.target, p.Clients}]; ok && !math.IsNaN(c.Change) {
						p.VsBase = &vsBase{Change: num(c.Change), Lo: numPtr(c.Lo), Hi: numPtr(c.Hi), Text: stats.FormatChange(c.Change, c.Lo, c.Hi)}
					}
				} else if b, ok := at[p.Clients]; ok && b > 0 && !math.IsNaN(float64(p.TPS)) && s.workload == sc.Series[base].workload {
					ch := float64(p.TPS/b) - 1
					p.VsBase = &vsBase{Change: num(ch), Text: stats.FormatPercent(ch)}
				}
				sc.Series[base].Baseline = sc.Series[base].Baseline || p.VsBase != nil
			}
		}
	}
}

// countedFile says whether the file's server ran under Valgrind (--count
// instructions): its target says so, or (files written before it did) its
// steps hold counted instructions.
func countedFile(f *result.File) bool {
	if f == nil {
		return false
	}
	if f.Target.Valgrind != nil {
		return true
	}
	for _, s := range f.Steps {
		if s.Probes.Instructions() != nil {
			return true
		}
	}
	return false
}
