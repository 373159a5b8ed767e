// Package compare turns result files into comparisons: the measures read
// from each step, rounds paired across the files of one A/B run (or the
// files taken as independent values), the paired or unpaired test, the
// bounds each change is judged against, the verdict per candidate, and the
// noise an A/A run shows. It computes and never touches a server: report
// renders what it returns, and the command line turns a verdict into an
// exit code.
package compare

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
)

// Input is one side of a comparison: a result file and the name it goes by.
type Input struct {
	Name string
	File *result.File
	// Cell, for a file of a suite's cell, is the cell's parameters.
	Cell []Param
	// Path is the file it was read from, when Name is not its path (a
	// target's name): reports look for what the file names beside it
	// (pprof files) from there.
	Path string
}

// Options configures Compare.
type Options struct {
	// Bounds are the limits the measures are judged against.
	Bounds stats.Bounds
	// Stats sets the confidence level.
	Stats stats.Options
	// Unpaired compares the files as independent sets of values even when
	// they come from one A/B run.
	Unpaired bool
	// Interim marks a look of a runner that rounds until decided: only
	// the outcomes are needed (stats.Sequential.Interim), and no
	// differential diagnosis is made.
	Interim bool
	// Say words the remedies the comparison's notes, verdicts and
	// diagnosis name (report's remedy.Say, handed in by the command
	// line); nil leaves them out.
	Say diagnose.Say
}

// Comparison is a comparison of one baseline with one or more candidates,
// step by step and measure by measure, with a verdict per candidate.
type Comparison struct {
	// Baseline and Candidates name the sides.
	Baseline   string
	Candidates []string
	// Workload names what ran.
	Workload string
	// Method is stats.Paired for the rounds of one A/B run,
	// stats.Independent otherwise.
	Method stats.Method
	// Rounds is the number of rounds compared (Paired); RoundsPlanned the
	// number the run planned. Both are 0 for Independent comparisons.
	Rounds, RoundsPlanned int
	// RoundsMax, for a run that rounded until decided, is the most rounds
	// it could take, and Stopped why it stopped ("decided", or the budget
	// that ran out); the outcomes were decided at the look of its last
	// round (Sequential). 0 and "" otherwise.
	RoundsMax  int
	Stopped    string
	Sequential *stats.Sequential
	// Centre names the central statistic of each side that the tables
	// show and the change is of: "geometric mean" of the rounds (paired,
	// whose change is the geometric mean of the per-round ratios) or
	// "median" of the values (unpaired).
	Centre string
	// SliceS is the slice length in seconds of a run in slices; 0 for
	// whole-step turns and Independent comparisons.
	SliceS float64
	// Layouts, for a run whose clusters were re-created every Reshuffle
	// rounds, is the number of cluster layouts the rounds compared ran
	// on: each measure's interval and test rest on them
	// (stats.CompareLayouts). 0 otherwise.
	Layouts, Reshuffle int
	// Incomplete says why rounds or steps are missing; empty when
	// everything planned was measured.
	Incomplete string
	// Rows are the step × measure rows, in sweep and Measures order.
	Rows []Row
	// Verdicts hold one verdict per candidate, in Candidates order.
	Verdicts []stats.Verdict
	// Notes are caveats about the comparison as a whole.
	Notes []string
	// Counted is set when the servers ran under Valgrind (--count): only
	// the counted measures are compared, the time-based ones (Slowed)
	// being slowed by Valgrind out of all meaning. Valgrind names what ran
	// under it: "the servers", "the pooler" (--count pooler: the servers
	// it fronts ran natively) or "the servers and the pooler".
	Counted  bool
	Slowed   []string
	Valgrind string
	// Machine is what disturbed the measurements: other processes, steal,
	// the run queue, the drift between rounds, and the measures that
	// contention may have moved; nil for an interim look.
	Machine *Machine
	// Why holds one differential diagnosis per candidate, in Candidates
	// order: why it is slower or faster, from the evidence both sides
	// recorded (diagnose.Explain).
	Why []diagnose.Differential
	// Findings hold, per candidate, each failed or inconclusive bounded
	// measure with its why, in row order.
	Findings [][]Finding
	// Reach says once what this runner could not decide (bounds that
	// apply only where the spread can decide them); nil when every bound
	// was judged.
	Reach *Reach

	// inputs and rounds are what the comparison was made of, kept to
	// explain it again once a suite judges its measures anew.
	inputs []Input
	rounds []int
	// suiteFamily, once a suite judged the comparison's measures, is how
	// many measures the suite's Holm correction ran over.
	suiteFamily int
	// timeFits are the pooler's time-driven work by client count, for the
	// why (pooler_time.go).
	timeFits map[int]stats.TimeFit
}

