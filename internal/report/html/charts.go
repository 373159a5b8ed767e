package html

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The charts are drawn by gonum.org/v1/plot into SVG, then passed through
// sanitizeSVG, which rewrites them from an allowlist of elements and
// attributes before they are inlined in the page.

// Chart sizes, in points; the page scales them to its width.
const (
	chartW      = vg.Length(480)
	chartH      = vg.Length(270)
	panelH      = vg.Length(115)
	barChartH   = vg.Length(250)
	maxTickRuns = 14 // client counts labelled one by one up to this many
)

// seriesColors are the Okabe-Ito colours, told apart with most kinds of
// colour blindness, for one line per file or target.
var seriesColors = []color.RGBA{
	{0x00, 0x72, 0xB2, 0xff}, // blue
	{0xD5, 0x5E, 0x00, 0xff}, // vermillion
	{0x00, 0x9E, 0x73, 0xff}, // green
	{0xCC, 0x79, 0xA7, 0xff}, // reddish purple
	{0xE6, 0x9F, 0x00, 0xff}, // orange
	{0x56, 0xB4, 0xE9, 0xff}, // sky blue
	{0x55, 0x55, 0x55, 0xff}, // grey
	{0xF0, 0xE4, 0x42, 0xff}, // yellow
}

func seriesColor(i int) color.RGBA { return seriesColors[i%len(seriesColors)] }

// Parts of the machine's CPU and wait classes, in their bars' colours.
var (
	cpuColors = map[string]color.RGBA{
		"server": {0x00, 0x72, 0xB2, 0xff}, "load generator": {0xE6, 0x9F, 0x00, 0xff}, "pooler": {0xCC, 0x79, 0xA7, 0xff},
		"probes": {0x55, 0x55, 0x55, 0xff}, "other": {0xB0, 0xB0, 0xB0, 0xff}, "idle": {0xF2, 0xF2, 0xF2, 0xff},
	}
	waitColors = map[string]color.RGBA{
		"CPU": {0x00, 0x9E, 0x73, 0xff}, "LWLock": {0xD5, 0x5E, 0x00, 0xff}, "Lock": {0x99, 0x22, 0x22, 0xff},
		"IO": {0xE6, 0x9F, 0x00, 0xff}, "BufferPin": {0x88, 0x44, 0x00, 0xff}, "IPC": {0xCC, 0x79, 0xA7, 0xff},
		"Extension": {0x77, 0x55, 0xAA, 0xff}, "Timeout": {0x88, 0x88, 0x88, 0xff}, "Activity": {0xC8, 0xC8, 0xC8, 0xff},
		"Client": {0x56, 0xB4, 0xE9, 0xff},
	}
	otherWaitColor = color.RGBA{0x33, 0x33, 0x33, 0xff}
	// Translucent fills are NRGBA: color.RGBA is alpha-premultiplied.
	windowFill    = color.NRGBA{0xD5, 0x5E, 0x00, 0x38}
	notRunFill    = color.NRGBA{0x80, 0x80, 0x80, 0x48}
	failColor     = color.RGBA{0xCC, 0x00, 0x00, 0xff}
	incompleteRed = color.RGBA{0xB0, 0x00, 0x00, 0xff}
)

var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// newPlot is a plot in the page's sans-serif type, sizes in points.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sans, 11)
	p.X.Label.Text, p.Y.Label.Text = x, y
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, 9.5)
		a.Tick.Label.Font = font.From(sans, 8.5)
	}
	p.Legend.TextStyle.Font = font.From(sans, 8.5)
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.ThumbnailWidth = vg.Points(16)
	p.Legend.Padding = vg.Points(1.5)
	p.X.Tick.Marker, p.Y.Tick.Marker = cleanTicks, cleanTicks
	p.Add(plotter.NewGrid())
	return p
}

// cleanTicks are gonum's default ticks labelled with no trailing zeros.
var cleanTicks = plot.TickerFunc(func(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = tickLabel(ts[i].Value)
		}
	}
	return ts
})

