package compare

import (
	"math"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/result"
)

// SuiteStep is one client count of a cell, as the suite's matrix shows it.
type SuiteStep struct {
	Clients int
	// TPS is each file's central tps over its complete steps at Clients
	// (their geometric mean), in the order of the cell's Inputs (NaN where
	// it has none).
	TPS []float64
	// Last is the baseline's last complete step at Clients, nil when none
	// completed; Figures are its figures (FileAnalysis).
	Last    *result.Step
	Figures diagnose.Figures
	// PerCPU says Last's speedup and efficiency are of the baseline's
	// throughput per CPU-second the system had, TPSPerCPU (its file's
	// FileAnalysis.PerCPU), not of its throughput.
	PerCPU    bool
	TPSPerCPU float64
	// Verdict is Last's verdict as the file's analysis judged it (against
	// the first step of its round); nil without the probes' evidence.
	Verdict *result.StepVerdict
	// Effects are, in the order of the cell's Inputs, the effect of the
	// first disturbance window on each file's last complete step at
	// Clients (nil where it has none): a disturbance study's figure.
	Effects []*result.Effect
	// Exhausted is, per file in the order of the cell's Inputs, the
	// backend snapshots that found the fast-path slots exhausted over
	// all its complete steps at Clients: evidence from any round counts,
	// as each step takes only a few lock snapshots.
	Exhausted []int
	// Counted, when the baseline's step was counted under Valgrind,
	// names the counted measure a suite's row shows in place of
	// throughput: "pooler-instr/txn" where a pooler was counted (its
	// targets are poolers: what they compare), else "instr/txn". The
	// throughput, and a bottleneck
	// judged on it, are Valgrind's, not the workload's: Verdict is then
	// nil. Lead are each file's central value of it, in the order of the
	// cell's Inputs (NaN where it has none), as TPS.
	Counted string
	Lead    []float64
}

// Disturbed says whether some step of the suite ran a disturbance window.
func (s *Suite) Disturbed() bool {
	for _, c := range s.Cells {
		for _, st := range c.Steps {
			for _, e := range st.Effects {
				if e != nil {
					return true
				}
			}
		}
	}
	return false
}

// lastEffect is the first window's effect on f's last complete step with
// c clients; nil when it has none.
func lastEffect(f *result.File, c int) *result.Effect {
	var e *result.Effect
	for i := range f.Steps {
		if s := &f.Steps[i]; s.Complete && s.Clients == c && len(s.Disturbances) > 0 {
			e = s.Disturbances[0].Effect
		}
	}
	return e
}

// suiteSteps returns a cell's steps, one per client count of its baseline
// (Clients), none when the cell has no files: each file's central tps
// (the geometric mean of its rounds, the centre its comparison's change is
// of), and the baseline's last complete step with its figures and verdict
// as its analysis judged them.
func suiteSteps(fas []FileAnalysis) []SuiteStep {
	if len(fas) == 0 {
		return nil
	}
	base := fas[0]
	var out []SuiteStep
	for _, c := range Clients(base.File) {
		st := SuiteStep{Clients: c}
		for i, in := range fas {
			tps := math.NaN()
			if p, ok := fas[i].Point(c); ok {
				tps = p.Centre("tps")
			}
			st.TPS = append(st.TPS, tps)
			st.Effects = append(st.Effects, lastEffect(in.File, c))
			n := 0
			for _, s := range in.File.Steps {
				if s.Complete && s.Clients == c && s.Probes != nil && s.Probes.Locks() != nil {
					n += s.Probes.Locks().Exhausted
				}
			}
			st.Exhausted = append(st.Exhausted, n)
		}
		last := -1
		for i := range base.Rescaled.Steps {
			if s := &base.Rescaled.Steps[i]; s.Complete && s.Clients == c {
				last = i
			}
		}
		if last >= 0 {
			st.Last, st.Figures = &base.Rescaled.Steps[last], base.Steps[last].Figures
			st.PerCPU, st.TPSPerCPU = base.PerCPU, base.Steps[last].TPSPerCPU
			if st.Last.Probes != nil {
				v := base.Steps[last].Verdict
				st.Verdict = &v
			}
			if st.Counted = countedLead(st.Last); st.Counted != "" {
				st.Verdict = nil
				for i := range fas {
					v := math.NaN()
					if p, ok := fas[i].Point(c); ok {
						v = p.Centre(st.Counted)
					}
					st.Lead = append(st.Lead, v)
				}
			}
		}
		out = append(out, st)
	}
	return out
}

// countedLead is the counted measure a step counted under Valgrind is
// shown by: the pooler's instructions per transaction where a pooler was
// counted, else the client backends'; "" for a step measured natively.
func countedLead(s *result.Step) string {
	if s.Probes == nil || s.Probes.Instructions() == nil {
		return ""
	}
	if in := s.Probes.Instructions(); in.Pooler != nil && in.PoolerPerTxn > 0 {
		return "pooler-instr/txn"
	}
	return "instr/txn"
}