// Row is one measure at one step.
type Row struct {
	Measure stats.Measure
	// Base summarises the baseline's values (per round, or per step).
	Base stats.Summary
	// Cells hold one entry per candidate.
	Cells []Cell
}

// Cell is one candidate's side of a row.
type Cell struct {
	// Cand summarises the candidate's values.
	Cand stats.Summary
	// Assessment is the comparison with the baseline, judged against
	// its bound.
	Assessment stats.Assessment
	// Why says, for a bounded measure, why it got its outcome (the
	// assessment's OutcomeWhy) and for a failed or inconclusive one the
	// why of its Finding besides; "" without a bound.
	Why string
}

// Shown says whether the cell is one a matrix of the changes holds: a
// measure with a bound, or one that changed significantly either way
// (more than its smallest change of interest). The measures every reader
// looks for first are always shown when they were compared: throughput,
// and under Valgrind the instructions per transaction of the server and
// of the pooler.
func (row Row) Shown(ci int) bool {
	if ci >= len(row.Cells) {
		return false
	}
	a := row.Cells[ci].Assessment
	switch row.Measure.Name {
	case "tps", "instr/txn", "pooler-instr/txn":
		return true
	}
	return a.Bound != nil || a.Effect == stats.Improved || a.Effect == stats.Regressed
}

// Clients is the client count of the row's step, 0 when it has none.
func (row Row) Clients() int { return clientsOf(row.Measure.Step) }

// Outcome is the comparison's verdict: the worst outcome of any
// candidate's bounded measures, stats.NoBound when none had a bound.
func (r *Comparison) Outcome() stats.Outcome { return worstOf(r.Verdicts) }

// worstOf is the worst outcome of the verdicts.
func worstOf(vs []stats.Verdict) stats.Outcome {
	w := stats.NoBound
	for _, v := range vs {
		w = stats.Worst(w, v.Outcome)
	}
	return w
}

// Headline sums the comparison up in the pooler bot's words, one clause per
// candidate separated by "; ": "Compared patch with master: passed: all 8
// bounded measures within their bounds".
func (r *Comparison) Headline() string {
	parts := make([]string, len(r.Verdicts))
	for i := range r.Verdicts {
		parts[i] = r.CandidateHeadline(i)
	}
	s := strings.Join(parts, "; ")
	if r.Incomplete != "" {
		s += " (incomplete)"
	}
	return s
}

// CandidateHeadline is candidate i's clause of the headline.
func (r *Comparison) CandidateHeadline(i int) string {
	return fmt.Sprintf("Compared %s with %s: %s", r.Candidates[i], r.Baseline, r.Verdicts[i].Headline())
}

