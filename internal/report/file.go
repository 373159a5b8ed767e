package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/result"
)

// Format is a report's output format.
type Format int

// Formats.
const (
	Text     Format = iota // for a terminal
	Markdown               // for a pull request or an issue
)

// ParseFormat parses a --format value.
func ParseFormat(s string) (Format, error) {
	switch s {
	case "text", "":
		return Text, nil
	case "markdown", "md":
		return Markdown, nil
	}
	return 0, fmt.Errorf("unknown report format %q (want text or markdown)", s)
}

// File renders one result file: what ran where, the sweep table with the
// per-transaction costs and verdicts, each step's evidence, and the
// diagnosis, computed again from the file's steps.
func File(w io.Writer, name string, f *result.File, format Format) {
	d := diagnose.Sweep(f)
	figs := make([]diagnose.Figures, len(f.Steps))
	for i, s := range f.Steps {
		figs[i] = diagnose.Compute(s)
	}
	r := &renderer{w: w, md: format == Markdown}
	r.header(name, f)
	r.sweep(f, figs, d)
	for i, s := range f.Steps {
		r.step(s, figs[i])
	}
	if d != nil {
		if r.md {
			fmt.Fprintf(w, "\n## Diagnosis\n\n%s\n", d.Paragraph)
		} else {
			Diagnosis(w, d)
		}
	}
}

type renderer struct {
	w  io.Writer
	md bool
}

func (r *renderer) header(name string, f *result.File) {
	wl := f.Workload
	what := fmt.Sprintf("%s, protocol %s, scale %d", wl.Name, wl.Protocol, wl.Scale)
	if wl.DurationS > 0 {
		what += fmt.Sprintf(", %g s per step", wl.DurationS)
	} else if wl.Transactions > 0 {
		what += fmt.Sprintf(", %d transactions per client", wl.Transactions)
	}
	t := f.Target
	where := fmt.Sprintf("%s PostgreSQL %s (%s)", t.Kind, t.ServerVersion, t.Description)
	env := f.Environment
	machine := fmt.Sprintf("%d CPUs (%s), %d MiB, kernel %s", env.CPUs, env.CPUModel, env.MemoryMB, env.Kernel)
	status := "complete"
	if !f.Complete {
		status = "incomplete: " + f.Reason
	}
	when := fmt.Sprintf("%s, pgscale %s, result version %d, %s", f.Started.UTC().Format("2006-01-02 15:04:05 UTC"), f.Pgscale, f.Version, status)
	if r.md {
		fmt.Fprintf(r.w, "# %s\n\n", name)
		fmt.Fprintf(r.w, "- workload: %s\n- target: %s\n- machine: %s\n- run: %s\n", what, where, machine, when)
		return
	}
	fmt.Fprintf(r.w, "%s\n", name)
	fmt.Fprintf(r.w, "  workload: %s\n  target:   %s\n  machine:  %s\n  run:      %s\n", what, where, machine, when)
}

func (r *renderer) sweep(f *result.File, figs []diagnose.Figures, d *result.Diagnosis) {
	head := []string{"clients", "tps", "speedup", "efficiency", "lat avg ms", "p99 ms", "failed", "server cpu/txn", "client cpu/txn", "ctx/txn", "verdict"}
	var rows [][]string
	for i, s := range f.Steps {
		sum := s.Summary
		fg := figs[i]
		srv, cli, ctx := "-", "-", "-"
		if fg.HasServer {
			srv = fmt.Sprintf("%.1f µs", fg.ServerCPUPerTxnUS)
			ctx = fmt.Sprintf("%.1f", fg.CtxPerTxn)
		}
		switch {
		case fg.HasHost:
			cli = fmt.Sprintf("%.1f µs", fg.GeneratorCPUPerTxnUS)
		case sum.ClientCPU.PerTxnUS > 0:
			cli = fmt.Sprintf("%.1f µs", sum.ClientCPU.PerTxnUS)
		}
		verdict := "-"
		if d != nil {
			verdict = d.Steps[i].Verdict
		}
		if !s.Complete {
			verdict += " (incomplete)"
		}
		rows = append(rows, []string{fmt.Sprint(s.Clients), fmt.Sprintf("%.1f", sum.TPS), fmt.Sprintf("%.2f×", sum.Speedup),
			fmt.Sprintf("%.0f%%", sum.Efficiency*100), fmt.Sprintf("%.3f", sum.Latency.MeanMs), fmt.Sprintf("%.3f", sum.Latency.P99Ms),
			fmt.Sprint(sum.Failed), srv, cli, ctx, verdict})
	}
	fmt.Fprintln(r.w)
	if r.md {
		fmt.Fprintln(r.w, "## Sweep")
		fmt.Fprintln(r.w)
	}
	r.table(head, rows, 10)
}

