package cli

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
)

// printDisturbances prints, for each disturbance window of a step, what it
// did and the workload before, during and after it.
func printDisturbances(w io.Writer, s result.Step) {
	for _, d := range s.Disturbances {
		fmt.Fprintf(w, "disturbance %s (%d session%s): %d iterations in %.1f s (%.1f/s), %d errors",
			d.Spec, d.Sessions, plural(d.Sessions), d.Iterations, d.RanS, d.Rate, d.Errors)
		if d.CutOff > 0 {
			fmt.Fprintf(w, ", %d cut off at the end", d.CutOff)
		}
		fmt.Fprintln(w)
		for _, e := range d.ErrorMessages {
			fmt.Fprintf(w, "  error (%d×): %s\n", e.Count, e.Message)
		}
		e := d.Effect
		if e == nil {
			fmt.Fprintln(w, "  the window did not run")
			continue
		}
		for _, ph := range []struct {
			name string
			p    *result.Phase
		}{{"before", e.Before}, {"during", e.During}, {"after", e.After}} {
			if ph.p == nil {
				fmt.Fprintf(w, "  %-7s -\n", ph.name)
				continue
			}
			p := ph.p
			fmt.Fprintf(w, "  %-7s %5.1f-%5.1f s  %10.1f tps  lat %.3f ms  p99 %.3f ms  %d failed\n",
				ph.name, p.FromS, p.ToS, p.TPS, p.LatMeanMs, p.LatP99Ms, p.Failed)
		}
		if e.TPS != nil {
			fmt.Fprintf(w, "  during/before: tps %s, latency %s (%s)\n", formatWindowChange(e.TPS), formatWindowChange(e.Latency), intervalNote(e.TPS))
		}
		for _, warn := range e.Warnings {
			fmt.Fprintf(w, "  note: %s\n", warn)
		}
	}
}

// formatWindowChange formats a change as "-24.9% ± 3.1%".
func formatWindowChange(c *result.WindowChange) string {
	if c == nil {
		return "?"
	}
	lo, hi := math.Inf(-1), math.Inf(1)
	if c.Lo != nil {
		lo = *c.Lo
	}
	if c.Hi != nil {
		hi = *c.Hi
	}
	return stats.FormatChange(c.Change, lo, hi)
}

// intervalNote says what the ± is.
func intervalNote(c *result.WindowChange) string {
	if c.Lo == nil || c.Hi == nil {
		return "no interval: too few seconds before or during"
	}
	return fmt.Sprintf("%g%% interval from batch means of %.2g s: %d before, %d during", 100*c.Confidence, c.BatchS, c.BatchesBefore, c.BatchesDuring)
}

// duringBefore is the sweep table's "during/before" cell: each window's tps
// change, named when there are several.
func duringBefore(s result.Step) string {
	var parts []string
	for _, d := range s.Disturbances {
		var c *result.WindowChange
		if d.Effect != nil {
			c = d.Effect.TPS
		}
		if len(s.Disturbances) == 1 {
			return formatWindowChange(c)
		}
		parts = append(parts, d.Name+" "+formatWindowChange(c))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}