// Compare compares inputs[1:] with inputs[0], step by step, over every
// measure of Measures that the steps hold. Files of one A/B run (same
// AB.Run) are paired by round, using only the rounds in which every file
// completed every step; other files are compared as independent sets of
// values, each step of a file counting as one value. A bound that matches
// no measure or has the wrong sign is a *stats.BoundError.
func Compare(inputs []Input, opt Options) (*Comparison, error) {
	if len(inputs) < 2 {
		return nil, fmt.Errorf("a comparison needs a baseline and at least one candidate")
	}
	rep := &Comparison{Baseline: inputs[0].Name, Workload: inputs[0].File.Workload.Name, Method: stats.Independent, Centre: "median"}
	for _, in := range inputs[1:] {
		rep.Candidates = append(rep.Candidates, in.Name)
	}
	rep.Notes = workloadNotes(inputs)
	clients := stepClients(inputs[0].File)
	if len(clients) == 0 {
		return nil, fmt.Errorf("%s has no complete step to compare", inputs[0].Name)
	}
	var rounds, layouts []int
	if run := sameRun(inputs); run != nil && !opt.Unpaired {
		rep.Method, rep.Centre = stats.Paired, "geometric mean"
		rep.RoundsPlanned = run.Rounds
		rep.SliceS = run.SliceS
		rounds = completeRounds(inputs, clients)
		if underValgrind(inputs) {
			var lost []string
			rounds, lost = lostCounts(inputs, clients, rounds)
			rep.Notes = append(rep.Notes, lost...)
		}
		rep.Rounds = len(rounds)
		layouts = roundLayouts(run, rounds)
		if layouts != nil {
			rep.Reshuffle, rep.Layouts = run.Reshuffle, distinct(layouts)
		}
		rep.Notes = append(rep.Notes, serverNotes(inputs, run, opt.Say)...)
		if len(rounds) < run.Rounds {
			rep.Incomplete = fmt.Sprintf("%d of %d rounds complete", len(rounds), run.Rounds)
		}
		if run.RoundsMax > 0 {
			rep.RoundsMax, rep.Stopped = run.RoundsMax, run.Stopped
			rep.Sequential = sequential(run, rep.Rounds, rep.Layouts, opt.Interim)
		}
	} else {
		for _, in := range inputs {
			if !in.File.Complete {
				rep.Incomplete = fmt.Sprintf("%s: %s", in.Name, in.File.Reason)
				break
			}
		}
	}
	for _, in := range inputs[1:] {
		for _, c := range clients {
			if len(stepsOf(in.File, c)) == 0 {
				rep.Notes = append(rep.Notes, fmt.Sprintf("%s has no complete step with %d clients", in.Name, c))
			}
		}
	}

	comps := make([][]stats.Comparison, len(rep.Candidates))
	unsupported := map[string]string{} // measure -> why the machine cannot measure it
	var unsupportedOrder []string
	rep.Counted = underValgrind(inputs)
	if rep.Counted {
		rep.Valgrind = valgrindRan(inputs)
	}
	timeFits := poolerTimeFits(inputs, clients)
	for _, c := range clients {
		for _, md := range Measures() {
			fit, fitted := timeFits[c]
			md = timeSeparated(md, fit, fitted)
			if rep.Counted && !md.Counted {
				if !slices.Contains(rep.Slowed, md.Name) && !allNaN(values(inputs[0].File, c, md, rounds, rep.Method)) {
					rep.Slowed = append(rep.Slowed, md.Name)
				}
				continue
			}
			m := md.Measure(StepLabel(c))
			base := values(inputs[0].File, c, md, rounds, rep.Method)
			if allNaN(base) {
				if why := unsupportedWhy(inputs[0].File, c, md); why != "" && unsupported[md.Name] == "" {
					unsupported[md.Name] = why
					unsupportedOrder = append(unsupportedOrder, md.Name)
				}
				if note := onlyCandidates(inputs, c, md, rounds, rep.Method, opt.Stats); note != "" {
					rep.Notes = append(rep.Notes, m.Key()+": "+note)
				}
				continue
			}
			row := Row{Measure: m, Base: stats.Summarize(finite(base), opt.Stats)}
			for ci, in := range inputs[1:] {
				cand := values(in.File, c, md, rounds, rep.Method)
				var cmp stats.Comparison
				switch {
				case layouts != nil:
					cmp = stats.CompareLayouts(m, base, cand, layouts, opt.Stats)
				case rep.Method == stats.Paired:
					cmp = stats.ComparePaired(m, base, cand, opt.Stats)
				default:
					cmp = stats.CompareUnpaired(m, base, cand, opt.Stats)
				}
				comps[ci] = append(comps[ci], cmp)
				row.Cells = append(row.Cells, Cell{Cand: stats.Summarize(finite(cand), opt.Stats)})
			}
			rep.Rows = append(rep.Rows, row)
		}
	}
	for _, name := range unsupportedOrder {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%s: not supported here (%s)", name, unsupported[name]))
	}
	if rep.Counted {
		rep.Notes = append(rep.Notes, countedNotes(inputs[0].File)...)
		if note := poolerTimeNote(inputs, timeFits, clients); note != "" {
			rep.Notes = append(rep.Notes, note)
		}
	}
	if len(rep.Slowed) > 0 {
		natively := ""
		if rep.Valgrind == poolerAlone {
			natively = ", and the servers it fronts natively"
		}
		rep.Notes = append(rep.Notes, fmt.Sprintf("not compared: %s, slowed by Valgrind (%s ran under callgrind, 20 to 50 times slower than natively%s; the counts above are what Valgrind does not change); their figures are in the result files",
			strings.Join(rep.Slowed, ", "), rep.Valgrind, natively))
	}
	bounds := measuredBounds(rep, opt.Bounds)
	sopt := opt.Stats
	sopt.Sequential = rep.Sequential
	for ci := range rep.Candidates {
		v, err := stats.Evaluate(comps[ci], bounds, sopt)
		if err != nil {
			return nil, err
		}
		sayInstead(&v, opt.Say)
		rep.Verdicts = append(rep.Verdicts, v)
		for ri := range rep.Rows {
			rep.Rows[ri].Cells[ci].Assessment = v.Assessments[ri]
		}
	}
	if !opt.Interim {
		rep.Machine = machineOf(rep, inputs, rounds)
	}
	rep.Reach = reachOf(rep.Verdicts)
	rep.inputs, rep.rounds, rep.timeFits = inputs, rounds, timeFits
	if !opt.Interim {
		rep.explain(opt.Stats, opt.Say)
	}
	rep.findings()
	return rep, nil
}

