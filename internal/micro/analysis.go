package micro

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/pgscale/pgscale/internal/stats"
)

// Options are how a run is judged.
type Options struct {
	// Bounds are micro-benchmark bounds (ParseBound).
	Bounds []Bound
	// Groups are the groups to summarise, each a name prefix or a
	// pattern (* any characters); nil: every benchmark's family, the part
	// of its name before its last "::" or else before its first "/",
	// when two or more benchmarks share it.
	Groups []string
	// GroupUnit is the measure the groups sum up; empty: each
	// benchmark's primary one, its time.
	GroupUnit string
	// Confidence is the level of the intervals; 0: 95 %.
	Confidence float64
	// Interim asks only for the outcomes, as a runner deciding whether
	// to go on does.
	Interim bool
	// Either marks bounds and a group unit written for a run timed or
	// counted alike (a suite file's micro cell, which the suite's count:
	// or --count counts): a bound on a counted measure (instr/op) of a
	// run that counted nothing, or on a measure of the program's own
	// (cpu-ns/op) of a counted run, is left out and said (Unused), not an
	// error, as a macro bound on a measure the run did not take is; the
	// group unit too. A bound without a unit bounds the primary measure
	// either way.
	Either bool
}

// either leaves out of opt the bounds and the group unit of the other
// way of running (Options.Either), and says each.
func either(opt Options, counted bool) (Options, []string) {
	var unused []string
	other := func(unit string) bool {
		if unit == "" {
			return false
		}
		_, c := CountedUnit(unit)
		return c != counted
	}
	why := "this run was timed: counted measures such as instr/op are a counted run's (count: instructions)"
	if counted {
		why = "this run was counted: it measures instr/op and the simulated caches', not the program's own"
	}
	var keep []Bound
	for _, b := range opt.Bounds {
		if other(b.Unit) {
			unused = append(unused, fmt.Sprintf("bound %s: %s", b.Spec, why))
			continue
		}
		keep = append(keep, b)
	}
	opt.Bounds = keep
	if other(opt.GroupUnit) {
		unused = append(unused, fmt.Sprintf("group unit %s (the groups sum up the primary measure): %s", opt.GroupUnit, why))
		opt.GroupUnit = ""
	}
	return opt, unused
}

// Analysis is a micro-benchmark run judged: per candidate, every
// benchmark's measures with their change, bound and outcome, the verdict
// and the group summaries. Every format lays it out.
type Analysis struct {
	// Name is a suite's micro cell's name; empty for pgscale micro.
	Name            string
	Command, Format string
	// Targets are the targets' names, the baseline first.
	Targets []string
	// Counted says what a counted run counted ("instructions", or
	// "instructions,cache") and how, in one sentence; empty for a run
	// whose measures are the program's own.
	Counted string
	// Rounds is the number of complete rounds compared; RoundsMax and
	// Stopped are the run's own (auto).
	Rounds    int
	RoundsMax int
	Stopped   string
	// Problems are what made the run incomplete, one line each, the
	// benchmarks left out because one side did not report them included.
	Problems []string
	// Unused are the bounds and group unit written for the run's other
	// way (Options.Either), one line each.
	Unused []string
	// Seconds is each target's time running the command, summed over
	// the rounds, in Targets' order.
	Seconds []float64
	// Candidates are the comparisons of each candidate with the
	// baseline.
	Candidates []Candidate
	// Stats are the options the benchmarks were judged with (the
	// confidence, the look of a run that rounded until decided), for a
	// suite that judges them again beside its macro cells (Rejudge).
	Stats stats.Options

	groups    []string
	groupUnit string
}

// Rejudge replaces candidate ci's assessments by as, judged again by a
// caller that decided them together with other families (a suite's
// macro cells: Holm's correction over all of them, each family's share
// of alpha), in the order of its rows; the candidate's verdict and groups
// follow from them.
func (a *Analysis) Rejudge(ci int, as []stats.Assessment, alpha float64) {
	c := &a.Candidates[ci]
	for i := range c.Rows {
		c.Rows[i].Assessment = as[i]
	}
	c.Verdict = stats.Tally(stats.Verdict{Assessments: append([]stats.Assessment(nil), as...), Alpha: alpha,
		Sequential: c.Verdict.Sequential, Warnings: c.Verdict.Warnings})
	c.Groups = groups(c.Rows, a.groups, a.groupUnit, a.Stats)
}

// Complete reports whether the run and its analysis had no problems.
func (a *Analysis) Complete() bool { return len(a.Problems) == 0 }

// Outcome is the worst outcome over the candidates.
func (a *Analysis) Outcome() stats.Outcome {
	o := stats.NoBound
	for _, c := range a.Candidates {
		o = stats.Worst(o, c.Verdict.Outcome)
	}
	return o
}

