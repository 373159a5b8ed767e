package compare

import (
	"math"
	"sort"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/flame"
	"github.com/pgscale/pgscale/internal/micro"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
)

// Analysis is everything a report shows, computed once from result files:
// what each file says on its own (its steps' figures and verdicts, a
// sweep's diagnosis and knee, each measure's centre per client count), the
// comparison of the files, the noise of an A/A run or a suite's
// comparison of its cells, and the flame graphs of the profiles the files
// name. Every format lays it out and computes nothing of its own, so that
// a rule is decided once (docs/architecture.md).
type Analysis struct {
	Files      []FileAnalysis
	Comparison *Comparison
	Noise      *Noise
	Suite      *Suite
	// Micro are micro-benchmark runs' analyses: pgscale micro's, or a
	// suite's micro cells'.
	Micro []*micro.Analysis
	// Flames are the flame graphs of the files' profiles, each file's and
	// the differential ones of A/B runs' candidates, indexed by Files
	// (nil for an analysis made without Analyze).
	Flames *flame.Set
}

// Compared is what a command compared of the files, which their analysis
// holds beside each file's own: the comparison (an A/B run's, pgscale
// compare's), an A/A run's noise, a suite's comparison of its cells,
// micro-benchmark runs' analyses.
type Compared struct {
	Comparison *Comparison
	Noise      *Noise
	Suite      *Suite
	Micro      []*micro.Analysis
}

// Outcome is the one verdict over everything the analysis compares: the
// worst of the comparison's (or the suite's) outcome and every
// micro-benchmark run's.
func (a *Analysis) Outcome() stats.Outcome {
	o := stats.NoBound
	switch {
	case a.Suite != nil:
		o = a.Suite.Outcome()
	case a.Comparison != nil:
		o = a.Comparison.Outcome()
	}
	for _, m := range a.Micro {
		o = stats.Worst(o, m.Outcome())
	}
	return o
}

// Analyze makes the analysis of files and of what was compared of them:
// each file on its own, what c holds, and the flame graphs of the
// profiles the files name (read here, once).
func Analyze(files []Input, c Compared) *Analysis {
	a := &Analysis{Files: analyzeFiles(files), Comparison: c.Comparison, Noise: c.Noise, Suite: c.Suite, Micro: c.Micro}
	a.Flames = a.flames()
	return a
}

// analyzeFiles is each file's analysis on its own.
func analyzeFiles(files []Input) []FileAnalysis {
	var out []FileAnalysis
	for _, in := range files {
		out = append(out, AnalyzeFile(in))
	}
	return out
}

// FileAnalysis is what one result file says on its own.
type FileAnalysis struct {
	Input
	// Rescaled is File with every step's speedup and efficiency against
	// the sweep's baseline step (diagnose.Rescaled): the steps a report
	// shows.
	Rescaled *result.File
	// Steps are the analysis of each of Rescaled's steps, in order.
	Steps []StepAnalysis
	// Diagnosis is the sweep's diagnosis (the knee, the peak, the
	// paragraph) of a file that is no part of an A/B run; nil for an A/B
	// run's files, whose client counts repeat once per round, and for a
	// file without steps.
	Diagnosis *result.Diagnosis
	// Scaling is the scaling analysis by client count (diagnose.ScalingOf).
	Scaling []diagnose.ScalingStep
	// PerCPU says Rescaled's speedup and efficiency are of throughput per
	// CPU-second the system had (each step's TPSPerCPU), not of
	// throughput: other processes took the machine's CPU unevenly across
	// its steps (diagnose.PerCPUSecond).
	PerCPU bool
	// Rules are the outcomes of the decision rules the file records, in
	// order; a rule that no longer parses is a line of its own.
	Rules []RuleLine
	// Points are, per client count in order, each measure's values over
	// the file's complete steps of that count (its rounds) summarised,
	// with the knee and the peak of their throughput.
	Points []Point
	// Knee and Peak are the client counts where throughput stops growing
	// and is highest: the sweep's diagnosis's, or for an A/B file those of
	// the points' central throughput; 0 when there is none.
	Knee, Peak int
	// Unnamed are the objects whose functions the steps' profiles could
	// not name, each once, and why (diagnose.UnnamedOf).
	Unnamed []diagnose.UnnamedCode
	// Cores are the CPUs of the machine the server ran on (the process
	// probe's count, else the load generator's machine), which perfect
	// scaling bends at (StepAnalysis.IdealSpeedup); 0 when not known.
	Cores int
}