// countedInstead is the counted measure that decides, on a noisy
// machine, what a time-based one cannot: instructions under Valgrind do
// not move with other processes.
var countedInstead = map[string]string{
	"server-cpu/txn":  "instr/txn",
	"server-user/txn": "instr/txn",
	"pooler-cpu/txn":  "pooler-instr/txn",
}

// sayInstead names, for each inconclusive time-based measure with a counted
// counterpart, that counterpart as another way to decide it, with the
// remedy that counts it in say's words: "a counted measure (--count
// instructions: instr/txn)". Without words for the remedy it names none.
func sayInstead(v *stats.Verdict, say diagnose.Say) {
	remedy := say.Of(diagnose.CountInstructions)
	for i := range v.Assessments {
		a := &v.Assessments[i]
		if counted, ok := countedInstead[a.Measure.Name]; ok && remedy != "" && a.Outcome == stats.Inconclusive {
			a.Instead = "a counted measure (" + remedy + ": " + counted + ")"
		}
	}
}

// sequential is the look a run that rounded until decided is judged at:
// its rounds compared out of its most, or with clusters re-created every
// Reshuffle rounds its layouts out of the most it could begin.
func sequential(run *result.AB, rounds, layouts int, interim bool) *stats.Sequential {
	s := &stats.Sequential{Look: rounds, Max: run.RoundsMax, Interim: interim}
	if run.Reshuffle > 0 {
		s.Look, s.Max = layouts, (run.RoundsMax+run.Reshuffle-1)/run.Reshuffle
	}
	return s
}

