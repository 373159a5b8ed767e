package html

import (
	"fmt"
	"html/template"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

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
