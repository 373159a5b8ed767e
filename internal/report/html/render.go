package html

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"

	"github.com/pgscale/pgscale/internal/stats"
)

//go:embed page.tmpl
var pageTemplate string

//go:embed style.css
var styleCSS string

// templateFuncs are the functions the page's templates (and the probes'
// views) call.
var templateFuncs = template.FuncMap{
	"pct":     pct,
	"fmtnum":  fmtNum,
	"ptr":     func(n *num) float64 { return ptrVal(n) },
	"clients": clientsWord,
	"change": func(c *change) string {
		if c.Lo == nil || c.Hi == nil {
			return stats.FormatPercent(float64(c.Change)) + " (no interval)"
		}
		return stats.FormatChange(float64(c.Change), float64(*c.Lo), float64(*c.Hi))
	},
	"interval": func(lo, hi *num) string {
		if lo == nil || hi == nil {
			return ""
		}
		return fmt.Sprintf("[%s – %s]", fmtNum(float64(*lo)), fmtNum(float64(*hi)))
	},
	"join":  strings.Join,
	"deref": func(n *num) num { return *n },
	"note":  pointNote,
	"rounds": func(n int) string {
		if n <= 0 {
			return "–"
		}
		return fmt.Sprint(n)
	},
}

// tmpl is parsed once; it holds no state of a page.
var tmpl = template.Must(template.New("page").Funcs(templateFuncs).Parse(pageTemplate))

// view is what the template reads: the page, and the charts drawn from it.
type view struct {
	*page
	CSS    template.CSS
	Charts map[string]template.HTML
	// ScalingCharts are the scaling charts in order: each metric, per
	// panel when the page has several (scalingPanels).
	ScalingCharts []chartView
	Flames        []flameView
	Diffs         []diffView
	// StepTimelines are the sweeps' steps, shown side by side;
	// RunTimelines the A/B runs', each the page's width.
	StepTimelines, RunTimelines []timelineView
	// Data is the page again, for the JSON block at its end.
	Data *page
	// Script draws the flame graphs from Data; ScriptSrc is its hash, the
	// one script the page's Content-Security-Policy allows.
	Script    template.JS
	ScriptSrc string
}

// chartView is a chart and its id.
type chartView struct {
	ID  string
	SVG template.HTML
}

// scalingPanels splits the scaling curves into panels, one per A/B run
// (Panel) when the page has several, each on axes of its own: a 700 tps
// cell is no flat line beside a 20 000 tps one. Sweeps share one panel,
// the lock study's view of several targets against clients.
func scalingPanels(sc *scaling) []*scaling {
	var names []string
	by := map[string]*scaling{}
	for _, s := range sc.Series {
		p, ok := by[s.Panel]
		if !ok {
			p = &scaling{LogClients: sc.LogClients, Clients: sc.Clients}
			by[s.Panel] = p
			names = append(names, s.Panel)
		}
		p.Series = append(p.Series, s)
		p.PerCPU = p.PerCPU || s.PerCPU
	}
	if len(names) < 2 {
		return []*scaling{sc}
	}
	out := make([]*scaling, len(names))
	for i, n := range names {
		out[i] = by[n]
	}
	return out
}

// panelTitle names a panel by its series' run, "" for sweeps.
func panelTitle(sc *scaling) string {
	if p := sc.Series[0].Panel; p != "" {
		return p
	}
	return "sweeps"
}

// timelineView is a timeline and its chart.
type timelineView struct {
	timeline
	SVG template.HTML
}

// HasGraphs says whether some flame graph has frames to draw: the page
// then carries its script, and its policy allows it.
func (v *view) HasGraphs() bool {
	for _, f := range v.Flames {
		if len(f.Frames) > 0 && f.SameAs == "" && f.Missing == "" {
			return true
		}
	}
	for _, d := range v.Diffs {
		if len(d.Frames) > 0 && d.Missing == "" {
			return true
		}
	}
	return false
}

// HasFailures says whether any timeline has a failures panel.
func (v *view) HasFailures() bool {
	for _, t := range v.Timelines {
		if t.Failed > 0 {
			return true
		}
	}
	return false
}

// render draws the page's charts and executes the template.
func render(w io.Writer, p *page) error {
	v := &view{page: p, CSS: template.CSS(styleCSS), Charts: map[string]template.HTML{}, Data: p, Script: scriptJS(), ScriptSrc: scriptHash}
	if p.Scaling != nil {
		panels := scalingPanels(p.Scaling)
		for k, sc := range panels {
			for _, m := range scalingMetrics {
				pm := m
				if len(panels) > 1 {
					pm.id, pm.title = fmt.Sprintf("%s-%d", m.id, k), m.title+": "+panelTitle(sc)
				}
				svg, ok, err := scalingSVG(sc, pm)
				if err != nil {
					return err
				}
				if ok {
					v.Charts[pm.id] = svg
					v.ScalingCharts = append(v.ScalingCharts, chartView{pm.id, svg})
				}
			}
		}
	}
	for _, t := range p.Timelines {
		svg, err := timelineSVG(t)
		if err != nil {
			return err
		}
		if t.Clock == "run" {
			v.RunTimelines = append(v.RunTimelines, timelineView{t, svg})
		} else {
			v.StepTimelines = append(v.StepTimelines, timelineView{t, svg})
		}
	}
	for _, e := range p.Evidence {
		if e.HasCPU {
			svg, err := cpuSVG(e)
			if err != nil {
				return err
			}
			v.Charts["cpu-"+e.ID] = svg
		}
		if e.HasWaits {
			svg, err := waitsSVG(e)
			if err != nil {
				return err
			}
			v.Charts["waits-"+e.ID] = svg
		}
	}
	for _, pr := range p.Profiles {
		v.Flames = append(v.Flames, flameOf(pr))
	}
	for _, d := range p.FlameDiffs {
		v.Diffs = append(v.Diffs, diffOf(d))
	}
	if err := tmpl.Execute(w, v); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	return nil
}

// pointNote says what is special about a point of a scaling series.
func pointNote(s scalingSeries, p scalingPoint) string {
	var parts []string
	if p.Clients == s.Knee {
		parts = append(parts, "knee")
	}
	if p.Clients == s.Peak && len(s.Points) > 1 {
		parts = append(parts, "peak")
	}
	if s.Rounds > 0 {
		parts = append(parts, fmt.Sprintf("median of %d rounds", len(p.RoundTPS)))
	}
	switch {
	case p.LeftOut > 0:
		parts = append(parts, fmt.Sprintf("%d cut short, left out", p.LeftOut))
	case p.Incomplete:
		parts = append(parts, "incomplete")
	}
	return strings.Join(parts, "; ")
}

func pct(x num) string {
	switch f := float64(x); {
	case f > 0 && f < 0.005:
		return "<1%"
	case math.IsNaN(f):
		return "–"
	default:
		return fmt.Sprintf("%.0f%%", f*100)
	}
}

// fmtNum shows a figure with the digits that matter at its size.
func fmtNum(x any) string {
	var f float64
	switch v := x.(type) {
	case num:
		f = float64(v)
	case *num:
		if v == nil {
			return "–"
		}
		f = float64(*v)
	case float64:
		f = v
	case int:
		f = float64(v)
	case int64:
		f = float64(v)
	default:
		return fmt.Sprint(x)
	}
	a := math.Abs(f)
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return "–"
	case a >= 100:
		return fmt.Sprintf("%.0f", f)
	case a >= 10:
		return fmt.Sprintf("%.1f", f)
	case a >= 1:
		return fmt.Sprintf("%.2f", f)
	}
	return fmt.Sprintf("%.3f", f)
}
