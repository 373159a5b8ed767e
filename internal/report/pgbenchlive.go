package report

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/script"
)

// PgbenchLive is pgscale pgbench's output as the run goes, an
// observe.Observer printing what pgbench prints: its version line and,
// at the end, its report (PgbenchReport) on Out; the vacuum line, -P's
// progress lines, the clients' errors in pgbench's words and the server's
// notices on Err.
type PgbenchLive struct {
	Out, Err io.Writer
	// Progress prints -P's lines; Timestamp gives them Unix time
	// (--progress-timestamp).
	Progress, Timestamp bool
	// Vacuum prints pgbench's vacuum line before the run (not -n);
	// VacuumAll its line for -v.
	Vacuum, VacuumAll bool

	mu      sync.Mutex
	file    *result.File
	clients int
	abortBy int // 1 + the first client that aborted
}

// Observe renders one event; it may be called from several goroutines.
func (l *PgbenchLive) Observe(e observe.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch e := e.(type) {
	case observe.Notice:
		switch {
		case e.Failure != nil:
			l.failure(e.Failure)
		case e.Server:
			fmt.Fprintln(l.Err, e.Text)
		default:
			fmt.Fprintln(l.Err, "pgbench: "+e.Text)
		}
	case observe.RunStart:
		l.file = e.File
		fmt.Fprintf(l.Out, "pgbench (pgscale %s, server %s)\n", e.File.Pgscale, e.File.Target.ServerVersion)
	case observe.StepStart:
		l.clients = e.Clients
		if l.Vacuum {
			fmt.Fprintln(l.Err, "starting vacuum...end.")
			if l.VacuumAll {
				fmt.Fprintln(l.Err, "starting vacuum pgbench_accounts...end.")
			}
		}
	case observe.Interval:
		if l.Progress && !e.Warmup {
			fmt.Fprintln(l.Err, PgbenchProgressLine(e, l.stamp()))
		}
	case observe.RunEnd:
		l.end(e.File)
	}
}

// stamp is the progress line's time: Unix time with Timestamp, else none
// (the elapsed time).
func (l *PgbenchLive) stamp() time.Time {
	if l.Timestamp {
		return time.Now()
	}
	return time.Time{}
}

// end prints the report of each step, or pgbench's one line when
// --exit-on-abort stopped the run.
func (l *PgbenchLive) end(f *result.File) {
	if f.Pgbench != nil && f.Pgbench.ExitOnAbort && l.abortBy > 0 {
		thread := script.Deal(l.abortBy-1, l.clients, f.Workload.Threads)
		fmt.Fprintf(l.Err, "pgbench: error: Run was aborted due to an error in thread %d\n", thread)
		return
	}
	var b strings.Builder
	aborted := false
	for i := range f.Steps {
		if i > 0 {
			b.WriteString("\n")
		}
		PgbenchReport(&b, f, i)
		aborted = aborted || PgbenchAborted(&f.Steps[i])
	}
	io.WriteString(l.Out, b.String())
	if aborted || !f.Complete {
		fmt.Fprintln(l.Err, PgbenchAbortedLine)
	}
}

// failure prints a client error in pgbench's words.
func (l *PgbenchLive) failure(f *observe.Failure) {
	e := func(format string, args ...any) { fmt.Fprintf(l.Err, "pgbench: error: "+format+"\n", args...) }
	if !f.Abort {
		l.verbose(f)
		return
	}
	if l.abortBy == 0 {
		l.abortBy = f.Client + 1
	}
	switch f.Source {
	case "sql":
		e("client %d script %d aborted in command %d query %d: %s", f.Client, f.Script, f.Command, f.Query, f.Message)
	case "meta":
		if f.Message != f.Failed {
			e("%s", f.Message)
		}
		e("client %d aborted in command %d (%s) of script %d; %s", f.Client, f.Command, f.Verb, f.Script, f.Failed)
	case "gset":
		e("client %d script %d command %d query %d: %s", f.Client, f.Script, f.Command, f.Query, f.Message)
	default:
		e("client %d aborted: %s", f.Client, f.Message)
	}
}

// verbose prints a retried or failed transaction's error as pgbench's
// --verbose-errors does.
func (l *PgbenchLive) verbose(f *observe.Failure) {
	fmt.Fprintf(l.Err, "pgbench: client %d got an error in command %d (SQL) of script %d; %s\n", f.Client, f.Command, f.Script, f.Message)
	what := "ends the failed transaction"
	if f.Retry {
		what = "repeats the transaction after the error"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "pgbench: client %d %s (try %d", f.Client, what, f.Tries)
	if l.file != nil {
		if w := l.file.Workload; w.MaxTries != 0 {
			fmt.Fprintf(&b, "/%d", w.MaxTries)
		}
		if w := l.file.Workload; w.LatencyLimitMs > 0 {
			fmt.Fprintf(&b, ", %.3f%% of the maximum time of tries was used", 100*f.Elapsed.Seconds()*1000/w.LatencyLimitMs)
		}
	}
	b.WriteString(")")
	fmt.Fprintln(l.Err, b.String())
}

// PgbenchProgressLine formats one interval as pgbench's -P does; with at
// set (--progress-timestamp) the time is at's Unix time.
func PgbenchProgressLine(p observe.Interval, at time.Time) string {
	var b strings.Builder
	tps := 0.0
	if p.Length > 0 {
		tps = float64(p.Transactions) / p.Length.Seconds()
	}
	stamp := fmt.Sprintf("%.1f s", p.Elapsed.Seconds())
	if !at.IsZero() {
		stamp = fmt.Sprintf("%.3f s", float64(at.UnixMicro())/1e6)
	}
	fmt.Fprintf(&b, "progress: %s, %.1f tps, lat %.3f ms stddev %.3f, %d failed", stamp, tps, p.LatMeanMs, p.LatStddevMs, p.Failed)
	if p.Rate {
		fmt.Fprintf(&b, ", lag %.3f ms", p.LagMeanMs)
		if p.Limit {
			fmt.Fprintf(&b, ", %d skipped", p.Skipped)
		}
	}
	if p.Tries {
		fmt.Fprintf(&b, ", %d retried, %d retries", p.Retried, p.Retries)
	}
	return b.String()
}