// underValgrind reports whether any input's server ran under Valgrind, or any
// step counted instructions (files written before the target recorded
// Valgrind).
func underValgrind(inputs []Input) bool {
	for _, in := range inputs {
		if in.File.Target.Valgrind != nil {
			return true
		}
		for _, s := range in.File.Steps {
			if s.Probes != nil && s.Probes.Instructions() != nil {
				return true
			}
		}
	}
	return false
}

// What ran under Valgrind in a counted comparison (Comparison.Valgrind).
const (
	serversAlone     = "the servers"
	poolerAlone      = "the pooler"
	serversAndPooler = "the servers and the pooler"
)

// valgrindRan names what ran under Valgrind, from the first step that
// counted: the pooler alone when no client backend was counted beside
// it (--count pooler), the servers and the pooler when both were, else
// the servers.
func valgrindRan(inputs []Input) string {
	for _, in := range inputs {
		for _, s := range in.File.Steps {
			if s.Probes == nil || s.Probes.Instructions() == nil {
				continue
			}
			switch ins := s.Probes.Instructions(); {
			case ins.Pooler != nil && len(ins.ByKind) == 0 && ins.ClientBackends == 0:
				return poolerAlone
			case ins.Pooler != nil:
				return serversAndPooler
			}
			return serversAlone
		}
	}
	return serversAlone
}

// countedNotes say what the counted measures count, from the first step
// of f that counted: that syscalls/txn leaves out the clock reads, and
// which caches est-cycles/txn simulated and with which model.
func countedNotes(f *result.File) []string {
	for _, s := range f.Steps {
		if s.Probes == nil || s.Probes.Instructions() == nil {
			continue
		}
		in := s.Probes.Instructions()
		var notes []string
		if in.ClientClockReads != nil {
			notes = append(notes, "syscalls/txn counts the client backends' system calls except the clock reads; clock-reads/txn counts those (clock_gettime, gettimeofday), which natively are vDSO calls that enter no kernel and under Valgrind, which hides the vDSO, are system calls")
		}
		if c := in.Simulated(); c != nil {
			notes = append(notes, fmt.Sprintf("the misses are callgrind's simulation of one process's caches (I1 %s; D1 %s; LL %s) and branch predictor; est-cycles/txn estimates cycles from them with %s", c.I1, c.D1, c.LL, c.Model))
		}
		return notes
	}
	return nil
}

// serverNotes say where the targets of one A/B run ran, when that matters
// to what the interval covers: a candidate on the baseline's cluster with
// its settings set per session has no layout difference; ephemeral
// clusters of their own that were never re-created (one layout recorded;
// files written before layouts were recorded say nothing) keep one the
// interval does not cover, and the remedy that re-creates them in say's
// words.
func serverNotes(inputs []Input, run *result.AB, say diagnose.Say) []string {
	var notes []string
	separate, counted := 0, 0
	for _, in := range inputs {
		t := in.File.Target
		switch {
		case t.SameServerAs != "":
			var set []string
			for k, v := range t.SessionSettings {
				set = append(set, k+"="+v)
			}
			sort.Strings(set)
			how := "the same settings"
			if len(set) > 0 {
				how = strings.Join(set, ", ") + " set per session"
			}
			notes = append(notes, fmt.Sprintf("%s ran on %s's cluster (%s): no cluster layout differs between them", in.Name, t.SameServerAs, how))
		case t.Kind == "ephemeral" && t.Valgrind != nil:
			counted++
		case t.Kind == "ephemeral":
			separate++
		}
	}
	switch note := countedDataNote(run, say); {
	case run.Calibration:
	case counted >= 2 && note != "":
		notes = append(notes, note)
	case counted >= 2 && len(run.Layouts) > 1:
		notes = append(notes, fmt.Sprintf("counted on %s: each made every target's server anew, its data and set-up included, so what is built differently from one cluster to the next (an index's graph, a random sample, a table's physical order) is in the interval; on one cluster the rounds repeat the same count to a few instructions",
			prose.Count(len(run.Layouts), "cluster layout")))
	case counted >= 2 && len(run.Layouts) == 1:
		note := "counted on one cluster per target, kept for the whole run: its rounds repeat the same count, so the interval covers those two clusters only, not what the set-up builds differently on another (an index's graph, a random sample, a table's physical order)"
		if w := say.Of(diagnose.ReshuffleEveryRound); w != "" {
			note += "; " + w + " makes new ones every round"
		}
		notes = append(notes, note)
	case separate >= 2 && len(run.Layouts) == 1:
		note := "the ephemeral targets ran on clusters of their own, kept for the whole run: the interval does not cover the fixed difference two clusters can have (memory and data-directory layout)"
		if w := say.Of(diagnose.Reshuffle); w != "" {
			note += "; " + w + " re-creates them every few rounds"
		}
		notes = append(notes, note)
	}
	return notes
}

