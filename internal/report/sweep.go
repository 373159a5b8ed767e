package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
)

// writeSweep writes a result file as a sweep: its header, every step's
// block, the sweep table and the diagnosis. A run prints the same parts
// as it goes (Live), so the two read alike.
func writeSweep(p page, fa compare.FileAnalysis) {
	writeHead(p, fa.Name, fa.File)
	for i, s := range fa.Rescaled.Steps {
		writeStep(p, s, fa.Steps[i])
	}
	writeEnd(p, fa)
}

// writeHead writes the title and what ran where: the part of a result
// file known before its first step.
func writeHead(p page, name string, f *result.File) {
	wl := f.Workload
	what := fmt.Sprintf("%s, protocol %s, scale %d", wl.Name, wl.Protocol, wl.Scale)
	for _, sc := range wl.Scripts {
		for _, fb := range sc.PrepareFallbacks {
			what += fmt.Sprintf(" (%s:%d simple: the server would not prepare it, SQLSTATE %s)", sc.Name, fb.Line, fb.SQLState)
		}
	}
	if wl.DurationS > 0 {
		what += fmt.Sprintf(", %g s per step", wl.DurationS)
	} else if wl.Transactions > 0 {
		what += fmt.Sprintf(", %d transactions per client", wl.Transactions)
	}
	t := f.Target
	where := fmt.Sprintf("%s PostgreSQL %s (%s)", t.Kind, t.ServerVersion, t.Description)
	if pl := t.Pooler; pl != nil && t.Kind == "proxy" {
		where = fmt.Sprintf("proxy %s (%s; %s) in front of %s PostgreSQL %s (%s)", pl.Program, t.Description,
			pl.Command, pl.ServerKind, t.ServerVersion, pl.Server)
		if pl.Of != "" {
			where += ", target " + pl.Of + "'s server"
			if strings.Contains(pl.Of, ",") {
				where = strings.TrimSuffix(where, "'s server") + "'s servers"
			}
		}
	} else if pl != nil {
		where = fmt.Sprintf("%s %s (%s; %s) in front of %s PostgreSQL %s (%s)", pl.Program, pl.Version, t.Description,
			poolerSettings(pl), pl.ServerKind, t.ServerVersion, pl.Server)
		if pl.Of != "" {
			where += ", target " + pl.Of + "'s server"
		}
	}
	if t.Name != "" {
		where = t.Name + ": " + where
	}
	env := f.Environment
	machine := fmt.Sprintf("%d CPUs (%s), %d MiB, kernel %s", env.CPUs, env.CPUModel, env.MemoryMB, env.Kernel)
	when := fmt.Sprintf("%s, pgscale %s, result version %d", f.Started.UTC().Format("2006-01-02 15:04:05 UTC"), f.Pgscale, f.Version)
	p.title(name)
	p.field("workload", what)
	p.field("target", where)
	if t.Build != nil {
		p.field("build", buildLine(t.Build))
	}
	if pl := t.Pooler; pl != nil && pl.Build != nil {
		p.field("pooler", poolerBuildLine(pl))
	}
	p.field("machine", machine)
	p.field("run", when)
	if v := t.Valgrind; v != nil {
		what := "instructions"
		if slices.Contains(v.Options, "--cache-sim=yes") {
			what = "instructions and simulated cache misses"
		}
		p.field("counted", fmt.Sprintf("%s under Valgrind (%s), 20 to 50 times slower than natively: throughput, latency, CPU times and verdicts are Valgrind's, the counts the server's",
			what, v.Version))
	}
	p.blank()
}

// poolerBuildLine says which build of its own a pooler runs: "pgbouncer
// built from PATH@REV (commit 3039dde) by ./configure ... && make, build
// 54dd00c1".
func poolerBuildLine(pl *result.Pooler) string {
	b := pl.Build
	s := pl.Program + " built from " + b.Source
	if b.Commit != "" {
		s += " (commit " + ShortCommit(b.Commit) + ")"
	}
	if b.Command != "" {
		s += " by " + b.Command
	}
	if len(b.Key) >= 8 {
		s += ", build " + b.Key[:8]
	}
	return s
}

