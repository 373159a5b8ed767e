package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/stats"
)

// VerdictSchema identifies verdict files; VerdictVersion is bumped on any
// incompatible change.
const (
	VerdictSchema = "pgscale.verdict"
	// VerdictVersion 2: three outcomes (outcome, and per measure its
	// decision), centres in place of medians, the findings and the
	// machine.
	VerdictVersion = 2
)

// Verdict is the JSON verdict file: every measure's numbers, bound and
// status, and the overall verdict a CI job acts on. Relative changes are
// fractions (-0.054 is 5.4 % lower); numbers that could not be computed
// are null.
type Verdict struct {
	Schema  string `json:"schema"`
	Version int    `json:"version"`
	// Outcome is "pass", "fail", "inconclusive" or "no bound" (nothing
	// was bounded): what the exit code says (0, 1, 4, 0). Passed is
	// Outcome "pass".
	Outcome string `json:"outcome"`
	Passed  bool   `json:"passed"`
	// Complete is false when rounds or steps are missing; Reason says why.
	Complete   bool    `json:"complete"`
	Reason     string  `json:"incomplete_reason,omitempty"`
	Headline   string  `json:"headline"`
	Baseline   string  `json:"baseline"`
	Workload   string  `json:"workload"`
	Method     string  `json:"method"` // "paired" or "unpaired"
	Test       string  `json:"test"`
	Confidence float64 `json:"confidence"`
	Rounds     int     `json:"rounds,omitempty"`
	Planned    int     `json:"rounds_planned,omitempty"`
	// RoundsMax and Stopped, for a run that rounded until decided: the
	// most rounds it could take, and why it stopped ("decided", or the
	// budget that ran out); in a suite's verdict Rounds adds up its cells'
	// rounds and Stopped says each cell's "CELL: why".
	RoundsMax int    `json:"rounds_max,omitempty"`
	Stopped   string `json:"stopped,omitempty"`
	// Centre names each side's central value: "geometric mean" of the
	// rounds (paired) or "median" (unpaired).
	Centre string `json:"centre,omitempty"`
	// Rule says what a bounded measure needs to fail (stats.FailRule).
	Rule   string  `json:"fail_rule,omitempty"`
	SliceS float64 `json:"slice_s,omitempty"` // the slices of a run in slices; absent for whole-step turns
	// Layouts, for a run whose clusters were re-created every Reshuffle
	// rounds, is the number of cluster layouts the intervals rest on (each
	// measure's n is then its layouts).
	Layouts    int                `json:"layouts,omitempty"`
	Reshuffle  int                `json:"reshuffle,omitempty"`
	Candidates []VerdictCandidate `json:"candidates"`
	// Machine is what disturbed the measurements (absent in a suite's
	// verdict, whose cells each have their own: SuiteMachine).
	Machine      *VerdictMachine           `json:"machine,omitempty"`
	SuiteMachine map[string]VerdictMachine `json:"suite_machine,omitempty"`
	// SuiteWhy, in a suite's verdict, is each candidate's differential
	// diagnosis per cell where some step changed significantly.
	SuiteWhy map[string][]*VerdictWhy `json:"suite_why,omitempty"`
	// Expect are the decision rules' outcomes (suites).
	Expect []VerdictExpect `json:"expect,omitempty"`
	Notes  []string        `json:"notes,omitempty"`
	// Micro are the micro-benchmark runs (a suite's micro cells, pgscale
	// micro's run), whose outcomes Outcome includes.
	Micro []VerdictMicro `json:"micro,omitempty"`
	// Reach is what this runner could not decide, said once (every
	// format says its text); absent when every bound was judged.
	Reach *VerdictReach `json:"reach,omitempty"`
}

// VerdictReach is compare.Reach: the time-based measures whose bounds
// were left to this runner's spread and that it could not decide (their
// spreads per unit and the smallest change the run's units see at them,
// each a range [least, most]), the counted measures that depend on
// timing left unbounded, what decided instead, and the sentence.
type VerdictReach struct {
	Text         string               `json:"text"`
	Native       []string             `json:"native,omitempty"`
	Spread       []float64            `json:"native_spread,omitempty"`
	See          []float64            `json:"native_detectable,omitempty"`
	Unit         string               `json:"unit,omitempty"`
	Units        int                  `json:"units,omitempty"`
	Timing       []VerdictReachTiming `json:"timing,omitempty"`
	TimingSpread []float64            `json:"timing_spread,omitempty"`
	Decided      string               `json:"decided,omitempty"`
}

