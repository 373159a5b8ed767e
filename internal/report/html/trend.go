package html

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"math"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

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

// The history chart's size, in points; the page scales it to its width.
const (
	trendW = vg.Length(720)
	trendH = vg.Length(250)
)

//go:embed trend.tmpl
var trendTemplate string

var trendTmpl = template.Must(template.New("trend").Funcs(template.FuncMap{
	"fmtnum": fmtNum,
	"change": func(c *trendChangeJSON) string {
		return stats.FormatChange(float64(c.Change), float64(c.Lo), float64(c.Hi))
	},
	"when": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
	"ok":   func(n num) bool { return !math.IsNaN(float64(n)) && !math.IsInf(float64(n), 0) },
}).Parse(trendTemplate))

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
	// ChartID names the chart, for the page and its tests.
	ChartID string `json:"chart"`
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
}

// trendView is what the template reads.
type trendView struct {
	*trendPage
	CSS    template.CSS
	Charts map[string]template.HTML
	Data   *trendPage
}

// WriteTrend renders a history page on w: per series a chart of its values
// over the runs (intervals as error bars, the segments' means, change
// points marked, each point's commit, value and time on hover) and a table
// of the points, all drawn in Go and inlined, with no script.
func WriteTrend(w io.Writer, t Trend) error {
	if len(t.Series) == 0 {
		return errors.New("html history: no series")
	}
	p := &trendPage{Title: t.Title, Store: t.Store}
	v := &trendView{trendPage: p, CSS: template.CSS(styleCSS + trendCSS), Charts: map[string]template.HTML{}, Data: p}
	for _, s := range t.Series {
		js := trendSeriesJSON{ID: s.ID, Key: s.Key, Title: s.Title, Measure: s.Measure, Unit: s.Unit, HigherIsBetter: s.HigherIsBetter,
			ChartID: fmt.Sprintf("trend-%d", s.ID)}
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
				From: s.Points[c.Index-1].Short, To: s.Points[c.Index].Short})
		}
		for i, pt := range js.Points {
			js.Rows = append(js.Rows, trendRow{trendPointJSON: pt, Run: i + 1})
		}
		for i := range js.Changes {
			js.Rows[js.Changes[i].Index].Change = &js.Changes[i]
		}
		svg, err := trendSVG(js)
		if err != nil {
			return err
		}
		v.Charts[js.ChartID] = svg
		p.Series = append(p.Series, js)
	}
	if err := trendTmpl.Execute(w, v); err != nil {
		return fmt.Errorf("html history: %w", err)
	}
	return nil
}

// Colours of the change marks: a change in the bad direction, in the good.
var (
	worseColor  = color.RGBA{0xB0, 0x00, 0x00, 0xff}
	betterColor = color.RGBA{0x00, 0x70, 0x4A, 0xff}
	meanColor   = color.RGBA{0x55, 0x55, 0x55, 0xff}
)