// buildLine says how a server built from source was made: "PATH@REV
// (commit 19c5574, 1 patch), autoconf --enable-debug ..., gcc ..., build
// 6957044d".
func buildLine(b *result.Build) string {
	var of []string
	if b.Commit != "" {
		c := "commit " + ShortCommit(b.Commit)
		if b.Dirty {
			c += " with uncommitted changes"
		}
		of = append(of, c)
	}
	switch n := len(b.Patches); {
	case n == 1:
		of = append(of, "1 patch")
	case n > 1:
		of = append(of, fmt.Sprintf("%d patches", n))
	}
	for _, e := range b.Extensions {
		of = append(of, "extension "+extensionLine(e))
	}
	if b.Mode == "installed" {
		s := "the installed server " + b.Path + ", copied with " + strings.Join(of, ", ")
		if b.Compiler != "" {
			s += ", " + b.Compiler
		}
		return s + ", build " + shortKey(b.Key)
	}
	s := b.Path
	if b.Rev != "" {
		s += "@" + b.Rev
	}
	if len(of) > 0 {
		s += " (" + strings.Join(of, ", ") + ")"
	}
	s += ", " + strings.Join(append([]string{b.System}, b.Configure...), " ")
	if b.Compiler != "" {
		s += ", " + b.Compiler
	}
	return s + ", build " + shortKey(b.Key)
}

// shortKey is a build key's first 8 digits.
func shortKey(key string) string {
	if len(key) > 8 {
		return key[:8]
	}
	return key
}

// extensionLine names an extension of a build with its source and how it
// was built: "pgvector (~/pgvector@v0.8.0, commit 1a2b3c4, 1 patch, make
// OPTFLAGS=)".
func extensionLine(e result.BuildExtension) string {
	of := []string{e.Source}
	if e.Commit != "" {
		of = append(of, "commit "+ShortCommit(e.Commit))
	}
	switch n := len(e.Patches); {
	case n == 1:
		of = append(of, "1 patch")
	case n > 1:
		of = append(of, fmt.Sprintf("%d patches", n))
	}
	if len(e.Make) > 0 {
		of = append(of, "make "+strings.Join(e.Make, " "))
	}
	if e.Run != "" {
		of = append(of, "built by: "+e.Run)
	}
	return e.Name + " (" + strings.Join(of, ", ") + ")"
}

// poolerSettings are the pooler settings a reader looks for first.
func poolerSettings(pl *result.Pooler) string {
	var s []string
	for _, k := range []string{"pool_mode", "default_pool_size", "max_client_conn"} {
		if v, ok := pl.Settings[k]; ok {
			s = append(s, k+"="+v)
		}
	}
	return strings.Join(s, ", ")
}

// writeEnd writes what a result file says once its steps are done: the
// sweep table with per-transaction costs and verdicts, the diagnosis, and
// why the file is incomplete.
func writeEnd(p page, fa compare.FileAnalysis) {
	f, d := fa.Rescaled, fa.Diagnosis
	p.section("Sweep", "")
	p.table(sweepTable(fa))
	if d != nil {
		p.section("Diagnosis", "diagnosis:")
		p.lines(verdictLines(fa))
		p.blank()
		p.para(d.Paragraph)
		if sc := fa.Scaling; len(sc) > 1 {
			p.section("Scaling", "scaling (waits, cpu wait and client wait are shares of the backends' time):")
			p.table(scalingTable(sc))
		}
	}
	writeUnnamed(p, fa.Unnamed)
	if len(fa.Rules) > 0 {
		p.section("Rules", "rules:")
		p.lines(expectLines(fa))
	}
	if !f.Complete {
		p.blank()
		p.para("INCOMPLETE: " + f.Reason)
	}
}