// VerdictReachTiming is one counted measure that depends on timing.
type VerdictReachTiming struct {
	Measure string `json:"measure"`
	Clients []int  `json:"clients"`
	Why     string `json:"why"`
}

func newVerdictReach(r *compare.Reach) *VerdictReach {
	if r == nil {
		return nil
	}
	v := &VerdictReach{Text: r.Text, Native: r.Native, Unit: r.Unit, Units: r.Units, Decided: r.Decided}
	if len(r.Native) > 0 {
		v.Spread, v.See = r.Spread[:], finiteOnly(r.See[:])
	}
	for _, t := range r.Timing {
		v.Timing = append(v.Timing, VerdictReachTiming{Measure: t.Measure, Clients: t.Clients, Why: t.Why})
	}
	if len(r.Timing) > 0 {
		v.TimingSpread = r.TimingSpread[:]
	}
	return v
}

// finiteOnly is xs, or nil when one is not finite (JSON has no infinity).
func finiteOnly(xs []float64) []float64 {
	for _, x := range xs {
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return nil
		}
	}
	return xs
}

// VerdictExpect is one decision rule checked on one target (and cell).
type VerdictExpect struct {
	Rule    string   `json:"rule"`
	Target  string   `json:"target"`
	Cell    string   `json:"cell,omitempty"`
	Value   *float64 `json:"value"`
	Checked bool     `json:"checked"`
	Holds   bool     `json:"holds"`
	Text    string   `json:"text"`
}

// VerdictMachine is what disturbed a comparison (compare.Machine).
type VerdictMachine struct {
	Sides []VerdictMachineSide `json:"sides"`
	// Drift is the baseline's throughput drift between rounds (the
	// standard deviation of its per-round log tps at DriftClients).
	Drift        *float64      `json:"drift"`
	DriftClients int           `json:"drift_clients,omitempty"`
	Flags        []VerdictFlag `json:"flags,omitempty"`
	Text         []string      `json:"text,omitempty"`
}

// VerdictMachineSide is one target's view of the machine: shares of all
// its CPUs (null where not measured).
type VerdictMachineSide struct {
	Name     string   `json:"name"`
	Other    *float64 `json:"other_share"`
	Steal    *float64 `json:"steal_share"`
	RunQueue *float64 `json:"run_queue_per_core"`
}

// VerdictFlag is a measure other processes' contention may have moved.
type VerdictFlag struct {
	Candidate string `json:"candidate"`
	Measure   string `json:"measure"`
	Why       string `json:"why"`
}

func newVerdictMachine(m *compare.Machine) *VerdictMachine {
	if m == nil {
		return nil
	}
	vm := &VerdictMachine{Drift: num(m.Drift), DriftClients: m.DriftClients, Text: m.Text, Sides: []VerdictMachineSide{}}
	for _, s := range m.Sides {
		vm.Sides = append(vm.Sides, VerdictMachineSide{Name: s.Name, Other: num(s.Other), Steal: num(s.Steal), RunQueue: num(s.RunQueue)})
	}
	for _, f := range m.Flags {
		vm.Flags = append(vm.Flags, VerdictFlag{f.Candidate, f.Measure, f.Why})
	}
	return vm
}

// VerdictFinding is a failed or inconclusive measure with its why.
type VerdictFinding struct {
	Key     string `json:"key"`
	Cell    string `json:"cell,omitempty"`
	Outcome string `json:"outcome"`
	Why     string `json:"why"`
	Text    string `json:"text"`
	Flagged bool   `json:"contention_differed,omitempty"`
}

