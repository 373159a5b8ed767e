package compare

import (
	"math"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
)

// SuiteStep is one client count of a cell, as the suite's matrix shows it.
type SuiteStep struct {
	Clients int
	// TPS is each file's median tps over its complete steps at Clients,
	// in the order of the cell's Inputs (NaN where it has none).
	TPS []float64
	// Last is the baseline's last complete step at Clients, nil when none
	// completed; Figures are its figures (diagnose.Compute).
	Last    *result.Step
	Figures diagnose.Figures
	// Verdict diagnoses Last against the baseline's first step
	// (diagnose.Step); nil without the probes' evidence.
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
// (Clients), none when the cell has no files.
func suiteSteps(inputs []Input) []SuiteStep {
	if len(inputs) == 0 {
		return nil
	}
	base := inputs[0].File
	var out []SuiteStep
	for _, c := range Clients(base) {
		st := SuiteStep{Clients: c}
		for _, in := range inputs {
			st.TPS = append(st.TPS, medianTPS(in.File, c))
			st.Effects = append(st.Effects, lastEffect(in.File, c))
			n := 0
			for _, s := range in.File.Steps {
				if s.Complete && s.Clients == c && s.Probes != nil && s.Probes.Locks() != nil {
					n += s.Probes.Locks().Exhausted
				}
			}
			st.Exhausted = append(st.Exhausted, n)
		}
		for i := range base.Steps {
			if s := &base.Steps[i]; s.Complete && s.Clients == c {
				st.Last = s
			}
		}
		if st.Last != nil {
			st.Figures = diagnose.Compute(*st.Last)
			if st.Last.Probes != nil {
				v := diagnose.Step(st.Figures, diagnose.Compute(base.Steps[0]))
				st.Verdict = &v
			}
		}
		out = append(out, st)
	}
	return out
}

// medianTPS is the median tps of f's complete steps with c clients.
func medianTPS(f *result.File, c int) float64 {
	for _, md := range Measures() {
		if md.Name == "tps" {
			return stats.Summarize(Values(f, c, md), stats.Options{}).Median
		}
	}
	return math.NaN()
}