// Candidate is one candidate against the baseline.
type Candidate struct {
	Name string
	// Verdict is the benchmarks' verdict: every measure's effect with
	// Holm's correction over all of them, every bounded one's outcome.
	Verdict stats.Verdict
	// Rows are the measures, in the order of Verdict.Assessments.
	Rows []Row
	// Groups are the group summaries.
	Groups []GroupSummary
}

// Row is one measure of one benchmark.
type Row struct {
	Bench, Unit string
	// Primary marks the benchmark's primary measure, its time.
	Primary bool
	stats.Assessment
}

// Outside are the bounded rows that did not pass.
func (c Candidate) Outside() []Row {
	var out []Row
	for _, r := range c.Rows {
		if r.Outcome == stats.Fail || r.Outcome == stats.Inconclusive {
			out = append(out, r)
		}
	}
	return out
}

// Headline sums the candidate up as the pooler's bot did: "134 of 135
// measures within bounds" (", 1 failed, 0 inconclusive" when some did
// not pass), or without bounds how many of the measures changed.
func (c Candidate) Headline() string {
	v := c.Verdict
	if v.Bounded == 0 {
		return fmt.Sprintf("no bounds given: %d of %d measures changed significantly (%d slower, %d faster)", v.Improved+v.Regressed, v.Total, v.Regressed, v.Improved)
	}
	s := fmt.Sprintf("%d of %d measures within bounds", v.Passed, v.Bounded)
	if v.Failed > 0 || v.Inconclusive > 0 {
		s += fmt.Sprintf(" (%d failed, %d inconclusive)", v.Failed, v.Inconclusive)
	}
	return s
}

// GroupSummary is a group of benchmarks' primary measures (or those of
// Options.GroupUnit) summed up.
type GroupSummary struct {
	Name string
	// Unit is the measure summed up; empty: each benchmark's primary one.
	Unit string
	// Benches counts the group's benchmarks; Slower and Faster those
	// whose time changed significantly (after Holm) for the worse and
	// the better; Failed those past their bound.
	Benches, Slower, Faster, Failed int
	// Median is the median of their changes, Lo and Hi the
	// distribution-free interval on it (infinite for a small group).
	Median, Lo, Hi float64
}

// Line is the group as the bot's comment wrote it: "extended_cached: 15
// of 15 slower, median +3.0% ± 0.8%".
func (g GroupSummary) Line() string {
	var parts []string
	if g.Slower > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d slower", g.Slower, g.Benches))
	}
	if g.Faster > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d faster", g.Faster, g.Benches))
	}
	if len(parts) == 0 {
		parts = append(parts, fmt.Sprintf("none of %d changed significantly", g.Benches))
	}
	if g.Failed > 0 {
		parts = append(parts, fmt.Sprintf("%d past its bound", g.Failed))
	}
	name := g.Name
	if g.Unit != "" {
		name += " (" + g.Unit + ")"
	}
	return fmt.Sprintf("%s: %s, median %s", name, strings.Join(parts, ", "), stats.FormatChange(g.Median, g.Lo, g.Hi))
}

// series is one measure's per-round values on each target.
type series struct {
	bench, unit string
	primary     bool
	higher      bool
	values      [][]float64 // [target][round]
}

