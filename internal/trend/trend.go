// Package trend holds the values of the run history: series of one measure
// across runs, their points, and the change points found in them, judged
// against bounds. It knows no database: the store fills these values and
// the reports render them.
package trend

import (
	"strconv"
	"strings"
	"time"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/micro"
	"github.com/pgscale/pgscale/internal/stats"
)

// Key identifies a series: one measure at one client count of one
// workload on one target label and one machine. A micro-benchmark's
// measure has no client count (0), its workload is "micro:PROJECT" or a
// suite's "SUITE micro:CELL", and its measure is named as a bound names
// it (micro.SeriesName).
type Key struct {
	Workload string
	Label    string
	Clients  int
	Measure  string
	Machine  string // fingerprint
}

// String formats the key as "select-only -s 1 -M prepared | main | c=8 |
// tps | 3f2a1b9c04d5", a micro-benchmark's without the client count
// ("micro:microgo | main | micro:BenchmarkSum/n=1000 | 3f2a1b9c04d5").
func (k Key) String() string {
	parts := []string{k.Workload, k.Label, "c=" + strconv.Itoa(k.Clients), k.Measure, k.Machine}
	if k.Micro() {
		parts = append(parts[:2], parts[3:]...)
	}
	return strings.Join(parts, " | ")
}

// Micro reports whether the series is a micro-benchmark's measure.
func (k Key) Micro() bool {
	return k.Clients == 0 && strings.HasPrefix(k.Measure, micro.Prefix)
}

// Before orders keys for reading: by workload, label and client count,
// then the measures by importance — throughput and latency first, then
// the costs per transaction, in compare.Measures' order (measures it does
// not know after them, by name) — then by machine.
func (k Key) Before(o Key) bool {
	switch {
	case k.Workload != o.Workload:
		return k.Workload < o.Workload
	case k.Label != o.Label:
		return k.Label < o.Label
	case k.Clients != o.Clients:
		return k.Clients < o.Clients
	case k.Measure != o.Measure:
		ri, rj := measureRank(k.Measure), measureRank(o.Measure)
		if ri != rj {
			return ri < rj
		}
		return k.Measure < o.Measure
	}
	return k.Machine < o.Machine
}

// measureRank is a measure's place in compare.Measures; past them for one
// it does not know.
func measureRank(name string) int {
	ms := compare.Measures()
	for i, m := range ms {
		if m.Name == name {
			return i
		}
	}
	return len(ms)
}

// Series is one series of a store, with a summary of its points.
type Series struct {
	// ID identifies the series in its store.
	ID int64
	Key
	// Unit is the unit of the values; HigherIsBetter says which way is
	// better.
	Unit           string
	HigherIsBetter bool
	// Count counts the points; Last is the newest of them.
	Count int
	Last  Point
	// AckedResult is the result of the acknowledged change point that ran
	// last, 0 when none was acknowledged.
	AckedResult int64
}

// Point is one value of a series.
type Point struct {
	// ResultID identifies the result file the value comes from.
	ResultID int64
	// Value is the median over the file's rounds at this step; Lo and Hi
	// bound its confidence interval, NaN where there is none (fewer
	// rounds than an interval needs). N counts the rounds.
	Value, Lo, Hi float64
	N             int
	// Label and Commit are as recorded; Time is when the run started.
	Label, Commit string
	Time          time.Time
}

// Name returns the commit, or the label when no commit was recorded.
func (p Point) Name() string {
	if p.Commit != "" {
		return p.Commit
	}
	return p.Label
}

// History is a series with all its points, in time order.
type History struct {
	Series
	Points []Point
}

// AsMeasure is the series' measure as comparisons and bounds name it: the
// measure at its step ("tps" at "c=8"), a micro-benchmark's as a run's
// analysis names it (micro.SeriesMeasure: the benchmark, at its unit).
func (s Series) AsMeasure() stats.Measure {
	if s.Micro() {
		if m, _, ok := micro.SeriesMeasure(s.Key.Measure, s.Unit, s.HigherIsBetter); ok {
			return m
		}
	}
	dir := stats.LowerIsBetter
	if s.HigherIsBetter {
		dir = stats.HigherIsBetter
	}
	return stats.Measure{Name: s.Key.Measure, Step: compare.StepLabel(s.Clients), Unit: s.Unit, Direction: dir}
}