// table prints a table; columns before alignLeftFrom are right-aligned.
func (r *renderer) table(head []string, rows [][]string, alignLeftFrom int) {
	if r.md {
		fmt.Fprintf(r.w, "| %s |\n|", strings.Join(head, " | "))
		for i := range head {
			if i < alignLeftFrom {
				fmt.Fprint(r.w, " ---: |")
			} else {
				fmt.Fprint(r.w, " --- |")
			}
		}
		fmt.Fprintln(r.w)
		for _, row := range rows {
			fmt.Fprintf(r.w, "| %s |\n", strings.Join(mdEscape(row), " | "))
		}
		return
	}
	width := make([]int, len(head))
	for i, h := range head {
		width[i] = runeLen(h)
	}
	for _, row := range rows {
		for i, c := range row {
			width[i] = max(width[i], runeLen(c))
		}
	}
	line := func(cells []string) {
		var b strings.Builder
		b.WriteString(" ")
		for i, c := range cells {
			pad := strings.Repeat(" ", width[i]-runeLen(c))
			b.WriteString(" ")
			if i < alignLeftFrom {
				b.WriteString(pad + c)
			} else {
				b.WriteString(c + pad)
			}
			b.WriteString(" ")
		}
		fmt.Fprintln(r.w, strings.TrimRight(b.String(), " "))
	}
	line(head)
	for _, row := range rows {
		line(row)
	}
}

func runeLen(s string) int { return len([]rune(s)) }

func mdEscape(cells []string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = strings.ReplaceAll(c, "|", `\|`)
	}
	return out
}