// Analyze judges a run: each measure present on every target in every
// round is compared paired by round (stats.ComparePaired), the measures of
// each candidate judged together (stats.Evaluate: Holm's correction over
// them, the three outcomes against the bounds), and the groups summed up.
// It returns a *stats.BoundError when a bound matches nothing or has the
// wrong sign.
func Analyze(run *Run, opt Options) (*Analysis, error) {
	var unused []string
	if opt.Either {
		opt, unused = either(opt, run.Counted != nil)
	}
	a := &Analysis{Name: run.Name, Command: run.Command, Format: run.Format, RoundsMax: run.RoundsMax, Stopped: run.Stopped, groups: opt.Groups, groupUnit: opt.GroupUnit,
		Problems: append([]string(nil), run.Problems...), Rounds: len(run.Rounds), Unused: unused}
	idx := map[string]int{}
	for i, t := range run.Targets {
		a.Targets = append(a.Targets, t.Name)
		idx[t.Name] = i
	}
	if len(a.Targets) < 2 {
		return nil, fmt.Errorf("micro: a comparison needs two targets, the run has %d", len(a.Targets))
	}
	if c := run.Counted; c != nil {
		a.Counted = countedHow(c, len(run.Targets))
	}
	a.Seconds = make([]float64, len(a.Targets))
	ss, problems := collect(run, idx, a.Seconds)
	a.Problems = append(a.Problems, problems...)
	sopt := stats.Options{Confidence: opt.Confidence}
	if run.RoundsMax > 0 {
		sopt.Sequential = &stats.Sequential{Look: len(run.Rounds), Max: run.RoundsMax, Interim: opt.Interim}
	}
	a.Stats = sopt
	for ci := 1; ci < len(a.Targets); ci++ {
		c := Candidate{Name: a.Targets[ci]}
		var cs []stats.Comparison
		var ms []stats.Measure
		var primary []bool
		for _, s := range ss {
			m := stats.Measure{Name: Prefix + s.bench, Step: s.unit, Unit: s.unit, Direction: stats.LowerIsBetter}
			if s.higher {
				m.Direction = stats.HigherIsBetter
			}
			if min, ok := CountedUnit(s.unit); ok && run.Counted != nil {
				m.Counted, m.MinChange = true, min
			}
			cs = append(cs, compareSeries(m, s.values[0], s.values[ci], sopt))
			ms = append(ms, m)
			primary = append(primary, s.primary)
		}
		bounds, err := resolve(opt.Bounds, ms, primary, "of this run")
		if err != nil {
			return nil, err
		}
		v, err := stats.Evaluate(cs, bounds, sopt)
		if err != nil {
			return nil, err
		}
		c.Verdict = v
		for i, as := range v.Assessments {
			c.Rows = append(c.Rows, Row{Bench: ss[i].bench, Unit: ss[i].unit, Primary: ss[i].primary, Assessment: as})
		}
		c.Groups = groups(c.Rows, opt.Groups, opt.GroupUnit, sopt)
		a.Candidates = append(a.Candidates, c)
	}
	return a, nil
}

// compareSeries is stats.ComparePaired, except for a measure that is the
// same on both sides in every round (allocs/op, a count): its change is
// exactly 0, also when the values are 0, which a ratio cannot take.
func compareSeries(m stats.Measure, base, cand []float64, opt stats.Options) stats.Comparison {
	same := len(base) > 0 && len(base) == len(cand)
	for i := range base {
		same = same && base[i] == cand[i] && base[i] == base[0]
	}
	if !same || base[0] > 0 {
		return stats.ComparePaired(m, base, cand, opt)
	}
	conf := opt.Confidence
	if conf == 0 {
		conf = stats.DefaultConfidence
	}
	m.Counted = true // deterministic: nothing to cross-check
	return stats.Comparison{Measure: m, Method: stats.Paired, N1: len(base), N2: len(cand), Base: base[0], Cand: cand[0],
		Change: 0, Lo: 0, Hi: 0, Confidence: conf, P: 1, Test: "equal in every round"}
}

// collect gathers every measure's per-round value on each target (the
// geometric mean of a run's repeats of a benchmark) and the targets'
// times; a benchmark some run does not report is left out with a
// problem line.
func collect(run *Run, idx map[string]int, seconds []float64) ([]series, []string) {
	type key struct{ bench, unit string }
	n := len(run.Targets)
	var order []key
	info := map[key]*series{}
	seen := map[string]int{} // bench → number of (round, target) runs reporting it
	var problems []string
	for _, r := range run.Rounds {
		for _, tr := range r.Runs {
			ti := idx[tr.Target]
			seconds[ti] += tr.Seconds
			reps := map[key][]float64{}
			benches := map[string]bool{}
			for _, s := range tr.Samples {
				benches[s.Name] = true
				for vi, v := range s.Values {
					k := key{s.Name, v.Unit}
					if info[k] == nil {
						info[k] = &series{bench: s.Name, unit: v.Unit, primary: vi == 0, higher: v.Higher, values: make([][]float64, n)}
						order = append(order, k)
					}
					reps[k] = append(reps[k], v.Value)
				}
			}
			for b := range benches {
				seen[b]++
			}
			for k, xs := range reps {
				info[k].values[ti] = append(info[k].values[ti], centre(xs))
			}
		}
	}
	want := 0
	for _, r := range run.Rounds {
		want += len(r.Runs)
	}
	var out []series
	reported := map[string]bool{}
	for _, k := range order {
		s := info[k]
		full := seen[k.bench] == want
		for _, vs := range s.values {
			full = full && len(vs) == len(run.Rounds)
		}
		if !full {
			if !reported[k.bench] {
				reported[k.bench] = true
				problems = append(problems, fmt.Sprintf("%s: %s; left out", k.bench, missing(run, k.bench)))
			}
			continue
		}
		out = append(out, *s)
	}
	return out, problems
}