// trendSVG draws one series against run number: the values joined by a
// line, their intervals as error bars, each segment's mean between change
// points as a grey line, and each change point as a vertical line labelled
// with the change, red when it is for the worse. A transparent circle over
// every point and a band over every change line carry a <title>, so the
// browser shows the commit, value and time on hover.
func trendSVG(s trendSeriesJSON) (template.HTML, error) {
	p := newPlot(s.Title, "run (oldest first)", s.Measure+" ("+s.Unit+")")
	n := len(s.Points)
	var xys plotter.XYs
	var bars errPoints
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for i, pt := range s.Points {
		xy := plotter.XY{X: float64(i + 1), Y: float64(pt.Value)}
		xys = append(xys, xy)
		ymin, ymax = math.Min(ymin, xy.Y), math.Max(ymax, xy.Y)
		if lo, hi := float64(pt.Lo), float64(pt.Hi); !math.IsNaN(lo) && !math.IsNaN(hi) {
			bars.XYs = append(bars.XYs, xy)
			bars.lo, bars.hi = append(bars.lo, lo), append(bars.hi, hi)
			ymin, ymax = math.Min(ymin, lo), math.Max(ymax, hi)
		}
	}
	col := seriesColor(0)
	l, pts, err := plotter.NewLinePoints(xys)
	if err != nil {
		return "", fmt.Errorf("chart %s: %w", s.ChartID, err)
	}
	l.Color, l.Width = col, vg.Points(1.2)
	pts.Color, pts.Shape, pts.Radius = col, draw.CircleGlyph{}, vg.Points(2.4)
	p.Add(l, pts)
	if len(bars.XYs) > 0 {
		eb, err := plotter.NewYErrorBars(bars)
		if err != nil {
			return "", fmt.Errorf("chart %s: %w", s.ChartID, err)
		}
		eb.Color, eb.Width, eb.CapWidth = col, vg.Points(0.8), vg.Points(4)
		p.Add(eb)
	}
	// The segments' means, from the change points' before and after.
	start := 0
	for i, c := range s.Changes {
		if err := meanLine(p, start, c.Index, float64(c.Before)); err != nil {
			return "", err
		}
		start = c.Index
		if i == len(s.Changes)-1 {
			if err := meanLine(p, start, n, float64(c.After)); err != nil {
				return "", err
			}
		}
	}
	pad := (ymax - ymin) * 0.12
	if pad == 0 {
		pad = math.Abs(ymax)*0.05 + 1e-9
	}
	p.Y.Min, p.Y.Max = ymin-pad, ymax+2.2*pad // room above for the change labels
	p.X.Min, p.X.Max = 0.5, float64(n)+0.5
	for _, c := range s.Changes {
		x := float64(c.Index) + 0.5
		mark := betterColor
		if c.Worse {
			mark = worseColor
		}
		vl, err := plotter.NewLine(plotter.XYs{{X: x, Y: p.Y.Min}, {X: x, Y: p.Y.Max}})
		if err != nil {
			return "", err
		}
		vl.Color, vl.Width, vl.Dashes = mark, vg.Points(1.4), []vg.Length{vg.Points(4), vg.Points(2)}
		p.Add(vl)
		lab, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: x, Y: p.Y.Max}}, Labels: []string{stats.FormatPercent(float64(c.Change))}})
		if err != nil {
			return "", err
		}
		lab.Offset = vg.Point{X: vg.Points(3), Y: vg.Points(-11)}
		for j := range lab.TextStyle {
			lab.TextStyle[j].Font = font.From(sans, 8.5)
			lab.TextStyle[j].Color = mark
		}
		p.Add(lab)
	}
	p.X.Tick.Marker = runTicks(n)

	c := vgsvg.New(trendW, trendH)
	dc := draw.New(c)
	p.Draw(dc)
	da := p.DataCanvas(dc)
	tx, ty := p.Transforms(&da)
	var raw bytes.Buffer
	if _, err := c.WriteTo(&raw); err != nil {
		return "", fmt.Errorf("chart %s: %w", s.ChartID, err)
	}
	// The hover layer, in the SVG's own coordinates (y down from the top).
	var hover strings.Builder
	hover.WriteString(`<g>`)
	yTop, yBottom := trendH.Points()-ty(p.Y.Max).Points(), trendH.Points()-ty(p.Y.Min).Points()
	for _, ch := range s.Changes {
		x := tx(float64(ch.Index) + 0.5).Points()
		title := fmt.Sprintf("change %s between %s and %s, p=%.2g", stats.FormatChange(float64(ch.Change), float64(ch.Lo), float64(ch.Hi)), ch.From, ch.To, float64(ch.P))
		if ch.Acknowledged {
			title += " (acknowledged)"
		}
		fmt.Fprintf(&hover, `<rect x="%.2f" y="%.2f" width="6" height="%.2f" fill="transparent"><title>%s</title></rect>`,
			x-3, yTop, yBottom-yTop, attrEscape(title))
	}
	for i, pt := range s.Points {
		x, y := tx(float64(i+1)).Points(), trendH.Points()-ty(float64(pt.Value)).Points()
		title := fmt.Sprintf("%s: %s %s", pt.Commit, fmtNum(float64(pt.Value)), s.Unit)
		if lo, hi := float64(pt.Lo), float64(pt.Hi); !math.IsNaN(lo) && !math.IsNaN(hi) {
			title += fmt.Sprintf(" [%s – %s]", fmtNum(lo), fmtNum(hi))
		}
		title += fmt.Sprintf(", %s, run %d, result %d", pt.Time.UTC().Format("2006-01-02 15:04 UTC"), i+1, pt.Result)
		fmt.Fprintf(&hover, `<circle cx="%.2f" cy="%.2f" r="6" fill="transparent"><title>%s</title></circle>`, x, y, attrEscape(title))
	}
	hover.WriteString(`</g>`)
	svg := raw.String()
	end := strings.LastIndex(svg, "</svg>")
	if end < 0 {
		return "", fmt.Errorf("chart %s: no </svg>", s.ChartID)
	}
	svg = svg[:end] + hover.String() + svg[end:]
	return sanitizeSVG([]byte(svg), s.ChartID, s.Key)
}

// meanLine draws a segment's mean over runs from+1 to to.
func meanLine(p *plot.Plot, from, to int, mean float64) error {
	ml, err := plotter.NewLine(plotter.XYs{{X: float64(from) + 0.5, Y: mean}, {X: float64(to) + 0.5, Y: mean}})
	if err != nil {
		return err
	}
	ml.Color, ml.Width = meanColor, vg.Points(1.6)
	p.Add(ml)
	return nil
}

// runTicks labels the runs one by one when there are few, else every
// k-th, so the labels never crowd.
func runTicks(n int) plot.Ticker {
	step := 1
	for n/step > 20 {
		switch {
		case step == 1:
			step = 2
		case step == 2:
			step = 5
		default:
			step *= 2
		}
	}
	var ticks []plot.Tick
	for i := 1; i <= n; i++ {
		label := ""
		if i == 1 || i%step == 0 {
			label = fmt.Sprint(i)
		}
		ticks = append(ticks, plot.Tick{Value: float64(i), Label: label})
	}
	return plot.ConstantTicks(ticks)
}

// trendCSS is what a history page adds to the report's style.
const trendCSS = `
figure.trend svg { max-width: none; }
figure.trend svg circle[fill="transparent"]:hover { stroke: #1b1b1b; stroke-width: 1; }
table.points td.change { white-space: nowrap; }
tr.worse td.change { color: var(--bad); font-weight: 600; }
tr.better td.change { color: var(--good); }
`