// blankTicks mark the default ticks with no labels, for a panel whose
// axis the panel below labels.
var blankTicks = plot.TickerFunc(func(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		ts[i].Label = ""
	}
	return ts
})

func tickLabel(v float64) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// chartSVG draws plots stacked in a column, the x axes aligned, and
// returns the sanitised SVG.
func chartSVG(id, label string, w, h vg.Length, plots ...*plot.Plot) (template.HTML, error) {
	c := vgsvg.New(w, h)
	dc := draw.New(c)
	if len(plots) == 1 {
		plots[0].Draw(dc)
	} else {
		rows := make([][]*plot.Plot, len(plots))
		for i, p := range plots {
			rows[i] = []*plot.Plot{p}
		}
		tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadY: vg.Points(4)}
		canvases := plot.Align(rows, tiles, dc)
		for i, p := range plots {
			p.Draw(canvases[i][0])
		}
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return "", fmt.Errorf("chart %s: %w", id, err)
	}
	return sanitizeSVG(buf.Bytes(), id, label)
}

// clientTicks labels every client count of the sweep when there are few.
func clientTicks(p *plot.Plot, cs []int, log bool) {
	if log {
		p.X.Scale = plot.LogScale{}
	}
	if len(cs) <= maxTickRuns {
		var ticks []plot.Tick
		for _, c := range cs {
			ticks = append(ticks, plot.Tick{Value: float64(c), Label: strconv.Itoa(c)})
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
	} else if log {
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	if len(cs) > 0 {
		lo, hi := float64(cs[0]), float64(cs[len(cs)-1])
		if log {
			p.X.Min, p.X.Max = lo/1.15, hi*1.15
		} else {
			pad := math.Max((hi-lo)*0.05, 0.5)
			p.X.Min, p.X.Max = lo-pad, hi+pad
		}
	}
}

// scalingMetric picks what a scaling chart shows of a point.
type scalingMetric struct {
	id, title, ylabel string
	value             func(scalingPoint) (y float64, lo, hi *num, ok bool)
	rounds            func(scalingPoint) []num
}

var scalingMetrics = []scalingMetric{
	{"scaling-tps", "Throughput", "transactions per second",
		func(p scalingPoint) (float64, *num, *num, bool) { return float64(p.TPS), p.TPSLo, p.TPSHi, true },
		func(p scalingPoint) []num { return p.RoundTPS }},
	{"scaling-p99", "p99 latency", "ms",
		func(p scalingPoint) (float64, *num, *num, bool) { return float64(p.P99Ms), p.P99Lo, p.P99Hi, true },
		func(p scalingPoint) []num { return p.RoundP99 }},
	{"scaling-speedup", "Speedup over the first step", "× first step's tps",
		func(p scalingPoint) (float64, *num, *num, bool) {
			if p.Speedup == nil {
				return 0, nil, nil, false
			}
			return float64(*p.Speedup), nil, nil, true
		}, nil},
}

type errPoints struct {
	plotter.XYs
	lo, hi []float64
}

func (e errPoints) YError(i int) (float64, float64) {
	return e.XYs[i].Y - e.lo[i], e.hi[i] - e.XYs[i].Y
}

// scalingSVG draws one metric of every series against clients, the knee
// of each marked; speedup also draws the line of perfect scaling.
func scalingSVG(sc *scaling, m scalingMetric) (template.HTML, bool, error) {
	p := newPlot(m.title, "clients", m.ylabel)
	clientTicks(p, sc.Clients, sc.LogClients)
	p.Y.Min = 0
	drawn, multi := false, false
	ymax := 0.0
	for i, s := range sc.Series {
		col := seriesColor(i)
		var xys, hollow, knee plotter.XYs
		var bars errPoints
		var rounds plotter.XYs
		for _, pt := range s.Points {
			y, lo, hi, ok := m.value(pt)
			if !ok || math.IsNaN(y) {
				continue
			}
			xy := plotter.XY{X: float64(pt.Clients), Y: y}
			xys = append(xys, xy)
			ymax = math.Max(ymax, y)
			if hi != nil {
				ymax = math.Max(ymax, float64(*hi))
			}
			if pt.Incomplete && s.Rounds == 0 {
				hollow = append(hollow, xy)
			}
			if pt.Clients == s.Knee {
				knee = append(knee, xy)
			}
			if lo != nil && hi != nil {
				bars.XYs = append(bars.XYs, xy)
				bars.lo, bars.hi = append(bars.lo, float64(*lo)), append(bars.hi, float64(*hi))
			}
			if m.rounds != nil {
				for _, r := range m.rounds(pt) {
					rounds = append(rounds, plotter.XY{X: float64(pt.Clients), Y: float64(r)})
					ymax = math.Max(ymax, float64(r))
				}
			}
		}
		if len(xys) == 0 {
			continue
		}
		drawn = true
		multi = multi || len(xys) > 1
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return "", false, err
		}
		l.Color, l.Width = col, vg.Points(1.6)
		pts.Color, pts.Shape, pts.Radius = col, draw.CircleGlyph{}, vg.Points(2.6)
		p.Add(l, pts)
		p.Legend.Add(s.Label, l, pts)
		if len(rounds) > 0 {
			r, _ := plotter.NewScatter(rounds)
			light := color.NRGBA{col.R, col.G, col.B, 0x70}
			r.Color, r.Shape, r.Radius = light, draw.CircleGlyph{}, vg.Points(1.4)
			p.Add(r)
		}
		if len(bars.XYs) > 0 {
			eb, err := plotter.NewYErrorBars(bars)
			if err != nil {
				return "", false, err
			}
			eb.Color, eb.Width, eb.CapWidth = col, vg.Points(1), vg.Points(5)
			p.Add(eb)
		}
		if len(hollow) > 0 {
			h, _ := plotter.NewScatter(hollow)
			h.Color, h.Shape, h.Radius = incompleteRed, draw.RingGlyph{}, vg.Points(5)
			p.Add(h)
		}
		if len(knee) > 0 {
			k, _ := plotter.NewScatter(knee)
			k.Color, k.Shape, k.Radius = col, hollowBox{}, vg.Points(5.5)
			p.Add(k)
			lab, err := plotter.NewLabels(plotter.XYLabels{XYs: knee, Labels: []string{"knee"}})
			if err != nil {
				return "", false, err
			}
			lab.Offset = vg.Point{X: vg.Points(7), Y: vg.Points(-3)}
			for j := range lab.TextStyle {
				lab.TextStyle[j].Font = font.From(sans, 8.5)
				lab.TextStyle[j].Color = col
			}
			p.Add(lab)
		}
		if m.id == "scaling-speedup" {
			c0 := float64(s.Points[0].Clients)
			var ideal plotter.XYs
			for _, c := range sc.Clients {
				if float64(c) >= c0 {
					ideal = append(ideal, plotter.XY{X: float64(c), Y: float64(c) / c0})
				}
			}
			if i == 0 && len(ideal) > 1 {
				ymax = math.Max(ymax, ideal[len(ideal)-1].Y)
				il, _ := plotter.NewLine(ideal)
				il.Color, il.Width, il.Dashes = color.Gray{0x90}, vg.Points(1), []vg.Length{vg.Points(4), vg.Points(3)}
				p.Add(il)
				p.Legend.Add("perfect scaling", il)
			}
		}
	}
	// Speedup says nothing about a file of one step.
	if !drawn || (m.id == "scaling-speedup" && !multi) {
		return "", false, nil
	}
	if ymax > 0 {
		p.Y.Max = ymax * 1.08 // room above the highest point for its mark
	}
	svg, err := chartSVG(m.id, m.title+" against clients", chartW, chartH, p)
	return svg, true, err
}

// hollowBox is an unfilled square, the knee's mark.
type hollowBox struct{}

// DrawGlyph implements draw.GlyphDrawer.
func (hollowBox) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(1.4)})
	r := sty.Radius
	var p vg.Path
	p.Move(vg.Point{X: pt.X - r, Y: pt.Y - r})
	p.Line(vg.Point{X: pt.X + r, Y: pt.Y - r})
	p.Line(vg.Point{X: pt.X + r, Y: pt.Y + r})
	p.Line(vg.Point{X: pt.X - r, Y: pt.Y + r})
	p.Close()
	c.Stroke(p)
}

