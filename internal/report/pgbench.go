package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/pgscale/pgscale/internal/result"
)

// writePgbench writes each step of each file as pgbench prints its report
// at the end of a run, line for line in pgbench's words and order, and
// pgbench's closing line when the run was aborted.
func writePgbench(w io.Writer, d *Doc) error {
	if !d.Kind().analysis() {
		return notShown("pgbench", d)
	}
	d = d.analyzed()
	var b strings.Builder
	for _, in := range d.Files {
		for i := range in.File.Steps {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			PgbenchReport(&b, in.File, i)
			if PgbenchAborted(&in.File.Steps[i]) {
				b.WriteString(PgbenchAbortedLine + "\n")
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// PgbenchAbortedLine is what pgbench prints on stderr after the report of
// a run some client aborted.
const PgbenchAbortedLine = "pgbench: error: Run was aborted; the above results are incomplete."

// PgbenchAborted reports whether pgbench would call the step's run
// aborted: a client stopped on an error, or the step did not complete.
func PgbenchAborted(s *result.Step) bool { return !s.Complete || s.Summary.Aborted > 0 }

// pgbenchRun is what pgbench's report depends on beyond a step's figures.
type pgbenchRun struct {
	f                                  *result.File
	s                                  *result.Step
	maxTries, threads                  int
	rate, limit, measured, detailed, r bool
}

// PgbenchReport writes step i of f as pgbench's printResults does.
func PgbenchReport(b *strings.Builder, f *result.File, i int) {
	s := &f.Steps[i]
	w := f.Workload
	run := pgbenchRun{f: f, s: s, maxTries: w.MaxTries, threads: s.Clients,
		rate: w.RateTPS > 0, limit: w.LatencyLimitMs > 0, measured: true, r: len(s.Commands) > 0}
	if w.Threads > 0 {
		run.threads = min(w.Threads, s.Clients)
	}
	if p := f.Pgbench; p != nil {
		// pgbench shows the measured latency only under -P, -R or -L.
		run.measured = p.ProgressS > 0 || run.rate || run.limit
		run.detailed, run.r = p.FailuresDetailed, p.ReportPerCommand
	}
	sum := &s.Summary
	desc := "multiple scripts"
	if len(w.Scripts) == 1 {
		desc = scriptDesc(w.Scripts[0])
	}
	p := func(format string, args ...any) { fmt.Fprintf(b, format+"\n", args...) }
	p("transaction type: %s", desc)
	p("scaling factor: %d", w.Scale)
	if w.PartitionMethod != "" {
		p("partition method: %s\npartitions: %d", w.PartitionMethod, w.Partitions)
	}
	p("query mode: %s", w.Protocol)
	p("number of clients: %d", s.Clients)
	p("number of threads: %d", run.threads)
	if run.maxTries != 0 {
		p("maximum number of tries: %d", run.maxTries)
	}
	if w.DurationS > 0 {
		p("duration: %d s", int(w.DurationS))
		p("number of transactions actually processed: %d", sum.Transactions)
	} else {
		p("number of transactions per client: %d", w.Transactions)
		p("number of transactions actually processed: %d/%d", sum.Transactions, w.Transactions*s.Clients)
	}
	total := sum.Transactions + sum.Skipped + sum.Failed
	if !run.failures(p, "", sum.Failed, sum.FailedByKind, sum.Retried, sum.Retries, total) {
		return
	}
	if run.rate && run.limit {
		p("number of transactions skipped: %d (%.3f%%)", sum.Skipped, pct(sum.Skipped, total))
	}
	if run.limit {
		late := 0.0
		if sum.Transactions > 0 {
			late = 100 * float64(sum.Late) / float64(sum.Transactions)
		}
		p("number of transactions above the %.1f ms latency limit: %d/%d (%.3f%%)", w.LatencyLimitMs, sum.Late, sum.Transactions, late)
	}
	switch {
	case !run.measured:
		incl := ""
		if sum.Failed > 0 {
			incl = " (including failures)"
		}
		p("latency average = %.3f ms%s", 1000*s.ElapsedS*float64(s.Clients)/float64(total), incl)
	case sum.Transactions > 0:
		p("latency average = %.3f ms", sum.Latency.MeanMs)
		p("latency stddev = %.3f ms", sum.Latency.StddevMs)
	}
	if run.rate {
		p("rate limit schedule lag: avg %.3f (max %.3f) ms", sum.LagMeanMs, sum.LagMaxMs)
	}
	if w.Connect {
		p("average connection time = %.3f ms", sum.ConnMeanMs)
		p("tps = %f (including reconnection times)", sum.TPS)
	} else {
		p("initial connection time = %.3f ms", sum.InitialConnectMs)
		p("tps = %f (without initial connection time)", sum.TPS)
	}
	if len(w.Scripts) > 1 {
		run.perScript(p)
	} else if run.r {
		run.commands(p, "", 0)
	}
}

// failures writes the failed, failure kinds and retries lines (prefix is
// " - " for a script's), and reports whether pgbench goes on: it stops
// here when nothing completed.
func (run *pgbenchRun) failures(p func(string, ...any), prefix string, failed int64, byKind map[string]int64, retried, retries, total int64) bool {
	p(prefix+"number of failed transactions: %d (%.3f%%)", failed, pct(failed, total))
	if run.detailed {
		p(prefix+"number of serialization failures: %d (%.3f%%)", byKind["serialization"], pct(byKind["serialization"], total))
		p(prefix+"number of deadlock failures: %d (%.3f%%)", byKind["deadlock"], pct(byKind["deadlock"], total))
		// pgbench 17 aborts the client on any other error: pgscale's
		// other failures (--continue-on-error, a lost connection) get
		// pgbench 18's line, only when there are some.
		if other := byKind["other"] + byKind["connection"]; other > 0 {
			p(prefix+"number of other failures: %d (%.3f%%)", other, pct(other, total))
		}
	}
	if run.maxTries != 1 {
		p(prefix+"number of transactions retried: %d (%.3f%%)", retried, pct(retried, total))
		p(prefix+"total number of retries: %d", retries)
	}
	return prefix != "" || total-failed > 0
}

// perScript writes pgbench's section for each of several scripts.
func (run *pgbenchRun) perScript(p func(string, ...any)) {
	w, s := &run.f.Workload, run.s
	totalWeight := 0
	for _, sc := range w.Scripts {
		totalWeight += sc.Weight
	}
	for i, sc := range w.Scripts {
		var st result.ScriptStat
		if i < len(s.Scripts) {
			st = s.Scripts[i]
		}
		p("SQL script %d: %s", i+1, scriptDesc(sc))
		p(" - weight: %d (targets %.1f%% of total)", sc.Weight, 100*float64(sc.Weight)/float64(totalWeight))
		tps := 0.0
		if s.ElapsedS > 0 {
			tps = float64(st.Transactions) / s.ElapsedS
		}
		p(" - %d transactions (%.1f%% of total, tps = %f)", st.Transactions, pct(st.Transactions, s.Summary.Transactions), tps)
		total := st.Transactions + st.Skipped + st.Failed
		run.failures(p, " - ", st.Failed, st.FailedByKind, st.Retried, st.Retries, total)
		if run.rate && run.limit {
			p(" - number of transactions skipped: %d (%.3f%%)", st.Skipped, pct(st.Skipped, total))
		}
		if st.Transactions > 0 {
			p(" - latency average = %.3f ms", st.LatMeanMs)
			p(" - latency stddev = %.3f ms", st.LatStddevMs)
		}
		if run.r {
			run.commands(p, " - ", i)
		}
	}
}

// commands writes pgbench's -r lines for script si.
func (run *pgbenchRun) commands(p func(string, ...any), prefix string, si int) {
	what := " and failures"
	if run.maxTries != 1 {
		what = ", failures and retries"
	}
	p("%sstatement latencies in milliseconds%s:", prefix, what)
	for _, c := range run.s.Commands {
		if c.ScriptIndex != si {
			continue
		}
		text := c.FirstLine
		if text == "" {
			text = c.Text
		}
		if run.maxTries == 1 {
			p("   %11.3f  %10d  %s", c.MeanMs, c.Failed, text)
		} else {
			p("   %11.3f  %10d  %10d  %s", c.MeanMs, c.Failed, c.Retries, text)
		}
	}
}

// scriptDesc is pgbench's name for a script.
func scriptDesc(sc result.Script) string {
	if sc.Description != "" {
		return sc.Description
	}
	return sc.Name
}

// pct is 100·a/b as pgbench computes it: NaN when b is 0.
func pct(a, b int64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return 100 * float64(a) / float64(b)
}