// scalingTable is the scaling analysis per client count: the figures a
// decision rule (--expect) reads.
func scalingTable(sc []diagnose.ScalingStep) *table {
	t := newTable("clients", "tps", "efficiency", "gain/doubling", "lost/doubling", "waits", "cpu wait", "client wait").alignRight(0, 1, 2, 3, 4, 5, 6, 7)
	share := func(x float64) string {
		if math.IsNaN(x) {
			return "-"
		}
		return prose.Share(x)
	}
	for _, s := range sc {
		gain, lost := "-", "-"
		if !math.IsNaN(s.GainPerDoubling) {
			gain = fmt.Sprintf("%.2f×", s.GainPerDoubling)
		}
		if !math.IsNaN(s.LossPerDoubling) {
			lost = fmt.Sprintf("%.0f%%", s.LossPerDoubling*100) // none from a step before the baseline
		}
		t.row(fmt.Sprint(s.Clients), fmt.Sprintf("%.1f", s.TPS), share(s.Efficiency), gain, lost, share(s.Waits), share(s.CPUWait), share(s.ClientWait))
	}
	return t
}

// expectLines are the outcomes of the decision rules a file records.
func expectLines(fa compare.FileAnalysis) []string {
	var out []string
	for _, r := range fa.Rules {
		if r.Outcome == nil {
			out = append(out, "  "+r.Err)
			continue
		}
		out = append(out, "  "+r.Outcome.String())
	}
	return out
}

// sweepTable is one row per step: throughput, scaling, latency, failures,
// the costs per transaction and the step's verdict.
func sweepTable(fa compare.FileAnalysis) *table {
	f, d := fa.Rescaled, fa.Diagnosis
	disturbed := false
	for _, s := range f.Steps {
		disturbed = disturbed || len(s.Disturbances) > 0
	}
	pooled := false // a pooler accounted in some step: a pgbouncer target, or --pooler-pid
	for _, s := range f.Steps {
		pooled = pooled || s.Probes != nil && s.Probes.Process() != nil && s.Probes.Process().Pooler != nil
	}
	perCPU := d != nil && d.PerCPU // speedup is of throughput per CPU-second the system had: shown beside throughput
	head := []string{"clients", "tps"}
	if perCPU {
		head = append(head, "tps/cpu-s")
	}
	head = append(head, "speedup", "efficiency", "lat avg ms", "p99 ms", "failed", "server cpu/txn")
	if pooled {
		head = append(head, "pooler cpu/txn")
	}
	head = append(head, "client cpu/txn", "ctx/txn")
	if disturbed {
		head = append(head, "during/before")
	}
	t := newTable(append(head, "verdict")...)
	for i := range head {
		t.alignRight(i)
	}
	for i, s := range f.Steps {
		sum := s.Summary
		fg := fa.Steps[i].Figures
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
		row := []string{fmt.Sprint(s.Clients), fmt.Sprintf("%.1f", sum.TPS)}
		if perCPU {
			row = append(row, fmt.Sprintf("%.1f", d.Steps[i].TPSPerCPU))
		}
		row = append(row, fmt.Sprintf("%.2f×", sum.Speedup), fmt.Sprintf("%.0f%%", sum.Efficiency*100), fmt.Sprintf("%.3f", sum.Latency.MeanMs),
			fmt.Sprintf("%.3f", sum.Latency.P99Ms), fmt.Sprint(sum.Failed), srv)
		if pooled {
			pl := "-"
			if fg.HasPooler {
				pl = fmt.Sprintf("%.1f µs", fg.PoolerCPUPerTxnUS)
			}
			row = append(row, pl)
		}
		row = append(row, cli, ctx)
		if disturbed {
			row = append(row, duringBefore(s))
		}
		t.row(append(row, verdict)...)
	}
	return t
}

// verdictLines is one line per step of the file's sweep diagnosis with
// its verdict and detail, and its marks (compare.StepAnalysis.Marks).
func verdictLines(fa compare.FileAnalysis) []string {
	var out []string
	for i, v := range fa.Diagnosis.Steps {
		mark := ""
		if i < len(fa.Steps) {
			if marks := fa.Steps[i].Marks(); len(marks) > 0 {
				mark = "  (" + strings.Join(marks, ", ") + ")"
			}
		}
		line := fmt.Sprintf("  %4d client%-1s  %-13s", v.Clients, prose.Plural(v.Clients), v.Verdict)
		if v.Detail != "" {
			line += "  " + v.Detail
		}
		if v.CPUShift != "" {
			line += "; " + v.CPUShift
		}
		out = append(out, line+mark)
	}
	return out
}

