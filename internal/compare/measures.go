package compare

import (
	"math"
	"strconv"

	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
)

// MeasureDef is a measure an A/B comparison looks at: how to read its value
// from one step of a result file, and which direction is better.
type MeasureDef struct {
	// Name is the measure's name as bounds use it ("tps", "p99").
	Name string
	// Unit is the unit of Value, for display.
	Unit string
	// Direction says which way is better.
	Direction stats.Direction
	// Value reads the measure from a step; NaN when the step lacks it.
	Value func(*result.Step) float64
}

// Measures returns the measures compared per step, in report order:
// throughput, median and 99th percentile latency, and the load generator's
// CPU per transaction.
func Measures() []MeasureDef {
	return []MeasureDef{
		{"tps", "txn/s", stats.HigherIsBetter, func(s *result.Step) float64 { return s.Summary.TPS }},
		{"p50", "ms", stats.LowerIsBetter, func(s *result.Step) float64 { return s.Summary.Latency.P50Ms }},
		{"p99", "ms", stats.LowerIsBetter, func(s *result.Step) float64 { return s.Summary.Latency.P99Ms }},
		{"client-cpu/txn", "µs", stats.LowerIsBetter, func(s *result.Step) float64 {
			if s.Summary.ClientCPU.PerTxnUS <= 0 {
				return math.NaN()
			}
			return s.Summary.ClientCPU.PerTxnUS
		}},
	}
}

// StepLabel names the step of a sweep with n clients as bounds write it:
// "c=16".
func StepLabel(clients int) string { return "c=" + strconv.Itoa(clients) }
