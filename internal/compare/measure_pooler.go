package compare

import (
	"math"

	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
)

// The pooler probe's measures: how long a transaction waited for a
// server connection (the pooler's own wait time per transaction it
// counted) and how many clients waited on average, from its admin
// console's samples. A step without the probe's evidence, whose mapping
// lacks the figure, or in which no client waited lacks the measure (a
// change is a ratio, which a zero has none of).
func init() {
	registerMeasure(MeasureDef{Name: "pooler-wait/txn", Unit: "µs", Direction: stats.LowerIsBetter, Value: func(s *result.Step) float64 {
		if p := s.Probes.Pooler(); p != nil && p.Total.WaitPerTxnUS != nil && *p.Total.WaitPerTxnUS > 0 {
			return *p.Total.WaitPerTxnUS
		}
		return math.NaN()
	}})
	registerMeasure(MeasureDef{Name: "waiting-clients", Unit: "clients", Direction: stats.LowerIsBetter, Value: func(s *result.Step) float64 {
		if p := s.Probes.Pooler(); p != nil && p.Total.ClientsWaiting != nil && p.Total.ClientsWaiting.Mean > 0 {
			return p.Total.ClientsWaiting.Mean
		}
		return math.NaN()
	}})
}