// timelineSVG draws a timeline in panels sharing the time axis:
// throughput, latency (mean and p99) and, when any transaction failed,
// failures; disturbance windows shaded and named in every panel.
func timelineSVG(t timeline) (template.HTML, error) {
	title := t.Title
	if len(t.Incomplete) > 0 {
		title += " (incomplete)"
	}
	xlabel := "seconds since the step's measured window began"
	if t.Clock == "run" {
		xlabel = "seconds since the run's first step began"
	}
	tps := newPlot(title, "", "tps")
	if len(t.Incomplete) > 0 {
		tps.Title.TextStyle.Color = incompleteRed
	}
	lat := newPlot("", xlabel, "latency ms")
	panels := []*plot.Plot{tps, lat}
	var fail *plot.Plot
	if t.Failed > 0 {
		lat.X.Label.Text = ""
		fail = newPlot("", xlabel, "failed / s")
		panels = append(panels, fail)
	}
	xmin, xmax, ymaxTPS, ymaxLat, ymaxFail := math.Inf(1), math.Inf(-1), 0.0, 0.0, 0.0
	for si, s := range t.Series {
		col := seriesColor(si)
		legend := true
		n := 0
		for _, seg := range s.Segments {
			n += len(seg)
		}
		dots := n <= maxDots
		for _, seg := range s.Segments {
			var xt, xm, x99, xf plotter.XYs
			for _, pt := range seg {
				mid := float64(pt.T) + float64(pt.Len)/2
				xmin, xmax = math.Min(xmin, float64(pt.T)), math.Max(xmax, float64(pt.T+pt.Len))
				xt = append(xt, plotter.XY{X: mid, Y: float64(pt.TPS)})
				xm = append(xm, plotter.XY{X: mid, Y: float64(pt.MeanMs)})
				x99 = append(x99, plotter.XY{X: mid, Y: float64(pt.P99Ms)})
				rate := 0.0
				if pt.Len > 0 {
					rate = float64(pt.Failed) / float64(pt.Len)
				}
				xf = append(xf, plotter.XY{X: mid, Y: rate})
				ymaxTPS = math.Max(ymaxTPS, float64(pt.TPS))
				ymaxLat = math.Max(ymaxLat, float64(pt.P99Ms))
				ymaxFail = math.Max(ymaxFail, rate)
			}
			lt, err := linePoints(xt, col, 1.5, nil, dots)
			if err != nil {
				return "", err
			}
			l99, err := linePoints(x99, col, 1.5, nil, dots)
			if err != nil {
				return "", err
			}
			lm, err := linePoints(xm, col, 1, []vg.Length{vg.Points(3), vg.Points(2)}, dots)
			if err != nil {
				return "", err
			}
			tps.Add(lt...)
			lat.Add(l99...)
			lat.Add(lm...)
			if fail != nil {
				lf, err := linePoints(xf, failColor, 1.2, nil, dots)
				if err != nil {
					return "", err
				}
				fail.Add(lf...)
			}
			if legend {
				if len(t.Series) > 1 {
					tps.Legend.Add(s.Label, lt[0].(plot.Thumbnailer))
				}
				lat.Legend.Add(latLegend(s.Label, len(t.Series), "p99"), l99[0].(plot.Thumbnailer))
				lat.Legend.Add(latLegend(s.Label, len(t.Series), "mean"), lm[0].(plot.Thumbnailer))
				legend = false
			}
		}
	}
	if math.IsInf(xmin, 1) {
		xmin, xmax = 0, 1
	}
	if t.NotRun != nil {
		xmax = math.Max(xmax, float64(t.NotRun.To))
	}
	for _, w := range t.Windows {
		xmax = math.Max(xmax, float64(w.To))
	}
	xmin = math.Min(xmin, 0)
	tops := []float64{ymaxTPS * 1.12, ymaxLat * 1.12, ymaxFail * 1.12}
	for i, p := range panels {
		p.X.Min, p.X.Max = xmin, xmax
		p.Y.Min, p.Y.Max = 0, math.Max(tops[i], 1e-9)
		if tops[i] == 0 {
			p.Y.Max = 1
		}
		if i < len(panels)-1 {
			p.X.Tick.Marker = blankTicks
		}
	}
	for i, p := range panels {
		for _, w := range t.Windows {
			if err := shade(p, float64(w.From), float64(w.To), p.Y.Max, windowFill); err != nil {
				return "", err
			}
		}
		if t.NotRun != nil {
			if err := shade(p, float64(t.NotRun.From), float64(t.NotRun.To), p.Y.Max, notRunFill); err != nil {
				return "", err
			}
		}
		for _, m := range t.Rounds {
			l, err := plotter.NewLine(plotter.XYs{{X: float64(m.At), Y: 0}, {X: float64(m.At), Y: p.Y.Max}})
			if err != nil {
				return "", err
			}
			l.Color, l.Width, l.Dashes = color.Gray{0x99}, vg.Points(0.6), []vg.Length{vg.Points(2), vg.Points(2)}
			p.Add(l)
		}
		if i != 0 {
			continue
		}
		var at plotter.XYs
		var names []string
		for _, m := range t.Rounds {
			at = append(at, plotter.XY{X: float64(m.At), Y: p.Y.Max})
			names = append(names, strings.TrimPrefix(m.Label, "round "))
		}
		for _, w := range t.Windows {
			name := w.Name
			if w.Target != "" {
				name = w.Target + ": " + name
			}
			at = append(at, plotter.XY{X: float64(w.From), Y: p.Y.Max})
			names = append(names, name)
		}
		if t.NotRun != nil {
			at = append(at, plotter.XY{X: float64(t.NotRun.From), Y: p.Y.Max})
			names = append(names, "not measured")
		}
		if len(at) > 0 {
			lab, err := plotter.NewLabels(plotter.XYLabels{XYs: at, Labels: names})
			if err != nil {
				return "", err
			}
			lab.Offset = vg.Point{X: vg.Points(2), Y: vg.Points(-10)}
			for j := range lab.TextStyle {
				lab.TextStyle[j].Font = font.From(sans, 8.5)
			}
			p.Add(lab)
		}
	}
	h := panelH * vg.Length(len(panels))
	return chartSVG(t.ID, "per-interval throughput and latency: "+t.Title, chartW, h+vg.Points(30), panels...)
}