// explain makes each candidate's differential diagnosis from the rows'
// assessments and the steps both sides recorded, paired by round; files
// of different runs (unpaired) pair their complete steps in file order.
func (r *Comparison) explain(opt stats.Options, say diagnose.Say) {
	r.Why = nil
	if len(r.inputs) < 2 {
		return
	}
	for ci := range r.Candidates {
		var steps []diagnose.DiffStep
		for _, c := range stepClients(r.inputs[0].File) {
			ds := diagnose.DiffStep{Clients: c, Changes: map[string]diagnose.Change{}}
			for _, row := range r.Rows {
				if row.Measure.Step != StepLabel(c) {
					continue
				}
				a := row.Cells[ci].Assessment
				ds.Changes[row.Measure.Name] = diagnose.Change{Known: !math.IsNaN(a.Change), Base: a.Base, Cand: a.Cand,
					Change: a.Change, Lo: a.Lo, Hi: a.Hi, Significant: a.Significant, Negligible: a.Effect == stats.Negligible,
					P: a.P, PHolm: a.PHolm, Family: r.family(ci)}
			}
			ds.Base, ds.Cand = pairedSteps(r.inputs[0].File, r.inputs[ci+1].File, c, r.rounds, r.Method)
			ds.Layouts = stepLayouts(r.inputs[0].File.AB, r.Method)
			ds.PoolerTime = r.timeFits[c]
			steps = append(steps, ds)
		}
		r.Why = append(r.Why, diagnose.Explain(steps, opt, say))
	}
}

// family is how many measures candidate ci's Holm correction ran over:
// the comparison's, or once a suite judged it, the suite's.
func (r *Comparison) family(ci int) int {
	if r.suiteFamily > 0 {
		return r.suiteFamily
	}
	if ci < len(r.Verdicts) {
		return r.Verdicts[ci].Total
	}
	return 0
}

// StepOutcome is the worst outcome of candidate ci's bounded measures at
// a step ("c=4"): what a suite's row for the step shows.
func (r *Comparison) StepOutcome(ci int, step string) stats.Outcome {
	w := stats.NoBound
	for _, row := range r.Rows {
		if row.Measure.Step == step && ci < len(row.Cells) {
			w = stats.Worst(w, row.Cells[ci].Assessment.Outcome)
		}
	}
	return w
}

// Finding is one failed or inconclusive bounded measure with its why: for
// a failure the differential diagnosis of its step, for an inconclusive
// one why it is undecided and what would decide it.
type Finding struct {
	Assessment stats.Assessment
	Clients    int
	// Why says it in a sentence or two; Flagged is set when other
	// processes' contention differed between the targets in a way that
	// moves this measure (Machine).
	Why     string
	Flagged bool
}

// Line is the finding in one line: "tps@c=4 -33.8% ± 11.3%, bound -5%:
// fail. Slower at 4 clients because ...".
func (f Finding) Line() string {
	s := f.Assessment.String() + ": " + f.Assessment.Outcome.String()
	if f.Why != "" {
		s += ". " + f.Why
	}
	return s
}

