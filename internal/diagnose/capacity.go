package diagnose

import (
	"fmt"
	"math"

	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/result"
)

// CapacityShift is how far apart the CPU the system had may be in two steps
// of a sweep before speedup and efficiency are of throughput per CPU-second
// it had instead of throughput: other processes taking or leaving the
// machine's CPU by more than this between steps would otherwise count as
// the system's scaling (throughput "still growing" at 8 clients because
// the server's share of the machine rose from 12 % to 40 %). Below it the
// two differ by less than a shared machine's run-to-run noise.
const CapacityShift = 0.10

// minSystemShare is the least share of the machine left to the system for
// a per-CPU figure to mean anything.
const minSystemShare = 0.02

// SystemCPUs is how many of the machine's cores the system under test
// (the server, the load generator, the probes and a pooler) had in a
// step: its cores less the share the machine's other processes used
// (Figures.Elsewhere). It is 0 when the process probe did not measure the
// machine and the server on it, or left the system next to nothing.
func SystemCPUs(f Figures) float64 {
	if !f.HasHost || !f.HasServer || f.CPUs <= 0 {
		return 0
	}
	left := 1 - f.Elsewhere()
	if left < minSystemShare {
		return 0
	}
	return float64(f.CPUs) * left
}

// perCPU returns, per step, the cores the system's throughput is taken
// against and whether speedup is to be of throughput per CPU-second.
// Other processes constrain the system only in a step where it was short
// of CPU (shortOfCPU): it then had what they left it, SystemCPUs. Per CPU-second is used when every counted step was
// measured and the system's cores in two such steps differ by more than
// CapacityShift. A step that left CPU idle was not short of it: it is
// taken against the most cores any full step's system had.
func perCPU(steps []result.Step, ok []bool) ([]float64, bool) {
	cores := make([]float64, len(steps))
	full := make([]bool, len(steps))
	lo, hi := math.Inf(1), 0.0
	all, n := true, 0
	for i, s := range steps {
		f := Compute(s)
		cores[i] = SystemCPUs(f)
		full[i] = shortOfCPU(f)
		if !ok[i] {
			continue
		}
		if cores[i] <= 0 {
			all = false
			continue
		}
		if full[i] {
			lo, hi, n = min(lo, cores[i]), max(hi, cores[i]), n+1
		}
	}
	use := all && n >= 2 && hi > lo*(1+CapacityShift)
	if use {
		for i := range cores {
			if !full[i] && cores[i] > 0 {
				cores[i] = hi
			}
		}
	}
	return cores, use
}

// CPUWaitShort is the share of their time the backends may wait for a CPU
// on a full machine before the step counts as short of CPU.
const CPUWaitShort = 0.20

// shortOfCPU says whether the system was short of CPU in a step: the
// machine full (CPUSaturated), and the system using most of it itself, or
// its tasks queueing for a CPU (RunQueueSaturated), or its backends
// waiting for one CPUWaitShort of their time. A latency-bound step on a
// machine others fill, its backends barely waiting for a CPU, was not.
func shortOfCPU(f Figures) bool {
	if !f.HasHost || f.MachineBusy < CPUSaturated {
		return false
	}
	return f.MachineBusy-f.Elsewhere() >= Underloaded || f.RunQueuePerCore >= RunQueueSaturated ||
		f.Time.Known && f.Time.Schedstat && f.Time.CPUWait >= CPUWaitShort
}

// systemCPUs is each step's SystemCPUs, as measured.
func systemCPUs(steps []result.Step) []float64 {
	out := make([]float64, len(steps))
	for i, s := range steps {
		out[i] = SystemCPUs(Compute(s))
	}
	return out
}

// rates are what speedup is of, per step: throughput, or with perCPU
// throughput per CPU-second the system had; with the cores each is taken
// against and whether it is per CPU-second.
func rates(steps []result.Step, ok []bool) ([]float64, []float64, bool) {
	cores, use := perCPU(steps, ok)
	r := make([]float64, len(steps))
	for i, s := range steps {
		r[i] = s.Summary.TPS
		if use && cores[i] > 0 {
			r[i] = s.Summary.TPS / cores[i]
		}
	}
	return r, cores, use
}

// PerCPUSecond returns each step's throughput per CPU-second the system
// had (0 where the process probe did not measure it), against the cores
// Scaling takes it against, and whether Scaling bases speedup and
// efficiency on it: what a table shows beside throughput, labelled, when
// its speedup is per CPU-second.
func PerCPUSecond(steps []result.Step) ([]float64, bool) {
	_, cores, use := rates(steps, counted(steps))
	out := make([]float64, len(steps))
	for i, s := range steps {
		if cores[i] > 0 {
			out[i] = s.Summary.TPS / cores[i]
		}
	}
	return out, use
}

// cpuShift says how the CPU the system had at step i differs from the
// baseline step b's, when it does by more than CapacityShift: "the server
// and load generator had 1.6 of 2 cores (other processes 20%), 0.4 at 1
// client".
func cpuShift(steps []result.Step, figs []Figures, cores []float64, i, b int) string {
	if i == b || cores[i] <= 0 || cores[b] <= 0 || math.Abs(cores[i]/cores[b]-1) <= CapacityShift {
		return ""
	}
	return fmt.Sprintf("the system had %.2f of %d cores (other processes %s), %.2f at %s", cores[i], figs[i].CPUs,
		prose.Share(figs[i].Elsewhere()), cores[b], prose.Count(steps[b].Clients, "client"))
}

// perCPUSentence says, when speedup is of throughput per CPU-second, why
// and what it changes: the CPU the system had at the least and the most
// (cores, as measured), and the peak's gain over the first step both ways
// (r, the rates speedup is of).
func perCPUSentence(steps []result.Step, figs []Figures, r, cores []float64, d *result.Diagnosis) string {
	if !d.PerCPU {
		return ""
	}
	lo, hi := -1, -1
	for _, i := range countedIndexes(steps) {
		if lo < 0 || cores[i] < cores[lo] {
			lo = i
		}
		if hi < 0 || cores[i] > cores[hi] {
			hi = i
		}
	}
	// The peak against the first step: what the sweep would claim of its
	// throughput, and what per CPU-second leaves of it.
	b, p := countedIndexes(steps)[0], d.Peak
	if p == b {
		p = hi
	}
	raw := steps[p].Summary.TPS / steps[b].Summary.TPS
	per := r[p] / r[b]
	return fmt.Sprintf("Other processes took the machine's CPU unevenly across the steps: the server and the load generator had %.2f of %d cores at %s (other processes %s) and %.2f at %s (%s), "+
		"so throughput moved with the CPU they got as well as with the clients; speedup and efficiency are of throughput per CPU-second they had (tps/cpu-s), "+
		"not of throughput: %s did %.2f× the throughput of %s, %.2f× per CPU-second.",
		cores[lo], figs[lo].CPUs, prose.Count(steps[lo].Clients, "client"), prose.Share(figs[lo].Elsewhere()),
		cores[hi], prose.Count(steps[hi].Clients, "client"), prose.Share(figs[hi].Elsewhere()),
		prose.Count(steps[p].Clients, "client"), raw, prose.Count(steps[b].Clients, "client"), per)
}
