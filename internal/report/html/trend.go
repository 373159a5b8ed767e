package html

import (
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"time"

	"github.com/pgscale/pgscale/internal/stats"
)

// Trend is what a history page shows: series of a history store, each a
// measure over the runs that recorded it, with the change points found.
type Trend struct {
	// Title heads the page; Store says where the series are (passwords
	// redacted).
	Title, Store string
	Series       []TrendSeries
}

// TrendSeries is one series: its points in time order and its change
// points.
type TrendSeries struct {
	// ID is the series' number in its store; Key names it in full and
	// Title in short, over its chart.
	ID         int64
	Key, Title string
	// Measure and Unit say what the values are; HigherIsBetter which way
	// is better.
	Measure, Unit  string
	HigherIsBetter bool
	Points         []TrendPoint
	Changes        []TrendChange
}

// TrendPoint is one run's value.
type TrendPoint struct {
	// Value is the value; Lo and Hi bound its interval, NaN where there is
	// none. N counts the rounds behind it.
	Value, Lo, Hi float64
	N             int
	// Commit is the commit measured, or the label when none was recorded;
	// Short is how captions write it (a commit shortened).
	Commit, Short string
	// Time is when the run started; Result the stored result's number.
	Time   time.Time
	Result int64
}

// TrendChange is a change point: the first point after it, the means of
// the segments either side and the change with its interval.
type TrendChange struct {
	// Index is the first point after the change, counted from 0.
	Index int
	// Before and After are the means of the segments either side.
	Before, After float64
	// Change is After/Before − 1, within [Lo, Hi]; P is the detector's
	// p-value.
	Change, Lo, Hi, P float64
	// Acknowledged says the change is known (pgscale history ack).
	Acknowledged bool
}

//go:embed trend.tmpl
var trendTemplate string

var trendTmpl = template.Must(template.Must(template.New("trend").Funcs(template.FuncMap{
	"fmtnum": fmtNum,
	"change": func(c *trendChangeJSON) string {
		return stats.FormatChange(float64(c.Change), float64(c.Lo), float64(c.Hi))
	},
	"when": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
	"ok":   func(n num) bool { return !math.IsNaN(float64(n)) && !math.IsInf(float64(n), 0) },
	"box":  box,
}).Parse(trendTemplate)).Parse(chartTemplate))

// trendPage is the page as the template and the JSON block read it.
type trendPage struct {
	Title  string            `json:"title"`
	Store  string            `json:"store"`
	Series []trendSeriesJSON `json:"series"`
}

type trendSeriesJSON struct {
	ID             int64             `json:"id"`
	Key            string            `json:"key"`
	Title          string            `json:"title"`
	Measure        string            `json:"measure"`
	Unit           string            `json:"unit"`
	HigherIsBetter bool              `json:"higher_is_better"`
	Points         []trendPointJSON  `json:"points"`
	Changes        []trendChangeJSON `json:"changes"`
	// ChartID names the chart, for the page and its tests; Index is the
	// series' place in the data block, which charts.js draws it from.
	ChartID string `json:"chart"`
	Index   int    `json:"-"`
	// Rows are the points' table rows, for the template.
	Rows []trendRow `json:"-"`
}

// trendRow is one point in the table, with the change that starts there.
type trendRow struct {
	trendPointJSON
	Run    int
	Change *trendChangeJSON
}

type trendPointJSON struct {
	Value  num       `json:"value"`
	Lo     num       `json:"lo"`
	Hi     num       `json:"hi"`
	N      int       `json:"n"`
	Commit string    `json:"commit"`
	Short  string    `json:"-"`
	Time   time.Time `json:"time"`
	Result int64     `json:"result"`
}

type trendChangeJSON struct {
	// Index is the first point after the change, counted from 0.
	Index        int    `json:"index"`
	Before       num    `json:"before"`
	After        num    `json:"after"`
	Change       num    `json:"change"`
	Lo           num    `json:"lo"`
	Hi           num    `json:"hi"`
	P            num    `json:"p"`
	Worse        bool   `json:"worse"`
	Acknowledged bool   `json:"acknowledged,omitempty"`
	From         string `json:"from"`
	To           string `json:"to"`
	// Text is the change as the text formats write it ("-4.0% ± 1.1%").
	Text string `json:"text"`
}

// trendView is what the template reads: the page, its scripts (uPlot and
// charts.js) and their hashes, which its policy allows.
type trendView struct {
	*trendPage
	CSS       template.CSS
	Data      *trendPage
	Scripts   []pageScript
	ScriptSrc string
}

// WriteTrend renders a history page on w: per series a chart of its values
// over the runs (intervals as error bars, the segments' means, change
// points marked, each point's commit, value and time on hover), drawn in
// the browser by charts.js from the page's data block, and a table of the
// points, which reads without the script.
func WriteTrend(w io.Writer, t Trend) error {
	if len(t.Series) == 0 {
		return errors.New("html history: no series")
	}
	p := &trendPage{Title: t.Title, Store: t.Store}
	ss := []pageScript{uplotScript, chartsScript}
	v := &trendView{trendPage: p, CSS: template.CSS(styleCSS + trendCSS + uplotCSS), Data: p, Scripts: ss, ScriptSrc: scriptPolicy(ss)}
	for _, s := range t.Series {
		js := trendSeriesJSON{ID: s.ID, Key: s.Key, Title: s.Title, Measure: s.Measure, Unit: s.Unit, HigherIsBetter: s.HigherIsBetter,
			ChartID: fmt.Sprintf("trend-%d", s.ID), Index: len(p.Series)}
		for _, pt := range s.Points {
			js.Points = append(js.Points, trendPointJSON{Value: num(pt.Value), Lo: num(pt.Lo), Hi: num(pt.Hi), N: pt.N,
				Commit: pt.Commit, Short: pt.Short, Time: pt.Time.UTC(), Result: pt.Result})
		}
		for _, c := range s.Changes {
			if c.Index < 1 || c.Index >= len(s.Points) {
				return fmt.Errorf("html history: series %d: change point at %d of %d points", s.ID, c.Index, len(s.Points))
			}
			worse := c.Change < 0
			if !s.HigherIsBetter {
				worse = c.Change > 0
			}
			js.Changes = append(js.Changes, trendChangeJSON{Index: c.Index, Before: num(c.Before), After: num(c.After),
				Change: num(c.Change), Lo: num(c.Lo), Hi: num(c.Hi), P: num(c.P), Worse: worse, Acknowledged: c.Acknowledged,
				From: s.Points[c.Index-1].Short, To: s.Points[c.Index].Short, Text: stats.FormatChange(c.Change, c.Lo, c.Hi)})
		}
		for i, pt := range js.Points {
			js.Rows = append(js.Rows, trendRow{trendPointJSON: pt, Run: i + 1})
		}
		for i := range js.Changes {
			js.Rows[js.Changes[i].Index].Change = &js.Changes[i]
		}
		p.Series = append(p.Series, js)
	}
	if err := trendTmpl.Execute(w, v); err != nil {
		return fmt.Errorf("html history: %w", err)
	}
	return nil
}

// trendCSS is what a history page adds to the report's style.
const trendCSS = `
table.points td.change { white-space: nowrap; }
tr.worse td.change { color: var(--bad); font-weight: 600; }
tr.better td.change { color: var(--good); }
`