// missing says which targets did not report a benchmark in every round.
func missing(run *Run, bench string) string {
	count := map[string]int{}
	for _, r := range run.Rounds {
		for _, tr := range r.Runs {
			for _, s := range tr.Samples {
				if s.Name == bench {
					count[tr.Target]++
					break
				}
			}
		}
	}
	var none, some []string
	for _, t := range run.Targets {
		switch count[t.Name] {
		case 0:
			none = append(none, t.Name)
		case len(run.Rounds):
		default:
			some = append(some, t.Name)
		}
	}
	switch {
	case len(none) > 0:
		return "not reported by " + strings.Join(none, ", ")
	case len(some) > 0:
		return "missing from some rounds of " + strings.Join(some, ", ")
	}
	return "a measure is missing from some runs"
}

// centre is the geometric mean of a run's repeats of one measure, or
// their mean when one is not positive.
func centre(xs []float64) float64 {
	s, l := 0.0, 0.0
	pos := true
	for _, x := range xs {
		s += x
		if x > 0 {
			l += math.Log(x)
		} else {
			pos = false
		}
	}
	if pos {
		return math.Exp(l / float64(len(xs)))
	}
	return s / float64(len(xs))
}

// family is a benchmark's default group: the part of its name before
// its last "::", else before its first "/"; "" when it has neither.
func family(bench string) string {
	if i := strings.LastIndex(bench, "::"); i > 0 {
		return bench[:i]
	}
	if i := strings.Index(bench, "/"); i > 0 {
		return bench[:i]
	}
	return ""
}

// groups sums up the primary rows by group.
func groups(rows []Row, given []string, unit string, opt stats.Options) []GroupSummary {
	of := func(r Row) bool { return unit == "" && r.Primary || unit != "" && r.Unit == unit }
	var names []string
	members := map[string][]Row{}
	if given == nil {
		for _, r := range rows {
			if f := family(r.Bench); of(r) && f != "" {
				if members[f] == nil {
					names = append(names, f)
				}
				members[f] = append(members[f], r)
			}
		}
	} else {
		for _, g := range given {
			names = append(names, g)
			re := glob(g)
			for _, r := range rows {
				if of(r) && (re.MatchString(r.Bench) || !strings.ContainsAny(g, "*?") && strings.HasPrefix(r.Bench, g)) {
					members[g] = append(members[g], r)
				}
			}
		}
	}
	var out []GroupSummary
	for _, n := range names {
		ms := members[n]
		if given == nil && len(ms) < 2 {
			continue
		}
		g := GroupSummary{Name: n, Unit: unit, Benches: len(ms), Median: math.NaN(), Lo: math.Inf(-1), Hi: math.Inf(1)}
		var ratios []float64
		for _, r := range ms {
			switch r.Effect {
			case stats.Regressed:
				g.Slower++
			case stats.Improved:
				g.Faster++
			}
			if r.Outcome == stats.Fail {
				g.Failed++
			}
			if !math.IsNaN(r.Change) {
				ratios = append(ratios, 1+r.Change)
			}
		}
		if len(ratios) > 0 {
			s := stats.Summarize(ratios, stats.Options{Confidence: opt.Confidence})
			g.Median, g.Lo, g.Hi = s.Median-1, s.Lo-1, s.Hi-1
		}
		out = append(out, g)
	}
	sort.SliceStable(out, func(i, j int) bool { return given == nil && out[i].Name < out[j].Name })
	return out
}

// Judge is Analyze with the bounds and groups the run recorded (a suite's
// micro cell's), written for the run timed or counted (Options.Either).
func Judge(run *Run) (*Analysis, error) {
	bs, err := ParseBounds(run.Bounds)
	if err != nil {
		return nil, err
	}
	return Analyze(run, Options{Bounds: bs, Groups: run.Groups, GroupUnit: run.GroupUnit, Either: true})
}

// countedHow says how a counted run counted: "instructions per iteration
// under valgrind-3.19.0's callgrind: each benchmark alone, ...".
func countedHow(c *Counted, targets int) string {
	what := "its counts"
	if len(c.Loop) == 2 {
		what = fmt.Sprintf("the counts of its loop (from %s's return to the call of %s)", strings.TrimSuffix(c.Loop[0], "()"), strings.TrimSuffix(c.Loop[1], "()"))
	}
	how := fmt.Sprintf("%s per iteration under %s's callgrind: each benchmark alone, ", c.Events, c.Valgrind)
	timed := "run for T and 2T seconds, divided by the difference of the iterations the program reported (it chooses them by time)"
	switch {
	case len(c.Timed) == 0:
		return how + fmt.Sprintf("the difference of %s at 2N and N iterations divided by N", what)
	case len(c.Timed) >= targets:
		return how + fmt.Sprintf("the difference of %s %s", what, timed)
	}
	return how + fmt.Sprintf("the difference of %s at 2N and N iterations divided by N; in %s %s", what, strings.Join(c.Timed, ", "), timed)
}
