package diagnose

import (
	"math"
	"slices"
	"sort"

	"github.com/pgscale/pgscale/internal/result"
)

// SuperlinearGain is how much more throughput per client than the first
// step a later step must reach for the first step to be no baseline: an
// efficiency above 1 + SuperlinearGain against it. A system does not do
// more per client with more clients; a first step that does less per
// client was held back by something of its own — one client waits for
// each round trip, leaving the server and the CPUs idle — and speedup
// against it measures that, not the system's scaling (2 clients at 707 %
// efficiency on 2 cores). Below it, run-to-run noise.
const SuperlinearGain = 0.10

// Baseline returns the index of the step that speedup and efficiency are
// measured against: the first counted step (complete, unless none is),
// unless a later counted step does more than SuperlinearGain more
// throughput per client, in which case the counted step that does the
// most per client. It is -1 when no counted step has throughput.
func Baseline(steps []result.Step) int {
	ok := counted(steps)
	clients := make([]int, len(steps))
	for i, s := range steps {
		clients[i] = s.Clients
	}
	r, _, _ := rates(steps, ok)
	return baseline(clients, r, ok)
}

// baseline is Baseline over client counts and their throughputs, ok
// marking those counted.
func baseline(clients []int, tps []float64, ok []bool) int {
	first, best := -1, -1
	perClient := func(i int) float64 { return tps[i] / float64(clients[i]) }
	for i := range tps {
		if !ok[i] || !(tps[i] > 0) || clients[i] <= 0 {
			continue
		}
		if first < 0 {
			first = i
		}
		if best < 0 || perClient(i) > perClient(best) {
			best = i
		}
	}
	if first < 0 || perClient(best) <= perClient(first)*(1+SuperlinearGain) {
		return first
	}
	return best
}

// Scaling fills in each step's speedup and efficiency against the
// sweep's baseline (Baseline): speedup is tps over the baseline's,
// efficiency the speedup over the ratio of client counts. When the CPU the
// system had changed across the steps by more than CapacityShift (other
// processes taking or leaving it), speedup is of throughput per
// CPU-second the system had (tps / SystemCPUs) instead.
func Scaling(steps []result.Step) {
	b := Baseline(steps)
	if b < 0 {
		return
	}
	r, _, _ := rates(steps, counted(steps))
	for i := range steps {
		s := &steps[i].Summary
		s.Speedup = r[i] / r[b]
		s.Efficiency = s.Speedup / (float64(steps[i].Clients) / float64(steps[b].Clients))
	}
}

// Rescaled returns f with every step's speedup and efficiency computed
// again against its baseline (Scaling), on a copy of its steps: a file
// written before the baseline could be other than the first step reads
// as a new one does, its table agreeing with its diagnosis.
func Rescaled(f *result.File) *result.File {
	g := *f
	g.Steps = slices.Clone(f.Steps)
	Scaling(g.Steps)
	return &g
}

// ScalingStep is the scaling analysis of one client count of a sweep: the
// figures a decision rule reads ("contention below 20 % at 8 clients").
// With several steps of a count (the rounds of an A/B run) each figure is
// the median over them. A figure that was not measured is NaN.
type ScalingStep struct {
	Clients int
	TPS     float64
	// SystemCPUs is the cores the system had (SystemCPUs; NaN when not
	// measured), TPSPerCPU the throughput per CPU-second of them.
	SystemCPUs, TPSPerCPU float64
	// PerCPU says Speedup and Efficiency are of TPSPerCPU: the CPU the
	// system had changed across the sweep by more than CapacityShift.
	PerCPU bool
	// Speedup and Efficiency are against the sweep's baseline client
	// count: the first, unless a later one does more per client
	// (Baseline).
	Speedup, Efficiency float64
	// GainPerDoubling is the throughput factor per doubling of clients
	// from the previous count, (tps / previous tps)^(1 / doublings): 2 is
	// linear (of TPSPerCPU with PerCPU). LossPerDoubling is the efficiency lost per doubling,
	// 1 − GainPerDoubling/2 (negative when scaling is better than linear).
	// Both are NaN at the first count, and LossPerDoubling from a count
	// before the baseline: efficiency is not lost, nor gained, against a
	// step that was no baseline.
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
	_, cores, use := rates(steps, ok)
	var out []ScalingStep
	for _, c := range order {
		var tps, sys, per, waits, cpuw, clw []float64
		for _, i := range by[c] {
			tps = append(tps, steps[i].Summary.TPS)
			if cores[i] > 0 {
				sys, per = append(sys, cores[i]), append(per, steps[i].Summary.TPS/cores[i])
			}
			t := Compute(steps[i]).Time
			if t.Known {
				waits = append(waits, t.Contention())
				clw = append(clw, t.In("Client"))
				if t.Schedstat {
					cpuw = append(cpuw, t.CPUWait)
				}
			}
		}
		out = append(out, ScalingStep{Clients: c, TPS: median(tps), SystemCPUs: median(sys), TPSPerCPU: median(per), PerCPU: use,
			Waits: median(waits), CPUWait: median(cpuw), ClientWait: median(clw), GainPerDoubling: math.NaN(), LossPerDoubling: math.NaN()})
	}
	rate := func(s ScalingStep) float64 {
		if s.PerCPU {
			return s.TPSPerCPU
		}
		return s.TPS
	}
	b := scalingBaseline(out, rate)
	for i := range out {
		s := &out[i]
		if b >= 0 {
			base := out[b]
			s.Speedup = rate(*s) / rate(base)
			s.Efficiency = s.Speedup / (float64(s.Clients) / float64(base.Clients))
		} else {
			s.Speedup, s.Efficiency = math.NaN(), math.NaN()
		}
		if i == 0 {
			continue
		}
		prev := out[i-1]
		if d := math.Log2(float64(s.Clients) / float64(prev.Clients)); d > 0 && rate(prev) > 0 && rate(*s) > 0 {
			s.GainPerDoubling = math.Pow(rate(*s)/rate(prev), 1/d)
			if i-1 >= b {
				s.LossPerDoubling = 1 - s.GainPerDoubling/2
			}
		}
	}
	return out
}

// scalingBaseline is Baseline over the client counts' medians of rate.
func scalingBaseline(sc []ScalingStep, rate func(ScalingStep) float64) int {
	clients := make([]int, len(sc))
	tps := make([]float64, len(sc))
	ok := make([]bool, len(sc))
	for i, s := range sc {
		clients[i], tps[i], ok[i] = s.Clients, rate(s), true
	}
	return baseline(clients, tps, ok)
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

// IdealSpeedup is perfect scaling from a baseline step of base clients to
// a step of clients on a machine of cores CPUs: throughput in proportion
// to the clients while each can have a core of its own, and no more once
// they share them, min(clients, cores) / min(base, cores). With cores
// unknown (0) it is in proportion to the clients.
func IdealSpeedup(clients, base, cores int) float64 {
	if base <= 0 || clients <= 0 {
		return 0
	}
	if cores <= 0 {
		return float64(clients) / float64(base)
	}
	return float64(min(clients, cores)) / float64(min(base, cores))
}
