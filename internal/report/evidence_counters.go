package report

import (
	"fmt"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/result"
)

func init() { registerWriter(probeid.Counters, writeCounters) }

// writeCounters writes the hardware counters per transaction, or why
// there are none.
func writeCounters(pg page, s result.Step, f diagnose.Figures) {
	c := s.Probes.Counters()
	if c == nil {
		return
	}
	if !c.Supported {
		pg.item("counters", "cycles/txn and instructions/txn: "+c.Reason)
		return
	}
	line := "cycles and instructions over the machine"
	if tx := f.TPS * f.ElapsedS; tx > 0 {
		line = fmt.Sprintf("%.0f cycles/txn, %.0f instructions/txn", float64(c.Cycles)/tx, float64(c.Instructions)/tx)
	}
	if c.Cycles > 0 {
		line += fmt.Sprintf(", IPC %.2f", float64(c.Instructions)/float64(c.Cycles))
	}
	if c.Scaled {
		line += " (multiplexed, scaled)"
	}
	pg.item("counters", line)
}