// StepAnalysis is one step's figures and verdict.
type StepAnalysis struct {
	Figures diagnose.Figures
	// Verdict is the step's bottleneck verdict, judged against the first
	// step of its round (for a sweep, its first step): the one rule every
	// report uses.
	Verdict result.StepVerdict
	// Values are the step's value of each measure it has (Measures), by
	// name.
	Values map[string]float64
	// TPSPerCPU is the step's throughput per CPU-second the system had
	// (diagnose.PerCPUSecond); 0 when not measured.
	TPSPerCPU float64
	// Outages say what each of the step's outages was, in its order
	// (diagnose.OutageLine).
	Outages []string
	// IdealSpeedup is perfect scaling from the sweep's baseline step to
	// this one on the machine's cores (diagnose.IdealSpeedup), which the
	// speed-up chart draws; 0 outside a sweep's diagnosis.
	IdealSpeedup float64
	// Knee and Peak mark a sweep's knee and peak step (a peak only among
	// several steps); Baseline the step its speedup and efficiency are
	// against, when that is not the first (diagnose.Baseline).
	Knee, Peak, Baseline bool
}

// Marks are what the step is in its sweep's diagnosis, as every format
// marks it: "knee", "peak", "baseline of speedup and efficiency".
func (sa StepAnalysis) Marks() []string {
	var marks []string
	if sa.Knee {
		marks = append(marks, "knee")
	}
	if sa.Peak {
		marks = append(marks, "peak")
	}
	if sa.Baseline {
		marks = append(marks, "baseline of speedup and efficiency")
	}
	return marks
}

// Point is one client count of a file: each measure's summary over the
// file's complete steps of that count (stats.Summarize: GeoMean is the
// central value every report shows), their values in file order, and how
// many steps of the count were cut short and left out.
type Point struct {
	Clients  int
	Measures map[string]stats.Summary
	Values   map[string][]float64
	LeftOut  int
	// Upstreams are where the target's statements went over those steps,
	// when several servers were behind it (a primary and its replicas);
	// nil otherwise.
	Upstreams []UpstreamShare
}

// Centre is the point's central value of a measure: the geometric mean of
// its rounds; NaN when it has none.
func (p Point) Centre(measure string) float64 {
	if s, ok := p.Measures[measure]; ok {
		return s.GeoMean
	}
	return math.NaN()
}

// RuleLine is a decision rule's outcome, or why it could not be read.
type RuleLine struct {
	Outcome *ExpectOutcome
	Err     string
}

// AnalyzeFile makes one file's analysis.
func AnalyzeFile(in Input) FileAnalysis {
	f := diagnose.Rescaled(in.File)
	fa := FileAnalysis{Input: in, Rescaled: f, Scaling: diagnose.ScalingOf(f.Steps)}
	fa.Steps = analyzeSteps(f)
	figs := make([]diagnose.Figures, len(fa.Steps))
	for i, sa := range fa.Steps {
		figs[i] = sa.Figures
	}
	fa.Unnamed = diagnose.UnnamedOf(figs)
	per, use := diagnose.PerCPUSecond(f.Steps)
	fa.PerCPU = use
	for i := range fa.Steps {
		fa.Steps[i].TPSPerCPU = per[i]
	}
	if f.AB == nil {
		fa.Diagnosis = diagnose.Sweep(f)
	}
	for _, spec := range f.Expect {
		e, err := ParseExpectation(spec)
		if err != nil {
			fa.Rules = append(fa.Rules, RuleLine{Err: err.Error()})
			continue
		}
		for _, o := range Check(f, []Expectation{e}) {
			o.Target = ""
			fa.Rules = append(fa.Rules, RuleLine{Outcome: &o})
		}
	}
	fa.Points = points(f)
	if d := fa.Diagnosis; d != nil && d.Baseline < len(f.Steps) {
		fa.Cores = f.Environment.CPUs
		if c := fa.Steps[d.Baseline].Figures.CPUs; c > 0 {
			fa.Cores = c // the server's machine, as the process probe saw it
		}
		for i := range fa.Steps {
			fa.Steps[i].IdealSpeedup = diagnose.IdealSpeedup(f.Steps[i].Clients, f.Steps[d.Baseline].Clients, fa.Cores)
		}
	}
	addUpstreams(fa.Points, f)
	if d := fa.Diagnosis; d != nil {
		if d.Knee >= 0 {
			fa.Knee = f.Steps[d.Knee].Clients
			fa.Steps[d.Knee].Knee = true
		}
		if d.Peak >= 0 {
			fa.Peak = f.Steps[d.Peak].Clients
			fa.Steps[d.Peak].Peak = len(f.Steps) > 1
		}
		if d.Baseline > 0 && d.Baseline < len(fa.Steps) {
			fa.Steps[d.Baseline].Baseline = true
		}
	} else {
		fa.Knee, fa.Peak = pointsKnee(fa.Points)
	}
	return fa
}