// findings makes each candidate's findings from its assessments and
// differential diagnosis.
func (r *Comparison) findings() {
	r.Findings = make([][]Finding, len(r.Candidates))
	for ci, cand := range r.Candidates {
		for _, row := range r.Rows {
			a := row.Cells[ci].Assessment
			row.Cells[ci].Why = sentence(a.OutcomeWhy())
			if a.Outcome != stats.Fail && a.Outcome != stats.Inconclusive {
				continue
			}
			f := Finding{Assessment: a, Clients: clientsOf(row.Measure.Step), Flagged: r.Machine.Flagged(cand, row.Measure.Name)}
			var why []string
			if a.Outcome == stats.Inconclusive {
				why = append(why, sentence(a.Reason))
				if d := a.Decide(); d != "" {
					why = append(why, sentence(d))
				}
			}
			if ci < len(r.Why) {
				for _, st := range r.Why[ci].Steps {
					if st.Clients == f.Clients {
						why = append(why, st.Text)
					}
				}
				for _, c := range r.Why[ci].Counted {
					if c.Clients == f.Clients && c.Measure == row.Measure.Name {
						why = append(why, c.Text)
					}
				}
			}
			if f.Flagged {
				why = append(why, "Other processes' contention, which moves this measure, differed between the targets (see the machine).")
			}
			f.Why = strings.Join(why, " ")
			r.Findings[ci] = append(r.Findings[ci], f)
			if a.Outcome == stats.Fail && f.Why != "" {
				row.Cells[ci].Why += " " + f.Why
			} else if a.Outcome == stats.Inconclusive {
				row.Cells[ci].Why = f.Why
			}
		}
	}
}

// sentence makes a phrase a sentence: capitalised, with a full stop.
func sentence(s string) string {
	if s == "" {
		return ""
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// clientsOf reads the client count of a step label ("c=4"); 0 when it is
// none.
func clientsOf(step string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(step, "c="))
	if err != nil {
		return 0
	}
	return n
}

// onlyCandidates says what candidates measured that the baseline did not
// (a pooler's CPU, when the baseline connects directly): their medians,
// with nothing to compare them with; "" when no candidate has it either.
func onlyCandidates(inputs []Input, clients int, md MeasureDef, rounds []int, method stats.Method, opt stats.Options) string {
	var parts []string
	for _, in := range inputs[1:] {
		v := finite(values(in.File, clients, md, rounds, method))
		if len(v) > 0 {
			parts = append(parts, fmt.Sprintf("%s %.4g %s", in.Name, stats.Summarize(v, opt).Median, md.Unit))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, ", ") + "; the baseline has none to compare with"
}

// unsupportedWhy is why f's steps with the given client count lack the
// measure because the machine cannot measure it; "" when that is not why.
func unsupportedWhy(f *result.File, clients int, md MeasureDef) string {
	if md.Unsupported == nil {
		return ""
	}
	for _, s := range stepsOf(f, clients) {
		if why := md.Unsupported(s); why != "" {
			return why
		}
	}
	return ""
}

// workloadNotes warns when the inputs did not run the same workload.
func workloadNotes(inputs []Input) []string {
	var notes []string
	w0 := inputs[0].File.Workload
	for _, in := range inputs[1:] {
		w := in.File.Workload
		var diff []string
		if w.Name != w0.Name {
			diff = append(diff, fmt.Sprintf("workload %s vs %s", w.Name, w0.Name))
		}
		if w.Protocol != w0.Protocol {
			diff = append(diff, fmt.Sprintf("protocol %s vs %s", w.Protocol, w0.Protocol))
		}
		if w.Scale != w0.Scale {
			diff = append(diff, fmt.Sprintf("scale %d vs %d", w.Scale, w0.Scale))
		}
		if w.DurationS != w0.DurationS || w.Transactions != w0.Transactions {
			diff = append(diff, "step length")
		}
		if len(diff) > 0 {
			notes = append(notes, fmt.Sprintf("%s did not run what %s ran: %s", in.Name, inputs[0].Name, strings.Join(diff, ", ")))
		}
	}
	return notes
}
