package compare

import (
	"math"

	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
)

// The checkpoints probe's measure: the WAL a transaction made (the WAL
// inserted over the step, per transaction of the load). A change that
// writes more per row, or dirties more pages, shows there whatever the
// machine's pace; the full-page images after a checkpoint inside a step
// add to it. A step without the probe's evidence, on a server in recovery,
// or whose load wrote no WAL lacks the measure (a change is a ratio, which
// a zero has none of).
func init() {
	registerMeasure(MeasureDef{Name: "wal-bytes/txn", Unit: "B", Direction: stats.LowerIsBetter, Value: func(s *result.Step) float64 {
		if c := s.Probes.Checkpoints(); c != nil && c.BytesPerTxn != nil && *c.BytesPerTxn > 0 {
			return *c.BytesPerTxn
		}
		return math.NaN()
	}})
}