// VerdictCandidate is one candidate's verdict against the baseline.
type VerdictCandidate struct {
	Name string `json:"name"`
	// Outcome is the worst outcome of its bounded measures; Passed is
	// Outcome "pass".
	Outcome      string `json:"outcome"`
	Passed       bool   `json:"passed"`
	Headline     string `json:"headline"`
	Total        int    `json:"measures"`
	Bounded      int    `json:"bounded"`
	Pass         int    `json:"pass"`
	Fail         int    `json:"fail"`
	Inconclusive int    `json:"inconclusive"`
	// Undecidable counts the bounds left to this runner's spread that
	// it could not decide (not in Bounded).
	Undecidable int `json:"undecidable,omitempty"`
	Improved    int `json:"improved"`
	Regressed   int `json:"regressed"`
	// Negligible counts the significant changes smaller than their
	// measure's smallest change of interest.
	Negligible int `json:"negligible,omitempty"`
	// Why is the differential diagnosis: why the candidate is slower or
	// faster, from the evidence both targets recorded (absent in a suite's
	// verdict, where each cell has its own: SuiteWhy).
	Why      *VerdictWhy      `json:"why,omitempty"`
	Findings []VerdictFinding `json:"findings,omitempty"`
	Measures []VerdictMeasure `json:"details"`
}

// VerdictWhy is a candidate's differential diagnosis: the steps whose
// throughput changed significantly, each with its causes, what could
// not be judged, and for servers counted under Valgrind the counted
// measures that changed, each with the functions it changed in.
type VerdictWhy struct {
	// Cell names a suite's cell ("" outside suites).
	Cell     string           `json:"cell,omitempty"`
	Text     []string         `json:"text"`
	Steps    []VerdictWhyStep `json:"steps"`
	Unjudged string           `json:"unjudged,omitempty"`
	Counted  []VerdictCounted `json:"counted,omitempty"`
	// Functions are the counted functions that changed consistently,
	// per step and process (diagnose.FunctionTests).
	Functions []VerdictFunctions `json:"functions,omitempty"`
}

// VerdictFunctions is one process's per-function tests at one step: how
// many functions were tested over how many pairs, and those that changed
// (own instructions per transaction, means over the pairs).
type VerdictFunctions struct {
	Clients       int    `json:"clients"`
	Process       string `json:"process"`
	Tested        int    `json:"tested"`
	Pairs         int    `json:"pairs"`
	TimeSeparated bool   `json:"time_separated,omitempty"`
	// Measure is the total the functions' own counts are part of
	// ("instr/txn", "pooler-instr/txn"), TotalChange its relative change
	// as compared (null when it was not) and TotalSignificant whether
	// that was significant.
	Measure          string                  `json:"measure"`
	TotalChange      *float64                `json:"total_change"`
	TotalSignificant bool                    `json:"total_significant"`
	Changed          []VerdictFunctionChange `json:"changed"`
	Text             string                  `json:"text"`
}

// VerdictFunctionChange is one function that changed: its count per
// transaction on each side, the change with its interval, the
// Holm-adjusted p-value, and the change as a share of the total's count
// (of_total) and of the total's change (share: null unless the total
// changed significantly).
type VerdictFunctionChange struct {
	Function  string   `json:"function"`
	Object    string   `json:"object"`
	Baseline  *float64 `json:"baseline"`
	Candidate *float64 `json:"candidate"`
	Delta     *float64 `json:"delta"`
	Lo        *float64 `json:"lo"`
	Hi        *float64 `json:"hi"`
	P         *float64 `json:"p"`
	OfTotal   *float64 `json:"of_total"`
	Share     *float64 `json:"share"`
	Text      string   `json:"text"`
}

// VerdictCounted is one counted measure's change at one step explained
// by the functions it is in: the change per transaction (delta), the
// functions whose own count moved most, and the most specific function
// holding most of it with its callees (inside). Counts are per
// transaction, means over the pairs of steps.
type VerdictCounted struct {
	Clients   int               `json:"clients"`
	Measure   string            `json:"measure"`
	Process   string            `json:"process"` // "server": the client backends
	Change    *float64          `json:"change"`
	Delta     *float64          `json:"delta_per_txn"`
	Functions []VerdictFunction `json:"functions"`
	Inside    *VerdictFunction  `json:"inside,omitempty"`
	Text      string            `json:"text"`
}