// step prints one step's evidence, probe by probe.
func (r *renderer) step(s result.Step, f diagnose.Figures) {
	if r.md {
		fmt.Fprintf(r.w, "\n### %d client%s\n\n", s.Clients, plural(s.Clients))
	} else {
		fmt.Fprintf(r.w, "\n%d client%s:\n", s.Clients, plural(s.Clients))
	}
	p := s.Probes
	if p == nil {
		r.item("probes", "none recorded")
		return
	}
	if ps := p.Process; ps != nil && f.HasHost {
		line := fmt.Sprintf("%s busy of %d cores", pct(f.MachineBusy), ps.CPUs)
		if f.HasServer {
			line += fmt.Sprintf(": server %s, load generator %s, probes %s, other %s", pct(f.ServerShare), pct(f.GeneratorShare), pct(f.ProbeShare), pct(f.OtherShare))
		} else {
			line += fmt.Sprintf(": load generator %s, probes %s; %s", pct(f.GeneratorShare), pct(f.ProbeShare), ps.ServerNote)
		}
		line += fmt.Sprintf("; run queue %.2f tasks waiting per core", f.RunQueuePerCore)
		if ps.Host.PSI != nil {
			line += fmt.Sprintf("; pressure: cpu %s, io %s", pct(ps.Host.PSI.CPUSome), pct(ps.Host.PSI.IOSome))
		}
		if ps.Host.StealShare >= 0.01 {
			line += fmt.Sprintf("; steal %s", pct(ps.Host.StealShare))
		}
		r.item("cpu", line)
		if ps.Server != nil {
			var kinds []string
			for _, k := range ps.Server.ByKind {
				kinds = append(kinds, fmt.Sprintf("%s ×%d %.2f s (run-queue wait %.2f s)", k.Kind, k.Processes, k.CPUS, k.RunQueueWaitS))
			}
			r.item("server", strings.Join(kinds, "; "))
		}
		if ps.Pooler != nil && f.ElapsedS > 0 {
			r.item("pooler", fmt.Sprintf("%.2f s cpu (%s of the machine), run-queue wait %.2f s", ps.Pooler.CPUS,
				pct(ps.Pooler.CPUS/(f.ElapsedS*float64(ps.CPUs))), ps.Pooler.RunQueueWaitS))
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
			r.item("counters", line)
		} else {
			r.item("counters", "cycles/txn and instructions/txn: "+c.Reason)
		}
	}
	if w := p.Waits; w != nil {
		line := fmt.Sprintf("%d samples (%s", w.Samples, w.Source)
		if w.Source == "pg_stat_activity" {
			line += fmt.Sprintf(" every %.0f ms, %d idle samples left out", w.PeriodMs, w.IdleSamples)
		}
		line += ")"
		var top []string
		for i, e := range f.TopEvents {
			if i == 5 {
				break
			}
			top = append(top, fmt.Sprintf("%s %s", e.Name, pct(e.Share)))
		}
		if len(top) > 0 {
			line += ": " + strings.Join(top, ", ")
		}
		r.item("waits", line)
		var bg []string
		for _, e := range w.Background {
			// Activity waits are background processes idling in their main loops.
			if e.Type != "Activity" && len(bg) < 3 {
				bg = append(bg, fmt.Sprintf("%s:%s %d", e.Type, e.Event, e.Samples))
			}
		}
		if len(bg) > 0 {
			r.item("background", "waits of other server processes: "+strings.Join(bg, ", "))
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
		r.item("locks", line)
	}
	if st := p.Statements; st != nil && f.HasStatements {
		r.item("statements", fmt.Sprintf("server time %.3f ms per transaction, client-observed latency %.3f ms: network + client %.3f ms",
			f.ServerMsPerTxn, f.LatencyMs, f.NetworkMs))
		tx := f.TPS * f.ElapsedS
		var rows [][]string
		for _, q := range st.Top {
			share := 0.0
			if st.ServerMs > 0 {
				share = q.TotalMs / st.ServerMs
			}
			rows = append(rows, []string{fmt.Sprintf("%.2f", float64(q.Calls)/tx), fmt.Sprintf("%.3f", q.TotalMs/float64(q.Calls)),
				pct(share), truncate(q.Query, 70)})
		}
		if len(rows) > 0 {
			if r.md {
				fmt.Fprintln(r.w)
			}
			r.indentTable([]string{"calls/txn", "mean ms", "share", "statement"}, rows, 3)
			if r.md {
				fmt.Fprintln(r.w)
			}
		}
		if st.Dealloc {
			r.item("statements", "pg_stat_statements evicted entries during the step: the figures may miss some statements")
		}
	}
	if pr := p.Profile; pr != nil {
		var top []string
		for i, fn := range pr.Top {
			if i == 5 {
				break
			}
			top = append(top, fmt.Sprintf("%s %s", fn.Function, pct(float64(fn.Self)/float64(max(pr.Samples, 1)))))
		}
		r.item("profile", fmt.Sprintf("%s, %d samples; self: %s", pr.File, pr.Samples, strings.Join(top, ", ")))
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
		r.item("probe cost", fmt.Sprintf("%s of the machine: %s", pct(f.ProbeShare), strings.Join(cs, ", ")))
	}
	for _, u := range p.Unavailable {
		r.item("unavailable", u.Probe+": "+u.Reason)
	}
}

func (r *renderer) item(key, value string) {
	if r.md {
		fmt.Fprintf(r.w, "- **%s**: %s\n", key, value)
		return
	}
	lines := wrap(value, 96)
	for i, l := range lines {
		if i == 0 {
			fmt.Fprintf(r.w, "  %-11s %s\n", key+":", l)
		} else {
			fmt.Fprintf(r.w, "  %-11s %s\n", "", l)
		}
	}
}

func (r *renderer) indentTable(head []string, rows [][]string, alignLeftFrom int) {
	if r.md {
		r.table(head, rows, alignLeftFrom)
		return
	}
	var b strings.Builder
	sub := &renderer{w: &b}
	sub.table(head, rows, alignLeftFrom)
	for _, l := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
		fmt.Fprintf(r.w, "            %s\n", l)
	}
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func pct(x float64) string {
	if x > 0 && x < 0.005 {
		return "<1%"
	}
	return fmt.Sprintf("%.0f%%", x*100)
}
