package report

import (
	"fmt"
	"strings"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/result"
)

// writeInstructions writes the instructions counted per transaction in
// the client backends and elsewhere, and what was not counted.
func writeInstructions(pg page, s result.Step, _ diagnose.Figures) {
	in := instructions(s)
	if in == nil {
		return
	}
	line := fmt.Sprintf("%.0f per transaction in the client backends (%s, user space; %s not counted), %.1f system calls",
		in.PerTxn, in.Tool, in.Without, float64(in.ClientSyscalls)/float64(in.Transactions))
	var bg []string
	for _, g := range in.ByKind {
		if g.Kind != "client backend" {
			bg = append(bg, fmt.Sprintf("%s %.0f", g.Kind, float64(g.Instructions)/float64(in.Transactions)))
		}
	}
	if len(bg) > 0 {
		line += "; per transaction elsewhere (to the clock, not the work): " + strings.Join(bg, ", ")
	}
	if pl := in.Pooler; pl != nil {
		line += fmt.Sprintf("; the pooler %.0f per transaction (%d processes, all counted), %.1f system calls",
			in.PoolerPerTxn, pl.Processes, float64(pl.Syscalls)/float64(in.Transactions))
	}
	if in.StartedInWindow > 0 {
		line += fmt.Sprintf("; %d processes started in the window, not counted", in.StartedInWindow)
	}
	pg.item("instructions", line)
	for _, nc := range in.NotCounted {
		pg.item("not counted", nc)
	}
}