func latLegend(label string, n int, what string) string {
	if n > 1 {
		return label + " " + what
	}
	return what
}

// maxDots is the most intervals a timeline series marks with a dot each:
// with more, the line shows them, and dots would only weigh the page.
const maxDots = 24

// linePoints is a line through xys, with a dot on each point if dots.
func linePoints(xys plotter.XYs, col color.RGBA, width float64, dashes []vg.Length, dots bool) ([]plot.Plotter, error) {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return nil, err
	}
	l.Color, l.Width, l.Dashes = col, vg.Points(width), dashes
	out := []plot.Plotter{l}
	if dots {
		s, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, err
		}
		s.Color, s.Shape, s.Radius = col, draw.CircleGlyph{}, vg.Points(1.8)
		out = append(out, s)
	}
	return out, nil
}

// shade fills the stretch from x0 to x1 of a panel.
func shade(p *plot.Plot, x0, x1, top float64, fill color.Color) error {
	if !(x1 > x0) {
		x1 = x0 + 0.01
	}
	poly, err := plotter.NewPolygon(plotter.XYs{{X: x0, Y: 0}, {X: x1, Y: 0}, {X: x1, Y: top}, {X: x0, Y: top}})
	if err != nil {
		return err
	}
	poly.Color = fill
	poly.LineStyle.Width = 0
	p.Add(poly)
	return nil
}