// VerdictFunction is one function's part in a counted change: its count
// per transaction on each side, the difference, and its share of the
// measure's change.
type VerdictFunction struct {
	Function  string   `json:"function"`
	Object    string   `json:"object"`
	Baseline  *float64 `json:"baseline"`
	Candidate *float64 `json:"candidate"`
	Delta     *float64 `json:"delta"`
	Share     *float64 `json:"share"`
}

func verdictFunction(f diagnose.FunctionDelta) VerdictFunction {
	return VerdictFunction{Function: f.Function, Object: f.Object, Baseline: num(f.Base), Candidate: num(f.Cand), Delta: num(f.Delta), Share: num(f.Share)}
}

// VerdictWhyStep is one step of a differential diagnosis.
type VerdictWhyStep struct {
	Clients   int               `json:"clients"`
	Direction string            `json:"direction"` // "slower", "faster", or "unchanged" (throughput unchanged, costs changed)
	TPSChange *float64          `json:"tps_change"`
	Causes    []VerdictWhyCause `json:"causes"`
	Text      string            `json:"text"`
}

// VerdictWhyCause is one cause: its kind (work, contention, switches,
// pooler, fast-path, client, cpu-queue), what it names and its words.
type VerdictWhyCause struct {
	Kind string `json:"kind"`
	What string `json:"what"`
	Text string `json:"text"`
}

// newVerdictWhy turns a differential diagnosis into the verdict file's.
func newVerdictWhy(d diagnose.Differential, cell string) *VerdictWhy {
	w := &VerdictWhy{Cell: cell, Text: d.Sentences(), Steps: []VerdictWhyStep{}, Unjudged: d.Unjudged}
	for _, s := range d.Steps {
		st := VerdictWhyStep{Clients: s.Clients, Direction: "faster", TPSChange: num(s.TPS.Change), Causes: []VerdictWhyCause{}, Text: s.Text}
		switch {
		case s.Costs:
			st.Direction = "unchanged"
		case s.Slower:
			st.Direction = "slower"
		}
		for _, c := range s.Causes {
			st.Causes = append(st.Causes, VerdictWhyCause{Kind: c.Kind, What: c.What, Text: c.Text})
		}
		w.Steps = append(w.Steps, st)
	}
	for _, c := range d.Counted {
		vc := VerdictCounted{Clients: c.Clients, Measure: c.Measure, Process: c.Process, Change: num(c.Change.Change), Delta: num(c.Delta),
			Functions: []VerdictFunction{}, Text: c.Text}
		for _, f := range c.Self {
			vc.Functions = append(vc.Functions, verdictFunction(f))
		}
		if c.Inside != nil {
			in := verdictFunction(*c.Inside)
			vc.Inside = &in
		}
		w.Counted = append(w.Counted, vc)
	}
	for _, ft := range d.Functions {
		if len(ft.Changed) == 0 {
			continue
		}
		vf := VerdictFunctions{Clients: ft.Clients, Process: ft.Process, Tested: ft.Tested, Pairs: ft.Pairs, TimeSeparated: ft.TimeSeparated, Text: ft.Text,
			Measure: ft.Measure, TotalSignificant: ft.Total.Known && ft.Total.Significant}
		if ft.Total.Known {
			vf.TotalChange = num(ft.Total.Change)
		}
		for _, f := range ft.Changed {
			vf.Changed = append(vf.Changed, VerdictFunctionChange{Function: f.Function, Object: f.Object, Baseline: num(f.Base), Candidate: num(f.Cand),
				Delta: num(f.Delta), Lo: num(f.Lo), Hi: num(f.Hi), P: num(f.P), OfTotal: num(f.OfTotal), Share: num(f.Share), Text: f.PartText()})
		}
		w.Functions = append(w.Functions, vf)
	}
	return w
}

