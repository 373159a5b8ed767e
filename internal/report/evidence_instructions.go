package report

import (
	"fmt"
	"strings"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/result"
)

func init() { registerWriter(probeid.Instructions, writeInstructions) }

// writeInstructions writes the instructions counted per transaction in
// the client backends and elsewhere, what their system calls were, what
// the cache simulation counted, and what was not counted.
func writeInstructions(pg page, s result.Step, _ diagnose.Figures) {
	in := instructions(s)
	if in == nil {
		return
	}
	tx := float64(in.Transactions)
	sys := fmt.Sprintf("%.1f system calls", float64(in.ClientSyscalls)/tx)
	if c := in.ClientClockReads; c != nil {
		sys = fmt.Sprintf("%.1f system calls and %.1f clock reads (vDSO calls natively, system calls under Valgrind)",
			float64(in.ClientSyscalls-min(*c, in.ClientSyscalls))/tx, float64(*c)/tx)
	}
	line := fmt.Sprintf("%.0f per transaction in the client backends (%s, user space; %s not counted), %s",
		in.PerTxn, in.Tool, in.Without, sys)
	var bg []string
	for _, g := range in.ByKind {
		if g.Kind != "client backend" {
			bg = append(bg, fmt.Sprintf("%s %.0f", g.Kind, float64(g.Instructions)/tx))
		}
	}
	if len(bg) > 0 {
		line += "; per transaction elsewhere (to the clock, not the work): " + strings.Join(bg, ", ")
	}
	if pl := in.Pooler; pl != nil {
		line += fmt.Sprintf("; the pooler %.0f per transaction (%d processes, all counted), %.1f system calls",
			in.PoolerPerTxn, pl.Processes, float64(pl.Syscalls)/float64(in.Transactions))
		if in.PoolerWindowS > 0 {
			line += fmt.Sprintf(", over %.2f s of wall time (its timers' part a comparison takes off)", in.PoolerWindowS)
		}
	}
	if in.StartedInWindow > 0 {
		line += fmt.Sprintf("; %d processes started in the window, not counted", in.StartedInWindow)
	}
	pg.item("instructions", line)
	if c := in.Simulated(); c != nil {
		e := c.Events
		per := func(n uint64) float64 { return float64(n) / tx }
		pg.item("cache (simulated)", fmt.Sprintf("per transaction %.0f L1 instruction misses, %.0f L1 data misses, %.1f last-level misses, %.0f mispredicted branches; %.0f estimated cycles (%s); caches I1 %s, D1 %s, LL %s",
			per(e["I1mr"]), per(e["D1mr"]+e["D1mw"]), per(e["ILmr"]+e["DLmr"]+e["DLmw"]), per(e["Bcm"]+e["Bim"]), per(c.EstCycles), c.Model, c.I1, c.D1, c.LL))
	}
	for _, nc := range in.NotCounted {
		pg.item("not counted", nc)
	}
}