// StepLine is a step's one-line summary, printed after each step.
func StepLine(s result.Step) string {
	sum := s.Summary
	line := fmt.Sprintf("%s: %d transactions in %.1f s, %.1f tps, lat avg %.3f ms (stddev %.3f, p50 %.3f, p99 %.3f, max %.3f), %d failed",
		prose.Count(s.Clients, "client"), sum.Transactions, s.ElapsedS, sum.TPS, sum.Latency.MeanMs, sum.Latency.StddevMs,
		sum.Latency.P50Ms, sum.Latency.P99Ms, sum.Latency.MaxMs, sum.Failed)
	if sum.Aborted > 0 {
		// pgbench counts the transactions its clients aborted on apart
		// from the failed ones (which a retry could have saved): "0
		// failed" alone would read as nothing wrong.
		line += fmt.Sprintf(", %d aborted (%d of %d stopped on an error)", sum.Aborted, sum.Aborted, s.Clients)
	}
	if sum.Retries > 0 {
		line += fmt.Sprintf(", %d retried (%d retries)", sum.Retried, sum.Retries)
	}
	if sum.InitialConnectMs > 0 {
		// pgbench's "initial connection time": before the window, not in it.
		line += fmt.Sprintf(", initial connection time %.3f ms", sum.InitialConnectMs)
	}
	if sum.ClientCPU.PerTxnUS > 0 {
		line += fmt.Sprintf(", client cpu %.1f µs/txn", sum.ClientCPU.PerTxnUS)
	}
	if in := instructions(s); in != nil {
		switch {
		case in.PerTxn == 0 && in.PoolerPerTxn > 0: // the pooler counted alone (--count pooler)
			line += fmt.Sprintf(", the pooler's %.0f instr/txn counted", in.PoolerPerTxn)
		default:
			line += fmt.Sprintf(", %.0f instr/txn counted", in.PerTxn)
		}
	}
	if steal, ok := compare.StealShare(s); ok && steal >= loudSteal {
		line += fmt.Sprintf(", steal %.1f%%", 100*steal)
	}
	if !s.Complete {
		line += " [incomplete: " + s.Reason + "]"
	}
	return line
}

// writeStep writes one step's block: its summary line, the evidence its
// probes gathered, pgbench's per-script and per-command figures, and its
// disturbance windows. It reads the step alone, so a run prints it as the
// step ends.
func writeStep(p page, s result.Step, sa compare.StepAnalysis) {
	heading, line := prose.Count(s.Clients, "client"), StepLine(s)
	if s.Round > 0 {
		heading = fmt.Sprintf("round %d, %s", s.Round, heading)
		line = fmt.Sprintf("round %d: %s", s.Round, line)
	}
	p.step(heading, line)
	writeEvidence(p, s, sa.Figures)
	if len(s.Scripts) > 1 {
		p.lines(scriptLines(s))
	}
	if len(s.Commands) > 0 {
		p.lines(commandLines(s))
	}
	if len(s.Disturbances) > 0 {
		p.lines(disturbanceLines(s))
	}
	for i, o := range s.Outages {
		mix := "; the step's figures mix before, without and after it"
		if o.Pooler != "" {
			mix = "; the step's figures are of the time before it"
		}
		p.lines([]string{sa.Outages[i] + mix})
	}
	p.blank()
}

// scriptLines are each weighted script's share, as pgbench prints them.
func scriptLines(s result.Step) []string {
	var total, weights int64
	for _, sc := range s.Scripts {
		total += sc.Transactions
		weights += int64(sc.Weight)
	}
	var out []string
	for i, sc := range s.Scripts {
		out = append(out, fmt.Sprintf("SQL script %d: %s", i+1, sc.Name),
			fmt.Sprintf(" - weight: %d (targets %.1f%% of total)", sc.Weight, ratio(int64(sc.Weight), weights)),
			fmt.Sprintf(" - %d transactions (%.1f%% of total, tps = %f)", sc.Transactions, ratio(sc.Transactions, total), sc.TPS),
			fmt.Sprintf(" - number of failed transactions: %d (%.3f%%)", sc.Failed, ratio(sc.Failed, sc.Transactions+sc.Failed)),
			fmt.Sprintf(" - latency average = %.3f ms", sc.LatMeanMs),
			fmt.Sprintf(" - latency stddev = %.3f ms", sc.LatStddevMs))
	}
	return out
}

