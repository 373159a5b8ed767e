package compare

import (
	"fmt"
	"math"
	"strings"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
)

// Machine is what disturbed a comparison's measurements: per target the
// share of the machine other processes took, the hypervisor's steal and
// the run queue over the steps compared, the baseline's drift in speed
// from round to round, and the measures that other processes' contention
// moves, flagged where that contention differed between a candidate and
// the baseline. Each measure's own spread is in its assessment
// (stats.Assessment.Spread).
type Machine struct {
	Sides []MachineSide
	// Drift is the baseline's throughput drift between rounds: the
	// standard deviation of its per-round log tps at DriftClients (its
	// first client count); NaN with fewer than 2 rounds.
	Drift        float64
	DriftClients int
	// Flags are the measures flagged, per candidate.
	Flags []MachineFlag
	// Text says all of it, one sentence each.
	Text []string
}

// MachineSide is one target's view of the machine, means over its steps
// compared; NaN where not measured (other processes and the run queue
// need the process probe, that is whole-step turns; steal comes from the
// probe or the slice meter).
type MachineSide struct {
	Name                   string
	Other, Steal, RunQueue float64
}

// MachineFlag is a measure whose change other processes' contention may
// have made: Why says how the contention differed.
type MachineFlag struct {
	Candidate, Measure, Why string
}

// Thresholds of a difference in contention between targets that flags the
// measures it moves: 5 points of the machine taken by other processes
// (context switches per transaction rise as a busy machine preempts the
// server and the pooler), 1 point of steal (CPU time per transaction
// counts what a stolen cycle slowed).
const (
	flagOther = 0.05
	flagSteal = 0.01
)

// contended are the measures other processes' contention moves: by a
// busier machine (switches) and by steal (CPU times).
var (
	movedByOthers = []string{"server-ctx/txn", "pooler-ctx/txn"}
	movedBySteal  = []string{"server-cpu/txn", "server-user/txn", "server-sys/txn", "pooler-cpu/txn", "client-cpu/txn"}
)

// machineOf measures the machine over the steps the comparison used.
func machineOf(r *Comparison, inputs []Input, rounds []int) *Machine {
	m := &Machine{Drift: math.NaN()}
	clients := stepClients(inputs[0].File)
	for _, in := range inputs {
		side := MachineSide{Name: in.Name, Other: math.NaN(), Steal: math.NaN(), RunQueue: math.NaN()}
		var other, steal, rq []float64
		for _, c := range clients {
			for _, s := range usedSteps(in.File, c, rounds, r.Method) {
				fg := diagnose.Compute(*s)
				if fg.HasHost {
					other = append(other, fg.Elsewhere())
					rq = append(rq, fg.RunQueuePerCore)
				}
				if v, ok := StealShare(*s); ok {
					steal = append(steal, v)
				}
			}
		}
		side.Other, side.Steal, side.RunQueue = mean(other), mean(steal), mean(rq)
		m.Sides = append(m.Sides, side)
	}
	if len(clients) > 0 && r.Method == stats.Paired {
		m.DriftClients = clients[0]
		var logs []float64
		for _, s := range usedSteps(inputs[0].File, clients[0], rounds, r.Method) {
			if s.Summary.TPS > 0 {
				logs = append(logs, math.Log(s.Summary.TPS))
			}
		}
		if len(logs) >= 2 {
			m.Drift = stats.Summarize(logs, stats.Options{}).StdDev
		}
	}
	base := m.Sides[0]
	for ci, cand := range m.Sides[1:] {
		name := r.Candidates[ci]
		if d := cand.Other - base.Other; math.Abs(d) >= flagOther {
			why := fmt.Sprintf("other processes took %s of the machine during %s's steps and %s during %s's", pct(cand.Other), name, pct(base.Other), r.Baseline)
			for _, ms := range movedByOthers {
				if r.hasRow(ms) {
					m.Flags = append(m.Flags, MachineFlag{name, ms, why})
				}
			}
		}
		if d := cand.Steal - base.Steal; math.Abs(d) >= flagSteal {
			why := fmt.Sprintf("the hypervisor stole %s of the machine during %s's steps and %s during %s's", pct(cand.Steal), name, pct(base.Steal), r.Baseline)
			for _, ms := range movedBySteal {
				if r.hasRow(ms) {
					m.Flags = append(m.Flags, MachineFlag{name, ms, why})
				}
			}
		}
	}
	m.Text = m.words()
	return m
}

