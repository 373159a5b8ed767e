package report

import (
	"fmt"
	"strings"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/result"
)

func init() { registerWriter(probeid.Waits, writeWaits) }

// writeWaits writes the client backends' top wait events and the other
// server processes' waits.
func writeWaits(pg page, s result.Step, f diagnose.Figures) {
	w := s.Probes.Waits()
	if w == nil {
		return
	}
	line := fmt.Sprintf("%d samples (%s", f.Samples, w.Source)
	if w.Source == "pg_stat_activity" {
		line += fmt.Sprintf(" every %.0f ms; %d of them idle sessions, counted as Client:ClientRead", w.PeriodMs, w.IdleSamples)
		if w.PausedS > 0 {
			line += fmt.Sprintf("; none for %.1f s while the server was away", w.PausedS)
		}
	}
	line += "), shares of all of them"
	var top []string
	for i, e := range f.TopEvents {
		if i == 5 {
			break
		}
		top = append(top, fmt.Sprintf("%s %s", e.Name, prose.Share(e.Share)))
	}
	if len(top) > 0 {
		line += ": " + strings.Join(top, ", ")
	}
	pg.item("waits", line)
	var bg []string
	for _, e := range w.Background {
		// Activity waits are background processes idling in their main loops.
		if e.Type != "Activity" && len(bg) < 3 {
			bg = append(bg, fmt.Sprintf("%s:%s %d", e.Type, e.Event, e.Samples))
		}
	}
	if len(bg) > 0 {
		pg.item("background", "waits of other server processes: "+strings.Join(bg, ", "))
	}
}