// commandLines are per-command latencies, as pgbench -r prints them.
func commandLines(s result.Step) []string {
	var out []string
	cur := ""
	for _, c := range s.Commands {
		if c.Script != cur {
			cur = c.Script
			out = append(out, fmt.Sprintf("statement latencies in milliseconds, failures and retries (%s):", cur))
		}
		out = append(out, fmt.Sprintf("  %10.3f  %8d  %8d  %s", c.MeanMs, c.Failed, c.Retries, c.Text))
	}
	return out
}

// disturbanceLines say, for each disturbance window of a step, what it did
// and the workload before, during and after it.
func disturbanceLines(s result.Step) []string {
	var out []string
	for _, d := range s.Disturbances {
		line := fmt.Sprintf("disturbance %s (%d session%s): %d iterations in %.1f s (%.1f/s), %d errors",
			d.Spec, d.Sessions, prose.Plural(d.Sessions), d.Iterations, d.RanS, d.Rate, d.Errors)
		if d.CutOff > 0 {
			line += fmt.Sprintf(", %d cut off at the end", d.CutOff)
		}
		out = append(out, line)
		for _, e := range d.ErrorMessages {
			out = append(out, fmt.Sprintf("  error (%d×): %s", e.Count, e.Message))
		}
		e := d.Effect
		if e == nil {
			out = append(out, "  the window did not run")
			continue
		}
		for _, ph := range []struct {
			name string
			p    *result.Phase
		}{{"before", e.Before}, {"during", e.During}, {"after", e.After}} {
			if ph.p == nil {
				out = append(out, fmt.Sprintf("  %-7s -", ph.name))
				continue
			}
			p := ph.p
			out = append(out, fmt.Sprintf("  %-7s %5.1f-%5.1f s  %10.1f tps  lat %.3f ms  p99 %.3f ms  %d failed",
				ph.name, p.FromS, p.ToS, p.TPS, p.LatMeanMs, p.LatP99Ms, p.Failed))
		}
		if e.TPS != nil {
			out = append(out, fmt.Sprintf("  during/before: tps %s, latency %s (%s)", windowChange(e.TPS), windowChange(e.Latency), intervalNote(e.TPS)))
		}
		if e.AfterTPS != nil {
			out = append(out, fmt.Sprintf("  after/before:  tps %s (%s)", windowChange(e.AfterTPS), afterNote(e.AfterTPS)))
		}
		for _, warn := range e.Warnings {
			out = append(out, "  note: "+warn)
		}
	}
	return out
}

// windowChange formats a change as "-24.9% ± 3.1%".
func windowChange(c *result.WindowChange) string {
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

// afterNote is intervalNote for the change after a window.
func afterNote(c *result.WindowChange) string {
	if c.Lo == nil || c.Hi == nil {
		return "no interval: too few seconds before or after"
	}
	return fmt.Sprintf("%g%% interval from batch means of %.2g s: %d before, %d after", 100*c.Confidence, c.BatchS, c.BatchesBefore, c.BatchesDuring)
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
			return windowChange(c)
		}
		parts = append(parts, d.Name+" "+windowChange(c))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// loudSteal is the steal time, as a share of the machine, from which a
// step's line says how much of it the hypervisor gave to other guests.
const loudSteal = 0.001

// instructions are the step's counted instructions, nil when none were.
func instructions(s result.Step) *result.Instructions {
	if s.Probes == nil || s.Probes.Instructions() == nil || s.Probes.Instructions().Transactions <= 0 {
		return nil
	}
	return s.Probes.Instructions()
}