// words says what the machine did, in sentences.
func (m *Machine) words() []string {
	var parts []string
	for _, s := range m.Sides {
		var what []string
		if !math.IsNaN(s.Other) {
			what = append(what, "other processes "+pct(s.Other))
		}
		if !math.IsNaN(s.Steal) {
			what = append(what, "steal "+pct(s.Steal))
		}
		if !math.IsNaN(s.RunQueue) {
			what = append(what, fmt.Sprintf("run queue %.2f per core", s.RunQueue))
		}
		if len(what) > 0 {
			parts = append(parts, s.Name+": "+strings.Join(what, ", "))
		}
	}
	var out []string
	if len(parts) > 0 {
		out = append(out, "the machine during the steps compared (shares of all its CPUs): "+strings.Join(parts, "; "))
	}
	if !math.IsNaN(m.Drift) {
		out = append(out, fmt.Sprintf("the baseline's throughput at %s moved ±%.1f%% from round to round (drift the pairing by round cancels)", prose.Count(m.DriftClients, "client"), 100*m.Drift))
	}
	by := map[string][]string{}
	var order []string
	for _, f := range m.Flags {
		k := f.Candidate + "\x00" + f.Why
		if by[k] == nil {
			order = append(order, k)
		}
		by[k] = append(by[k], f.Measure)
	}
	for _, k := range order {
		cand, why, _ := strings.Cut(k, "\x00")
		out = append(out, fmt.Sprintf("%s: %s move with other processes' contention, which differed between the targets (%s): their changes may be the machine's, not %s's", cand, strings.Join(by[k], ", "), why, cand))
	}
	return out
}

// Flagged reports whether a candidate's measure is flagged.
func (m *Machine) Flagged(candidate, measure string) bool {
	if m == nil {
		return false
	}
	for _, f := range m.Flags {
		if f.Candidate == candidate && f.Measure == measure {
			return true
		}
	}
	return false
}

// hasRow reports whether the comparison has a row of the measure.
func (r *Comparison) hasRow(measure string) bool {
	for _, row := range r.Rows {
		if row.Measure.Name == measure {
			return true
		}
	}
	return false
}

// usedSteps are f's steps with c clients the comparison used: those of its
// rounds (paired), or every complete one.
func usedSteps(f *result.File, c int, rounds []int, method stats.Method) []*result.Step {
	steps := stepsOf(f, c)
	if method != stats.Paired {
		return steps
	}
	in := map[int]bool{}
	for _, r := range rounds {
		in[r] = true
	}
	var out []*result.Step
	for _, s := range steps {
		if in[s.Round] {
			out = append(out, s)
		}
	}
	return out
}

// StealShare is the machine's steal time during the step, as a share of
// its time on every CPU: from the process probe with whole-step turns,
// from the slice meter in slices; false when neither measured it.
func StealShare(s result.Step) (float64, bool) {
	if s.Probes != nil && s.Probes.Process() != nil && s.Probes.Process().Host.BusyShare > 0 {
		return s.Probes.Process().Host.StealShare, true
	}
	if s.Costs != nil {
		return s.Costs.HostStealShare, true
	}
	return 0, false
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func pct(x float64) string {
	if x < 0.001 {
		return "<0.1%"
	}
	return fmt.Sprintf("%.1f%%", 100*x)
}
