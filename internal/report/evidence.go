package report

import (
	"fmt"
	"strings"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/result"
)

// writeEvidence writes what a step's probes gathered, probe by probe: the
// evidence under its verdict.
func writeEvidence(pg page, s result.Step, f diagnose.Figures) {
	p := s.Probes
	if p == nil {
		pg.item("probes", "none recorded")
		return
	}
	if ps := p.Process; ps != nil && f.HasHost {
		line := fmt.Sprintf("%s busy of %d cores", prose.Share(f.MachineBusy), ps.CPUs)
		if f.HasServer {
			line += "; of the machine: server " + prose.Share(f.ServerShare)
			if f.HasPooler {
				line += ", pooler " + prose.Share(f.PoolerShare)
			}
			line += fmt.Sprintf(", load generator %s, probes %s, other %s", prose.Share(f.GeneratorShare), prose.Share(f.ProbeShare), prose.Share(f.Elsewhere()))
		} else {
			line += fmt.Sprintf("; of the machine: load generator %s, probes %s; %s", prose.Share(f.GeneratorShare), prose.Share(f.ProbeShare), ps.ServerNote)
		}
		line += fmt.Sprintf("; run queue %.2f tasks waiting per core", f.RunQueuePerCore)
		if ps.Host.PSI != nil {
			line += fmt.Sprintf("; pressure: cpu %s, io %s", prose.Share(ps.Host.PSI.CPUSome), prose.Share(ps.Host.PSI.IOSome))
		}
		if ps.Host.StealShare >= loudSteal {
			line += fmt.Sprintf("; steal %.1f%%", 100*ps.Host.StealShare)
		}
		pg.item("cpu", line)
		if ps.Server != nil {
			var kinds []string
			for _, k := range ps.Server.ByKind {
				kinds = append(kinds, fmt.Sprintf("%s ×%d %.2f s (run-queue wait %.2f s)", k.Kind, k.Processes, k.CPUS, k.RunQueueWaitS))
			}
			pg.item("server", strings.Join(kinds, "; "))
		}
		if ps.Pooler != nil && f.ElapsedS > 0 {
			pg.item("pooler", fmt.Sprintf("%.2f s cpu (%s of the machine), run-queue wait %.2f s", ps.Pooler.CPUS,
				prose.Share(ps.Pooler.CPUS/(f.ElapsedS*float64(ps.CPUs))), ps.Pooler.RunQueueWaitS))
		}
	}
	if c := p.Counters; c != nil {
		if c.Supported {
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
		} else {
			pg.item("counters", "cycles/txn and instructions/txn: "+c.Reason)
		}
	}
	if w := p.Waits; w != nil {
		line := fmt.Sprintf("%d samples (%s", f.Samples, w.Source)
		if w.Source == "pg_stat_activity" {
			line += fmt.Sprintf(" every %.0f ms; %d of them idle sessions, counted as Client:ClientRead", w.PeriodMs, w.IdleSamples)
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
	if l := p.Locks; l != nil {
		line := fmt.Sprintf("%d snapshots, up to %d backends holding locks; weak relation locks outside the fast path: up to %d per backend (mean %.1f); fast-path slots %d (up to %d used)",
			l.Snapshots, l.Backends, l.MaxSlowWeak, l.MeanSlowWeak, l.FastPathSlots, l.MaxFastPath)
		if l.Exhausted > 0 {
			line += fmt.Sprintf("; fast-path slots exhausted in %d backend snapshots", l.Exhausted)
		}
		if len(l.Waiting) > 0 {
			var ws []string
			for _, x := range l.Waiting {
				ws = append(ws, fmt.Sprintf("%s %s ×%d", x.LockType, x.Mode, x.Count))
			}
			line += "; waiting: " + strings.Join(ws, ", ")
		}
		pg.item("locks", line)
	}
	if st := p.Statements; st != nil && f.HasStatements {
		pg.item("statements", fmt.Sprintf("server time %.3f ms per transaction, client-observed latency %.3f ms: network + client %.3f ms",
			f.ServerMsPerTxn, f.LatencyMs, f.NetworkMs))
		tx := f.TPS * f.ElapsedS
		var rows [][]string
		for _, q := range st.Top {
			share := 0.0
			if st.ServerMs > 0 {
				share = q.TotalMs / st.ServerMs
			}
			rows = append(rows, []string{fmt.Sprintf("%.2f", float64(q.Calls)/tx), fmt.Sprintf("%.3f", q.TotalMs/float64(q.Calls)),
				prose.Share(share), truncate(q.Query, 70)})
		}
		if len(rows) > 0 {
			t := newTable("calls/txn", "mean ms", "share", "statement").alignRight(0, 1, 2)
			for _, row := range rows {
				t.row(row...)
			}
			pg.subtable(t)
		}
		if st.Dealloc {
			pg.item("statements", "pg_stat_statements evicted entries during the step: the figures may miss some statements")
		}
	}
	if in := instructions(s); in != nil {
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
		if in.StartedInWindow > 0 {
			line += fmt.Sprintf("; %d processes started in the window, not counted", in.StartedInWindow)
		}
		pg.item("instructions", line)
		for _, nc := range in.NotCounted {
			pg.item("not counted", nc)
		}
	}
	if pr := p.Profile; pr != nil {
		var top []string
		for i, fn := range pr.Top {
			if i == 5 {
				break
			}
			top = append(top, fmt.Sprintf("%s %s", fn.Function, prose.Share(float64(fn.Self)/float64(max(pr.Samples, 1)))))
		}
		unit := "samples"
		if pr.Unit != "" {
			unit = pr.Unit
		}
		pg.item("profile", fmt.Sprintf("%s, %d %s; self: %s", pr.File, pr.Samples, unit, strings.Join(top, ", ")))
	}
	if len(p.Costs) > 0 && f.ElapsedS > 0 && f.CPUs > 0 {
		var cs []string
		for _, c := range p.Costs {
			x := fmt.Sprintf("%s %.1f ms", c.Probe, (c.LocalCPUS+c.ServerCPUS)*1000)
			if c.Queries > 0 {
				x += fmt.Sprintf(" (%d queries)", c.Queries)
			}
			cs = append(cs, x)
		}
		pg.item("probe cost", fmt.Sprintf("%s of the machine: %s", prose.Share(f.ProbeShare), strings.Join(cs, ", ")))
	}
	for _, u := range p.Unavailable {
		pg.item("unavailable", u.Probe+": "+u.Reason)
	}
}
