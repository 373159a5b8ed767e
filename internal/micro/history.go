package micro

import (
	"path/filepath"
	"strings"

	"github.com/pgscale/pgscale/internal/stats"
)

// TargetSeries is what a history keeps of one target of a run: every
// measure the analysis compares (each benchmark's measures that every
// target reported in every round), with its value in each round.
type TargetSeries struct {
	Target   Target
	Measures []MeasureValues
}

// MeasureValues is one benchmark's measure on one target, a value per
// round (the geometric mean of the round's repeats, as Analyze takes it).
type MeasureValues struct {
	Bench, Unit string
	// Primary marks the benchmark's primary measure (its time, or what a
	// counted run counted per iteration); Higher a measure that is better
	// higher.
	Primary, Higher bool
	Values          []float64
}

// Name is the measure's name in a history (SeriesName).
func (m MeasureValues) Name() string { return SeriesName(m.Bench, m.Unit, m.Primary) }

// Series returns each target's measures, in the run's target order: the
// values Analyze pairs by round, so that a history follows what a
// comparison judges. A benchmark that some target did not report in every
// round is left out, as Analyze leaves it out.
func (r *Run) Series() []TargetSeries {
	idx := map[string]int{}
	for i, t := range r.Targets {
		idx[t.Name] = i
	}
	ss, _ := collect(r, idx, make([]float64, len(r.Targets)))
	out := make([]TargetSeries, len(r.Targets))
	for ti, t := range r.Targets {
		out[ti].Target = t
		for _, s := range ss {
			out[ti].Measures = append(out[ti].Measures, MeasureValues{Bench: s.bench, Unit: s.unit, Primary: s.primary, Higher: s.higher,
				Values: append([]float64(nil), s.values[ti]...)})
		}
	}
	return out
}

// SeriesName is a benchmark's measure as a history names it, the way a
// bound names it: "micro:BENCH" for its primary measure (its unit is the
// series' unit), "micro:BENCH@UNIT" for another.
func SeriesName(bench, unit string, primary bool) string {
	if primary {
		return Prefix + bench
	}
	return Prefix + bench + "@" + unit
}

// ParseSeriesName reads a series' measure name made by SeriesName, given
// the series' unit: the benchmark, and whether it is the primary measure.
// ok is false for a measure that is not a micro-benchmark's.
func ParseSeriesName(measure, unit string) (bench string, primary, ok bool) {
	rest, ok := strings.CutPrefix(measure, Prefix)
	if !ok || rest == "" {
		return "", false, false
	}
	if b, cut := strings.CutSuffix(rest, "@"+unit); cut && b != "" {
		return b, false, true
	}
	return rest, true, true
}

// SeriesMeasure is the measure a history's micro-benchmark series is
// judged as, the one Analyze judges: named by the benchmark, its step the
// unit. ok is false for a series that is not a micro-benchmark's.
func SeriesMeasure(measure, unit string, higher bool) (m stats.Measure, primary, ok bool) {
	bench, primary, ok := ParseSeriesName(measure, unit)
	if !ok {
		return stats.Measure{}, false, false
	}
	m = stats.Measure{Name: Prefix + bench, Step: unit, Unit: unit, Direction: stats.LowerIsBetter}
	if higher {
		m.Direction = stats.HigherIsBetter
	}
	return m, primary, true
}

// ResolveBounds finds the bound of each measure (SeriesMeasure's, with
// whether it is primary) as a run's analysis does: the most specific
// bound that matches. A bound that matches none of them is an error.
func ResolveBounds(bounds []Bound, ms []stats.Measure, primary []bool) (stats.Bounds, error) {
	return resolve(bounds, ms, primary, "of the series")
}

// Project names the run's benchmarks in a history: the suite's micro
// cell's name, else the base name of the baseline's tree ("microgo" of
// "/src/microgo@main", "pg" of "src:/src/pg@v1").
func (r *Run) Project() string {
	if r.Name != "" {
		return r.Name
	}
	if len(r.Targets) == 0 {
		return "micro"
	}
	spec := r.Targets[0].Spec
	if kind, rest, ok := strings.Cut(spec, ":"); ok && !strings.ContainsAny(kind, "/.~@") {
		spec = rest
		if i := strings.LastIndex(spec, "="); i >= 0 && !strings.Contains(spec[:i], "/") {
			spec = spec[i+1:] // settings:ext=PATH
		}
	}
	if i := strings.IndexAny(spec, "@+,"); i >= 0 {
		spec = spec[:i]
	}
	name := filepath.Base(filepath.Clean(spec))
	if name == "." || name == "/" || name == "" {
		return "micro"
	}
	return name
}
