package report

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/prose"
)

// Live is the output of a run as it goes, an observe.Observer: notices,
// step and round lines and, with Progress, pgbench's -P lines on Err; a
// sweep's header, each step's block as the step ends, and the sweep table
// and diagnosis at its end on Out — written by the text format's own
// functions, so a sweep's Out is exactly `pgscale report --format text` of
// its result file. A/B runs print their steps on Err: their Out is the
// comparison, rendered once the run is over.
type Live struct {
	Out, Err io.Writer
	// Progress prints a line per interval, as pgbench -P does.
	Progress bool

	mu sync.Mutex
}

// Observe renders one event; it may be called from several goroutines.
func (l *Live) Observe(e observe.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out strings.Builder
	var errs []string
	switch e := e.(type) {
	case observe.Notice:
		errs = append(errs, e.Text)
	case observe.RunStart:
		writeHead(textPage{&out}, e.Path, e.File)
	case observe.ABStart:
		errs = append(errs, "ab: "+abPlan(e))
	case observe.CellStart:
		errs = append(errs, fmt.Sprintf("cell %d/%d: %s", e.Index+1, e.Cells, e.Key))
	case observe.RoundStart:
		of := fmt.Sprint(e.Rounds)
		if e.Auto {
			of = fmt.Sprintf("at most %d, until decided", e.Rounds)
		}
		if e.Target == "" {
			errs = append(errs, fmt.Sprintf("round %d/%s: every target, in %v slices", e.Round, of, e.Slice))
		} else {
			errs = append(errs, fmt.Sprintf("round %d/%s: %s", e.Round, of, e.Target))
		}
	case observe.StepStart:
		if e.Round == 0 {
			errs = append(errs, fmt.Sprintf("step %d/%d: %s", e.Index+1, e.Steps, prose.Count(e.Clients, "client")))
		}
	case observe.Connecting:
		errs = append(errs, ConnectingLine(e))
	case observe.Interval:
		if l.Progress {
			errs = append(errs, ProgressLine(e))
		}
	case observe.StepEnd:
		if e.Target != "" {
			errs = append(errs, fmt.Sprintf("  %s: %s", e.Target, StepLine(e.Step)))
		} else {
			writeStep(textPage{&out}, e.Step, compare.AnalyzeStep(e.Step))
		}
	case observe.RunEnd:
		writeEnd(textPage{&out}, compare.AnalyzeFile(compare.Input{File: e.File}))
	}
	if out.Len() > 0 {
		io.WriteString(l.Out, out.String())
	}
	for _, s := range errs {
		fmt.Fprintln(l.Err, s)
	}
}

// ProgressLine formats one interval as pgbench's -P does, with the
// disturbance windows that opened or closed in it.
func ProgressLine(p observe.Interval) string {
	var b strings.Builder
	tps := 0.0
	if p.Length > 0 {
		tps = float64(p.Transactions) / p.Length.Seconds()
	}
	fmt.Fprintf(&b, "progress: %.1f s, %.1f tps, lat %.3f ms stddev %.3f, %d failed",
		p.Elapsed.Seconds(), tps, p.LatMeanMs, p.LatStddevMs, p.Failed)
	if p.Target != "" {
		b.WriteString(" (" + p.Target + ")")
	}
	if p.Rate {
		fmt.Fprintf(&b, ", lag %.3f ms", p.LagMeanMs)
	}
	if p.Limit {
		fmt.Fprintf(&b, ", %d skipped", p.Skipped)
	}
	if p.Tries {
		fmt.Fprintf(&b, ", %d retried, %d retries", p.Retried, p.Retries)
	}
	if p.Warmup {
		b.WriteString(" (warm-up)")
	}
	for _, e := range p.Edges {
		if e.Start {
			b.WriteString(" [" + e.Name + " started]")
		} else {
			b.WriteString(" [" + e.Name + " stopped]")
		}
	}
	return b.String()
}

// ConnectingLine says how far a step's connection phase has come:
// "connecting: 3 200 / 10 000".
func ConnectingLine(e observe.Connecting) string {
	s := fmt.Sprintf("connecting: %s / %s", groupDigits(e.Connected), groupDigits(e.Clients))
	if e.Target != "" {
		s += " (" + e.Target + ")"
	}
	return s
}

// groupDigits writes n with its digits in groups of three: 10 000.
func groupDigits(n int) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// abPlan says how long an A/B run will take.
func abPlan(e observe.ABStart) string {
	targets := len(e.Targets)
	layouts := ""
	if e.Reshuffle > 0 {
		layouts = fmt.Sprintf(", on %d cluster layouts (clusters re-created every %s; that time comes on top)",
			e.Layouts, prose.Count(e.Reshuffle, "round"))
	}
	rounds, about := fmt.Sprintf("%d rounds", e.Rounds), "≈"
	if e.Auto {
		rounds, about = fmt.Sprintf("until decided, at most %d rounds", e.Rounds), "≤"
	}
	if e.Slice > 0 {
		return fmt.Sprintf("%s × %d steps × (%d targets × %v in %v slices + %v warm-up) %s %v",
			rounds, len(e.Clients), targets, e.Duration, e.Slice, e.Warmup, about, e.Total) + layouts
	}
	s := fmt.Sprintf("%d targets × %s × %d steps", targets, rounds, len(e.Clients))
	if e.Duration > 0 {
		s += fmt.Sprintf(" × (%v + %v warm-up) %s %v", e.Duration, e.Warmup, about, e.Total)
	}
	return s + layouts
}