// stepNames label an evidence chart's bars: the client count, and the
// round in an A/B file.
func stepNames(e evidence) []string {
	var names []string
	for _, s := range e.Steps {
		n := strconv.Itoa(s.Clients)
		if s.Round > 0 {
			n = fmt.Sprintf("r%d·%d", s.Round, s.Clients)
		}
		names = append(names, n)
	}
	return names
}

// stackedSVG draws one stacked bar per step, parts in the given order.
func stackedSVG(id, title, ylabel string, e evidence, parts []string, colors func(string) color.Color, value func(stepEvidence, string) float64) (template.HTML, error) {
	p := newPlot(title, "clients", ylabel)
	p.Legend.Top, p.Legend.Left = true, false
	n := len(e.Steps)
	width := vg.Points(math.Min(36, 300/float64(max(n, 1))))
	var below *plotter.BarChart
	var legend []string
	bars := map[string]*plotter.BarChart{}
	for _, part := range parts {
		vs := make(plotter.Values, n)
		any := false
		for i, s := range e.Steps {
			vs[i] = value(s, part) * 100
			any = any || vs[i] > 0
		}
		if !any {
			continue
		}
		b, err := plotter.NewBarChart(vs, width)
		if err != nil {
			return "", err
		}
		b.Color = colors(part)
		b.LineStyle.Width = vg.Points(0.3)
		b.LineStyle.Color = color.Gray{0x80}
		if below != nil {
			b.StackOn(below)
		}
		below = b
		p.Add(b)
		bars[part] = b
		legend = append(legend, part)
	}
	// The legend lists the parts top of the stack first, as they appear.
	for i := len(legend) - 1; i >= 0; i-- {
		p.Legend.Add(legend[i], bars[legend[i]])
	}
	p.Y.Min, p.Y.Max = 0, 100
	p.NominalX(stepNames(e)...)
	if e.Steps[0].Round > 0 {
		p.X.Label.Text = "round · clients"
	}
	// Room on the right for the legend.
	p.X.Max = float64(n) - 0.5 + math.Max(1.6, float64(n)*0.4)
	return chartSVG(id, title, chartW, barChartH, p)
}