// VerdictMeasure is one measure at one step.
type VerdictMeasure struct {
	Key string `json:"key"` // as bounds name it: "tps@c=16"
	// Cell, in a suite's verdict, is the measure's cell: "partitions=32".
	Cell      string   `json:"cell,omitempty"`
	Measure   string   `json:"measure"`
	Step      string   `json:"step"`
	Unit      string   `json:"unit"`
	Direction string   `json:"direction"`
	N         int      `json:"n"`               // rounds (paired; layouts when reshuffled) or candidate values (unpaired) used
	Baseline  *float64 `json:"baseline_centre"` // the baseline's central value (Verdict.Centre)
	Candidate *float64 `json:"candidate_centre"`
	Change    *float64 `json:"change"`
	Lo        *float64 `json:"change_lo"`
	Hi        *float64 `json:"change_hi"`
	Text      string   `json:"change_text"` // "-5.4% ± 0.9%"
	P         *float64 `json:"p"`
	PHolm     *float64 `json:"p_holm"`
	// Significant is PHolm ≤ 1 − confidence; Effect is "no change",
	// "improved", "regressed", "negligible" (significant, but smaller
	// than the measure's smallest change of interest, MinChange) or "not
	// significant after Holm" (the interval excludes zero, the corrected
	// test does not).
	Significant bool   `json:"significant"`
	Effect      string `json:"effect"`
	// Bound is the bound that applied, as written ("tps=-5%"); empty
	// when none did.
	Bound string `json:"bound,omitempty"`
	// MinChange is the measure's smallest change of interest (a
	// fraction) when it has one.
	MinChange *float64 `json:"min_change,omitempty"`
	// Outcome is "pass", "fail", "inconclusive" or "no bound". A bounded
	// measure was decided at DecisionConfidence, where its interval is
	// [DecisionLo, DecisionHi] (the intervals' own level, or higher for a
	// suite's cell or a look of a run that rounded until decided); PBound
	// and PBoundHolm are the test against the bound before and after
	// Holm's correction over the bounded measures; Reason says why an
	// inconclusive one is undecided, Decide what would decide it, Spread
	// the per-round (or per-layout) spread of its log ratios and
	// RoundsNeeded the rounds that spread needs (-1: none would).
	Outcome            string   `json:"outcome"`
	DecisionConfidence *float64 `json:"decision_confidence,omitempty"`
	DecisionLo         *float64 `json:"decision_lo,omitempty"`
	DecisionHi         *float64 `json:"decision_hi,omitempty"`
	PBound             *float64 `json:"p_bound,omitempty"`
	PBoundHolm         *float64 `json:"p_bound_holm,omitempty"`
	Reason             string   `json:"reason,omitempty"`
	Decide             string   `json:"decide,omitempty"`
	Spread             *float64 `json:"spread,omitempty"`
	RoundsNeeded       int      `json:"rounds_needed,omitempty"`
	// Timing says why the measure depends on timing at its step (a
	// pooler's count at several clients: event-loop batching); a bound
	// for every step applies to it only where the spread can decide it.
	Timing string `json:"timing,omitempty"`
	// Undecidable is set for a bound that applies only where this
	// runner's spread can decide it, and that it could not in the units
	// the run may take: Outcome is "no bound", Reason says why, and
	// Detectable is the smallest change those units see at its spread.
	Undecidable bool     `json:"undecidable,omitempty"`
	Detectable  *float64 `json:"detectable,omitempty"`
	// Why says why a bounded measure got its outcome, and for a failed
	// or inconclusive one its step's differential diagnosis (the why of
	// its finding); absent without a bound.
	Why      string   `json:"why,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// NewVerdict builds the verdict file's contents from a comparison.
func NewVerdict(r *compare.Comparison) *Verdict {
	v := &Verdict{Schema: VerdictSchema, Version: VerdictVersion, Outcome: r.Outcome().String(), Passed: r.Outcome() == stats.Pass, Complete: r.Incomplete == "",
		Reason: r.Incomplete, Headline: r.Headline(), Baseline: r.Baseline, Workload: r.Workload,
		Method: r.Method.String(), Rounds: r.Rounds, Planned: r.RoundsPlanned, SliceS: r.SliceS, Notes: r.Notes,
		Layouts: r.Layouts, Reshuffle: r.Reshuffle, RoundsMax: r.RoundsMax, Stopped: r.Stopped, Centre: r.Centre, Rule: stats.FailRule,
		Machine: newVerdictMachine(r.Machine), Reach: newVerdictReach(r.Reach)}
	v.Test = stats.UnpairedTest
	if r.Method == stats.Paired {
		v.Test = stats.PairedTest
	}
	if r.Layouts > 0 {
		v.Test = stats.LayoutTest
	}
	for ci, vd := range r.Verdicts {
		v.Confidence = 1 - vd.Alpha
		c := newVerdictCandidate(r.Candidates[ci], vd)
		c.Measures = append(c.Measures, verdictMeasures(r, ci)...)
		c.Findings = verdictFindings(r, ci, "")
		if ci < len(r.Why) {
			c.Why = newVerdictWhy(r.Why[ci], "")
		}
		v.Candidates = append(v.Candidates, c)
	}
	return v
}

// newVerdictCandidate is a candidate's verdict, its measures to come.
func newVerdictCandidate(name string, vd stats.Verdict) VerdictCandidate {
	return VerdictCandidate{Name: name, Outcome: vd.Outcome.String(), Passed: vd.Outcome == stats.Pass, Headline: vd.Headline(),
		Total: vd.Total, Bounded: vd.Bounded, Pass: vd.Passed, Fail: vd.Failed, Inconclusive: vd.Inconclusive, Undecidable: vd.Undecidable,
		Improved: vd.Improved, Regressed: vd.Regressed, Negligible: vd.Negligible, Measures: []VerdictMeasure{}}
}

// verdictFindings are candidate ci's failed and inconclusive measures.
func verdictFindings(r *compare.Comparison, ci int, cell string) []VerdictFinding {
	if ci >= len(r.Findings) {
		return nil
	}
	var out []VerdictFinding
	for _, f := range r.Findings[ci] {
		out = append(out, VerdictFinding{Key: f.Assessment.Measure.Key(), Cell: cell, Outcome: f.Assessment.Outcome.String(),
			Why: f.Why, Text: f.Line(), Flagged: f.Flagged})
	}
	return out
}

// verdictMeasures are candidate ci's measures of a comparison.
func verdictMeasures(r *compare.Comparison, ci int) []VerdictMeasure {
	var out []VerdictMeasure
	for _, row := range r.Rows {
		a := row.Cells[ci].Assessment
		m := VerdictMeasure{Why: row.Cells[ci].Why, Key: a.Measure.Key(), Measure: a.Measure.Name, Step: a.Measure.Step, Unit: a.Measure.Unit,
			Direction: a.Measure.Direction.String(), N: a.N2, Baseline: num(a.Base), Candidate: num(a.Cand),
			Change: num(a.Change), Lo: num(a.Lo), Hi: num(a.Hi), Text: stats.FormatChange(a.Change, a.Lo, a.Hi),
			P: num(a.P), PHolm: num(a.PHolm), Significant: a.Significant, Effect: a.EffectText(),
			Outcome: a.Outcome.String(), Spread: num(a.Spread)}
		if a.Bound != nil {
			m.Bound = a.Bound.String()
			m.DecisionConfidence, m.DecisionLo, m.DecisionHi = num(a.DecisionConfidence), num(a.DecisionLo), num(a.DecisionHi)
			m.PBound, m.PBoundHolm = num(a.PBound), num(a.PBoundHolm)
			m.Reason, m.Decide, m.RoundsNeeded = a.Reason, a.Decide(), a.RoundsNeeded
		}
		if a.Measure.MinChange > 0 {
			m.MinChange = num(a.Measure.MinChange)
		}
		m.Timing, m.Undecidable = a.Measure.Timing, a.Undecidable
		if a.Undecidable {
			m.Detectable = num(a.Detectable)
		}
		for _, w := range a.Warnings {
			var sw *stats.Warning
			if errors.As(w, &sw) && sw.Kind == stats.Unpaired {
				continue
			}
			m.Warnings = append(m.Warnings, w.Error())
		}
		out = append(out, m)
	}
	return out
}

// NewSuiteVerdict builds a suite's verdict: every measure of every
// compared cell, judged suite-wide, with its cell.
func NewSuiteVerdict(s *compare.Suite) *Verdict {
	v := &Verdict{Schema: VerdictSchema, Version: VerdictVersion, Outcome: s.Outcome().String(), Passed: s.Outcome() == stats.Pass, Complete: s.Incomplete == "",
		Reason: s.Incomplete, Headline: s.Headline(), Baseline: s.Baseline, Workload: "suite " + s.Name,
		Method: stats.Paired.String(), Test: stats.PairedTest, Notes: suiteNotes(s), Centre: "geometric mean", Rule: stats.FailRule,
		Reach: newVerdictReach(s.Reach)}
	var stops []string
	for _, cell := range s.Cells {
		if c := cell.Comparison; c != nil && c.RoundsMax > 0 {
			v.Rounds += c.Rounds
			v.RoundsMax = max(v.RoundsMax, c.RoundsMax)
			if c.Stopped != "" {
				stops = append(stops, fmt.Sprintf("%s: %s", cell.Key, c.Stopped))
			}
		}
	}
	v.Stopped = strings.Join(stops, "; ")
	for _, cell := range s.Cells {
		if cell.Comparison != nil && cell.Comparison.Machine != nil {
			if v.SuiteMachine == nil {
				v.SuiteMachine = map[string]VerdictMachine{}
			}
			v.SuiteMachine[cell.Key] = *newVerdictMachine(cell.Comparison.Machine)
		}
	}
	for ci, vd := range s.Verdicts {
		v.Confidence = 1 - vd.Alpha
		c := newVerdictCandidate(s.Candidates[ci], vd)
		c.Negligible = 0 // a suite's tallies, as before: the cells' details carry the effect
		for _, cell := range s.Cells {
			if cell.Comparison == nil {
				continue
			}
			for _, m := range verdictMeasures(cell.Comparison, ci) {
				m.Cell = cell.Key
				c.Measures = append(c.Measures, m)
			}
			c.Findings = append(c.Findings, verdictFindings(cell.Comparison, ci, cell.Key)...)
			if w := cell.Comparison.Why; ci < len(w) && (len(w[ci].Steps) > 0 || len(w[ci].Counted) > 0 || len(w[ci].ChangedFunctions()) > 0) {
				if v.SuiteWhy == nil {
					v.SuiteWhy = map[string][]*VerdictWhy{}
				}
				v.SuiteWhy[s.Candidates[ci]] = append(v.SuiteWhy[s.Candidates[ci]], newVerdictWhy(cell.Comparison.Why[ci], cell.Key))
			}
		}
		v.Candidates = append(v.Candidates, c)
	}
	for _, o := range s.Outcomes {
		v.Expect = append(v.Expect, VerdictExpect{Rule: o.Spec, Target: o.Target, Cell: o.Cell, Value: num(o.Actual), Checked: o.Checked, Holds: o.Holds, Text: o.String()})
	}
	return v
}

// writeVerdict writes the verdict file's JSON.
func writeVerdict(w io.Writer, d *Doc) error {
	switch d.Kind() {
	case KindSuite:
		return writeJSON(w, withMicro(NewSuiteVerdict(d.Suite), d.Analysis))
	case KindComparison:
		return writeJSON(w, withMicro(NewVerdict(d.Comparison), d.Analysis))
	case KindMicro:
		m := d.Micro[0]
		v := &Verdict{Schema: VerdictSchema, Version: VerdictVersion, Complete: true, Headline: "micro-benchmarks " + d.Analysis.Outcome().Verdict(),
			Baseline: m.Targets[0], Workload: "micro", Method: stats.Paired.String(), Test: stats.PairedTest, Centre: "geometric mean", Rule: stats.FailRule,
			Outcome: stats.NoBound.String(), Candidates: []VerdictCandidate{}, Rounds: m.Rounds, RoundsMax: m.RoundsMax, Stopped: m.Stopped}
		if len(m.Candidates) > 0 {
			v.Confidence = 1 - m.Candidates[0].Verdict.Alpha
		}
		return writeJSON(w, withMicro(v, d.Analysis))
	}
	return needComparison("verdict")
}

// writeJSON writes v as indented JSON, with <, > and & as they are.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// num returns a pointer to x, or nil when x is not finite (JSON has no NaN
// or infinity).
func num(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}