// AnalyzeStep is one step's analysis on its own, as a run prints it when
// the step ends: judged against itself, as the first step of a sweep is.
func AnalyzeStep(s result.Step) StepAnalysis {
	f := &result.File{Steps: []result.Step{s}}
	return analyzeSteps(f)[0]
}

// analyzeSteps is every step's figures, values and verdict, each judged
// against the first step of its round.
func analyzeSteps(f *result.File) []StepAnalysis {
	out := make([]StepAnalysis, len(f.Steps))
	first := map[int]int{}
	for i, s := range f.Steps {
		out[i].Figures = diagnose.ComputeIn(f, s)
		if _, ok := first[s.Round]; !ok {
			first[s.Round] = i
		}
	}
	defs := Measures()
	for i := range f.Steps {
		s := &f.Steps[i]
		out[i].Verdict = diagnose.Step(out[i].Figures, out[first[s.Round]].Figures)
		for _, o := range s.Outages {
			out[i].Outages = append(out[i].Outages, diagnose.OutageLine(o))
		}
		out[i].Values = map[string]float64{}
		for _, md := range defs {
			if v := md.Value(s); !math.IsNaN(v) && !math.IsInf(v, 0) {
				out[i].Values[md.Name] = v
			}
		}
	}
	return out
}

// points summarises every measure per client count over the file's
// complete steps.
func points(f *result.File) []Point {
	var order []int
	by := map[int]*Point{}
	defs := Measures()
	for i := range f.Steps {
		s := &f.Steps[i]
		p := by[s.Clients]
		if p == nil {
			p = &Point{Clients: s.Clients, Measures: map[string]stats.Summary{}, Values: map[string][]float64{}}
			by[s.Clients] = p
			order = append(order, s.Clients)
		}
		if !s.Complete {
			p.LeftOut++
			continue
		}
		for _, md := range defs {
			if v := md.Value(s); !math.IsNaN(v) && !math.IsInf(v, 0) {
				p.Values[md.Name] = append(p.Values[md.Name], v)
			}
		}
	}
	sort.Ints(order)
	out := make([]Point, 0, len(order))
	for _, c := range order {
		p := by[c]
		for name, vs := range p.Values {
			p.Measures[name] = stats.Summarize(vs, stats.Options{})
		}
		out = append(out, *p)
	}
	return out
}

// pointsKnee is the knee and the peak of the points' central throughput
// (diagnose.Knee over them, as over a sweep's steps).
func pointsKnee(ps []Point) (knee, peak int) {
	var steps []result.Step
	for _, p := range ps {
		if tps := p.Centre("tps"); !math.IsNaN(tps) {
			steps = append(steps, result.Step{Clients: p.Clients, Complete: true, Summary: result.Summary{TPS: tps}})
		}
	}
	if k := diagnose.Knee(steps); k >= 0 {
		knee = steps[k].Clients
	}
	best := -1
	for i, s := range steps {
		if best < 0 || s.Summary.TPS > steps[best].Summary.TPS {
			best = i
		}
	}
	if best >= 0 {
		peak = steps[best].Clients
	}
	return knee, peak
}

// Point returns the file's point at a client count, and whether it has
// one.
func (fa FileAnalysis) Point(clients int) (Point, bool) {
	for _, p := range fa.Points {
		if p.Clients == clients {
			return p, true
		}
	}
	return Point{}, false
}
