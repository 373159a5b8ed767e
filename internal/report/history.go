package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/trend"
)

// History is what `pgscale history show` renders: series of a store with
// all their points, and the change points found in each.
type History struct {
	// Store is where the series are, passwords redacted.
	Store string
	// Series are the series with their points, in key order.
	Series []trend.History
	// Changes holds, per series, every change point found in it,
	// acknowledged ones marked.
	Changes [][]trend.Change
}

// Series is what `pgscale history list` renders: the series of a store.
type Series struct {
	// Store is where the series are, passwords redacted.
	Store  string
	Series []trend.Series
}

// writeSeries writes the series of a store as a table: number, workload,
// label, clients, measure, machine, points, the newest value with its
// commit (or label) and time, and the acknowledged change.
func writeSeries(w io.Writer, l *Series) error {
	location, series := l.Store, l.Series
	var b strings.Builder
	if len(series) == 0 {
		fmt.Fprintf(&b, "no series in %s\n", location)
		_, err := io.WriteString(w, b.String())
		return err
	}
	fmt.Fprintf(&b, "%d series in %s\n\n", len(series), location)
	t := newTable("series", "workload", "label", "clients", "measure", "machine", "points", "last", "unit", "commit", "time", "acknowledged").alignRight(0, 3, 6, 7)
	for _, s := range series {
		acked := ""
		if s.AckedResult != 0 {
			acked = "at result " + strconv.FormatInt(s.AckedResult, 10)
		}
		clients := strconv.Itoa(s.Clients)
		if s.Micro() {
			clients = "-" // a micro-benchmark's measure
		}
		t.row(strconv.FormatInt(s.ID, 10), s.Workload, s.Label, clients, s.Measure, s.Machine,
			strconv.Itoa(s.Count), FormatValue(s.Last.Value), s.Unit, ShortCommit(s.Last.Name()), formatWhen(s.Last.Time), acked)
	}
	t.text(&b, 0)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeHistoryText writes each series' points as a table: value, interval
// and rounds, commit (or label), start time and result, and at the first
// point after each change point the change and its p-value.
func writeHistoryText(w io.Writer, h *History) error {
	var b strings.Builder
	for i, s := range h.Series {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "series %d: %s (%s, %s)\n", s.ID, s.Key, s.Unit, direction(s.HigherIsBetter))
		at := map[int]trend.Change{}
		for _, c := range h.Changes[i] {
			at[c.Index] = c
		}
		t := newTable("#", "value", "interval", "rounds", "commit", "time", "result", "change").alignRight(0, 1, 3, 6)
		for j, p := range s.Points {
			change := ""
			if c, ok := at[j]; ok {
				change = fmt.Sprintf("%s (p=%.2g)", stats.FormatChange(c.Change, c.Lo, c.Hi), c.P)
				if c.Acked {
					change += ", acknowledged"
				}
			}
			t.row(strconv.Itoa(j+1), FormatValue(p.Value), interval(p.Lo, p.Hi), strconv.Itoa(p.N), ShortCommit(p.Name()),
				formatWhen(p.Time), strconv.FormatInt(p.ResultID, 10), change)
		}
		t.text(&b, 2)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeCheck writes every change point found, with its size ± uncertainty,
// the segments either side, the commits it lies between, its status
// against the bounds and how to acknowledge it, then a summary line.
func writeCheck(w io.Writer, c *trend.Check) error {
	var b strings.Builder
	for i, ch := range c.Changes {
		a := c.Assessments[i]
		fmt.Fprintf(&b, "%s (series %d):\n", ch.Series.Key, ch.Series.ID)
		fmt.Fprintf(&b, "  %s, %s → %s %s over %d and %d runs, p=%.2g: %s\n", stats.FormatChange(ch.Change, ch.Lo, ch.Hi),
			FormatValue(ch.ChangePoint.Before), FormatValue(ch.ChangePoint.After), ch.Series.Unit, ch.NBefore, ch.NAfter, ch.P, checkStatus(a))
		fmt.Fprintf(&b, "  between %s and %s\n", pointWhere(ch.Before), pointWhere(ch.After))
		fmt.Fprintf(&b, "  known? pgscale history ack %d --result %d\n", ch.Series.ID, ch.After.ResultID)
	}
	if len(c.Changes) > 0 {
		b.WriteString("\n")
	}
	for _, w := range c.Warnings {
		fmt.Fprintf(&b, "note: %v\n", w)
	}
	b.WriteString(checkSummary(c) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// checkSummary sums the check up in one line: "2 change points in 8
// series of STORE since their acknowledged ones; 1 outside bounds: tps@c=2
// main -5.2% ± 1.1%, bound -2%".
func checkSummary(c *trend.Check) string {
	series := plural(c.Series, "series", "series")
	if len(c.Changes) == 0 {
		return fmt.Sprintf("no change point in %s of %s since their acknowledged ones", series, c.Store)
	}
	s := fmt.Sprintf("%s in %s of %s since their acknowledged ones", plural(len(c.Changes), "change point", "change points"), series, c.Store)
	var outside []string
	for i, a := range c.Assessments {
		if a.Outcome == stats.Fail {
			outside = append(outside, c.Changes[i].Series.Label+" "+a.String())
		}
	}
	if len(outside) > 0 {
		s += fmt.Sprintf("; %d outside bounds: %s", len(outside), strings.Join(outside, "; "))
	}
	return s
}

// checkStatus says which way a change point went and how it stands
// against its bound.
func checkStatus(a stats.Assessment) string {
	s := a.Effect.String()
	if a.Bound != nil {
		status := "within bounds"
		if a.Outcome == stats.Fail {
			status = "outside bounds"
		}
		s += ", " + status + " (bound " + boundText(a) + ")"
		if a.Reason != "" {
			s += ", uncertain"
		}
	}
	return s
}

// pointWhere names a point: "8c1e2f0 (result 10, 2026-12-01 09:40 UTC)".
func pointWhere(p trend.Point) string {
	return fmt.Sprintf("%s (result %d, %s UTC)", ShortCommit(p.Name()), p.ResultID, formatWhen(p.Time))
}

// ShortCommit shortens a full commit hash to git's seven digits, keeping a
// suffix such as "-dirty"; anything else (a label, a short hash) stays as
// it is.
func ShortCommit(s string) string {
	n := 0
	for n < len(s) && strings.IndexByte("0123456789abcdef", s[n]) >= 0 {
		n++
	}
	if n < 12 {
		return s
	}
	return s[:7] + s[n:]
}

func formatWhen(t time.Time) string { return t.UTC().Format("2006-01-02 15:04") }

// interval formats a point's interval, empty when it has none.
func interval(lo, hi float64) string {
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return ""
	}
	return "[" + FormatValue(lo) + ", " + FormatValue(hi) + "]"
}

func direction(higherIsBetter bool) string {
	if higherIsBetter {
		return stats.HigherIsBetter.String()
	}
	return stats.LowerIsBetter.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
