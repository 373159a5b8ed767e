package report

import (
	"fmt"
	"io"

	"github.com/pgscale/pgscale/internal/report/html"
)

// writeHistoryHTML writes the series as one self-contained HTML page: per
// series a trend chart (points with intervals, change points marked, the
// commit on hover) and its points (internal/report/html).
func writeHistoryHTML(w io.Writer, h *History) error {
	t := html.Trend{Title: "pgscale history", Store: h.Store}
	for i, s := range h.Series {
		title := fmt.Sprintf("%s at %d clients, %s", s.Measure, s.Clients, s.Label)
		if s.Micro() {
			title = fmt.Sprintf("%s (%s), %s", s.Measure, s.Unit, s.Label)
		}
		ts := html.TrendSeries{ID: s.ID, Key: s.Key.String(), Title: title, Measure: s.Measure, Unit: s.Unit, HigherIsBetter: s.HigherIsBetter}
		for _, p := range s.Points {
			ts.Points = append(ts.Points, html.TrendPoint{Value: p.Value, Lo: p.Lo, Hi: p.Hi, N: p.N, Commit: p.Name(), Short: ShortCommit(p.Name()), Time: p.Time, Result: p.ResultID})
		}
		for _, c := range h.Changes[i] {
			ts.Changes = append(ts.Changes, html.TrendChange{Index: c.Index, Before: c.ChangePoint.Before, After: c.ChangePoint.After,
				Change: c.Change, Lo: c.Lo, Hi: c.Hi, P: c.P, Acknowledged: c.Acked})
		}
		t.Series = append(t.Series, ts)
	}
	return html.WriteTrend(w, t)
}
