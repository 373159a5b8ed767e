package html

import (
	"html/template"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

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
