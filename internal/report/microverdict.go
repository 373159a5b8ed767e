package report

import (
	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/micro"
	"github.com/pgscale/pgscale/internal/stats"
)

// VerdictMicro is one micro-benchmark run in the verdict file: a suite's
// micro cell, or pgscale micro's run.
type VerdictMicro struct {
	// Name is the suite's micro cell's name; empty for pgscale micro.
	Name    string `json:"name,omitempty"`
	Command string `json:"command"`
	Format  string `json:"format"`
	Rounds  int    `json:"rounds"`
	// RoundsMax and Stopped, for a run that rounded until decided.
	RoundsMax int    `json:"rounds_max,omitempty"`
	Stopped   string `json:"stopped,omitempty"`
	Outcome   string `json:"outcome"`
	Complete  bool   `json:"complete"`
	// Problems say what made it incomplete, one line each.
	Problems []string `json:"problems,omitempty"`
	// Seconds is each target's time running the command, by name.
	Seconds    map[string]float64      `json:"seconds"`
	Candidates []VerdictMicroCandidate `json:"candidates"`
}

// VerdictMicroCandidate is one candidate's micro-benchmarks: the bot's
// headline, the tallies, every benchmark's measures (each with Cell the
// benchmark's name and Step its unit) and the groups.
type VerdictMicroCandidate struct {
	VerdictCandidate
	Groups []VerdictMicroGroup `json:"groups,omitempty"`
}

// VerdictMicroGroup is a group of benchmarks summed up.
type VerdictMicroGroup struct {
	Name    string   `json:"name"`
	Unit    string   `json:"unit,omitempty"`
	Benches int      `json:"benches"`
	Slower  int      `json:"slower"`
	Faster  int      `json:"faster"`
	Failed  int      `json:"failed"`
	Median  *float64 `json:"median_change"`
	Lo      *float64 `json:"median_lo"`
	Hi      *float64 `json:"median_hi"`
	Text    string   `json:"text"`
}

// newVerdictMicro lays a micro-benchmark run's analysis out for the
// verdict file.
func newVerdictMicro(m *micro.Analysis) VerdictMicro {
	v := VerdictMicro{Name: m.Name, Command: m.Command, Format: m.Format, Rounds: m.Rounds, RoundsMax: m.RoundsMax, Stopped: m.Stopped,
		Outcome: m.Outcome().String(), Complete: m.Complete(), Problems: m.Problems, Seconds: map[string]float64{}}
	for i, t := range m.Targets {
		v.Seconds[t] = m.Seconds[i]
	}
	for _, c := range m.Candidates {
		vc := VerdictMicroCandidate{VerdictCandidate: newVerdictCandidate(c.Name, c.Verdict)}
		vc.Headline = "Microbench: " + c.Headline()
		for _, r := range c.Rows {
			a := r.Assessment
			vm := VerdictMeasure{Key: a.Measure.Key(), Cell: r.Bench, Measure: a.Measure.Name, Step: r.Unit, Unit: r.Unit,
				Direction: a.Measure.Direction.String(), N: a.N2, Baseline: num(a.Base), Candidate: num(a.Cand),
				Change: num(a.Change), Lo: num(a.Lo), Hi: num(a.Hi), Text: stats.FormatChange(a.Change, a.Lo, a.Hi),
				P: num(a.P), PHolm: num(a.PHolm), Significant: a.Significant, Effect: a.EffectText(),
				Outcome: a.Outcome.String(), Spread: num(a.Spread), Why: a.OutcomeWhy()}
			if a.Bound != nil {
				vm.Bound = a.Bound.String()
				vm.DecisionConfidence, vm.DecisionLo, vm.DecisionHi = num(a.DecisionConfidence), num(a.DecisionLo), num(a.DecisionHi)
				vm.PBound, vm.PBoundHolm = num(a.PBound), num(a.PBoundHolm)
				vm.Reason, vm.Decide, vm.RoundsNeeded = a.Reason, a.Decide(), a.RoundsNeeded
			}
			vc.Measures = append(vc.Measures, vm)
		}
		for _, g := range c.Groups {
			vc.Groups = append(vc.Groups, VerdictMicroGroup{Name: g.Name, Unit: g.Unit, Benches: g.Benches, Slower: g.Slower, Faster: g.Faster,
				Failed: g.Failed, Median: num(g.Median), Lo: num(g.Lo), Hi: num(g.Hi), Text: g.Line()})
		}
		v.Candidates = append(v.Candidates, vc)
	}
	return v
}

// withMicro adds the micro-benchmark runs to a verdict, its outcome the
// analysis's one verdict over the macro and the micro cells.
func withMicro(v *Verdict, a *compare.Analysis) *Verdict {
	for _, m := range a.Micro {
		v.Micro = append(v.Micro, newVerdictMicro(m))
		if !m.Complete() {
			v.Complete = false
		}
	}
	o := a.Outcome()
	v.Outcome, v.Passed = o.String(), o == stats.Pass
	return v
}