func cpuSVG(e evidence) (template.HTML, error) {
	parts := []string{"server", "load generator", "pooler", "probes", "other", "idle"}
	return stackedSVG("cpu-"+e.ID, "Where the machine's CPU went", "% of all cores", e, parts,
		func(s string) color.Color { return cpuColors[s] },
		func(s stepEvidence, part string) float64 {
			c := s.CPU
			if c == nil {
				return 0
			}
			switch part {
			case "server":
				return ptrVal(c.Server)
			case "load generator":
				return float64(c.Generator)
			case "pooler":
				return ptrVal(c.Pooler)
			case "probes":
				return float64(c.Probes)
			case "other":
				return float64(c.Other)
			}
			return float64(c.Idle)
		})
}

func waitsSVG(e evidence) (template.HTML, error) {
	var parts []string
	seen := map[string]bool{}
	for _, c := range waitClasses {
		seen[c] = true
		parts = append(parts, c)
	}
	for _, s := range e.Steps {
		for _, w := range s.Waits {
			if !seen[w.Name] {
				seen[w.Name] = true
				parts = append(parts, w.Name)
			}
		}
	}
	return stackedSVG("waits-"+e.ID, "Client backends' wait events by class", "% of samples", e, parts,
		func(s string) color.Color {
			if c, ok := waitColors[s]; ok {
				return c
			}
			return otherWaitColor
		},
		func(s stepEvidence, part string) float64 {
			for _, w := range s.Waits {
				if w.Name == part {
					return float64(w.Share)
				}
			}
			return 0
		})
}

func ptrVal(n *num) float64 {
	if n == nil {
		return 0
	}
	return float64(*n)
}
