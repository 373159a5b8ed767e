package html

import (
	"html/template"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

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
	// The baseline step is the first unless a later one does more per
	// client; the section's text says so, the axis has room for little.
	{"scaling-speedup", "Speedup over the baseline step", "× the baseline step",
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
	title := m.title
	if m.id == "scaling-speedup" && sc.PerCPU {
		title += ", per CPU-second the system had"
	}
	p := newPlot(title, "clients", m.ylabel)
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
