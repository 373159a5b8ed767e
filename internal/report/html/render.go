package html

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/pgscale/pgscale/internal/result"
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
	"clients": clientsWord,
	"sorted":  sortedKV,
	"change": func(c *result.WindowChange) string {
		if c.Lo == nil || c.Hi == nil {
			return stats.FormatPercent(c.Change) + " (no interval)"
		}
		return stats.FormatChange(c.Change, *c.Lo, *c.Hi)
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
	"box":   box,
	"rounds": func(n int) string {
		if n <= 0 {
			return "–"
		}
		return fmt.Sprint(n)
	},
}

// tmpl is parsed once; it holds no state of a page.
var tmpl = template.Must(template.Must(template.New("page").Funcs(templateFuncs).Parse(pageTemplate)).Parse(chartTemplate))

// view is what the template reads: the page, where its charts go, and
// the scripts it carries.
type view struct {
	*page
	CSS template.CSS
	// ScalingCharts are the scaling charts, a row per panel
	// (scalingPanels), each metric's chart in order.
	ScalingCharts [][]chartBox
	Flames        []flameView
	Diffs         []diffView
	// StepTimelines are the sweeps' steps, shown side by side;
	// RunTimelines the A/B runs', each the page's width.
	StepTimelines, RunTimelines []timelineView
	// Data is the page again, for the JSON block at its end.
	Data *page
	// Scripts are the page's own scripts, in order: uPlot and charts.js
	// where the page has a chart, flame.js where it has a flame graph,
	// sort.js where it has micro-benchmarks. ScriptSrc is their hashes,
	// which the Content-Security-Policy allows, and nothing else.
	Scripts   []pageScript
	ScriptSrc string
}

// timelineView is a timeline and its place in the data block's timelines.
type timelineView struct {
	timeline
	Index int
}

// Box is the timeline's chart.
func (t timelineView) Box() chartBox {
	title := t.Title
	if len(t.Incomplete) > 0 {
		title += " (incomplete)"
	}
	return box("timeline", t.ID, strconv.Itoa(t.Index), "", title)
}

// HasGraphs says whether some flame graph has frames to draw: the page
// then carries flame.js.
func (v *view) HasGraphs() bool {
	for _, f := range v.Flames {
		if len(f.Frames) > 0 && f.DrawnAt == "" && f.Missing == "" {
			return true
		}
	}
	for _, d := range v.Diffs {
		if len(d.Boxes) > 0 && d.Missing == "" {
			return true
		}
	}
	return false
}

// HasCharts says whether the page has a chart to draw: it then carries
// uPlot and charts.js.
func (v *view) HasCharts() bool {
	if len(v.ScalingCharts) > 0 || len(v.Timelines) > 0 {
		return true
	}
	for _, e := range v.Evidence {
		if e.HasCPU || e.HasWaits {
			return true
		}
		for _, s := range e.Steps {
			for _, p := range s.Parts {
				if c, ok := p.data.(charted); ok && c.charted() {
					return true
				}
			}
		}
	}
	return false
}

// charted is a probe's data that draws a chart.
type charted interface{ charted() bool }

// HasFailures says whether any timeline has a failures panel.
func (v *view) HasFailures() bool {
	for _, t := range v.Timelines {
		if t.Failed > 0 {
			return true
		}
	}
	return false
}

// render lays out the page's charts and scripts and executes the
// template.
func render(w io.Writer, p *page) error {
	v := &view{page: p, CSS: template.CSS(styleCSS), Data: p}
	if p.Scaling != nil {
		v.ScalingCharts = scalingCharts(p.Scaling)
	}
	for i, t := range p.Timelines {
		if t.Clock == "run" {
			v.RunTimelines = append(v.RunTimelines, timelineView{t, i})
		} else {
			v.StepTimelines = append(v.StepTimelines, timelineView{t, i})
		}
	}
	for _, pr := range p.Profiles {
		v.Flames = append(v.Flames, flameOf(pr))
	}
	for _, d := range p.FlameDiffs {
		v.Diffs = append(v.Diffs, diffOf(d))
	}
	if v.HasCharts() {
		v.CSS += template.CSS(uplotCSS)
		v.Scripts = append(v.Scripts, uplotScript, chartsScript)
	}
	if v.HasGraphs() {
		v.Scripts = append(v.Scripts, flameScript)
	}
	if len(p.Micro) > 0 {
		v.Scripts = append(v.Scripts, sortScript)
	}
	v.ScriptSrc = scriptPolicy(v.Scripts)
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
		parts = append(parts, fmt.Sprintf("geometric mean of %d rounds", len(p.RoundTPS)))
	}
	switch {
	case p.LeftOut > 0:
		parts = append(parts, fmt.Sprintf("%d cut short, left out", p.LeftOut))
	case p.Incomplete:
		parts = append(parts, "incomplete")
	}
	return strings.Join(parts, "; ")
}

// pct shows a share or a level (a figure, as figure takes it) as a whole
// percentage.
func pct(x any) string {
	f, _ := figure(x)
	switch {
	case f > 0 && f < 0.005:
		return "<1%"
	case math.IsNaN(f):
		return "–"
	default:
		return fmt.Sprintf("%.0f%%", f*100)
	}
}

// figure is x as a number: a num, a *num (NaN when nil), a float64 or
// an integer; ok is false for anything else.
func figure(x any) (f float64, ok bool) {
	switch v := x.(type) {
	case num:
		return float64(v), true
	case *num:
		if v == nil {
			return math.NaN(), true
		}
		return float64(*v), true
	case float64:
		return v, true
	case int:
		return float64(v), true
	case int64:
		return float64(v), true
	}
	return math.NaN(), false
}

// fmtNum shows a figure with the digits that matter at its size, of its
// value to six significant digits as the data block has it.
func fmtNum(x any) string {
	f, ok := figure(x)
	if !ok {
		return fmt.Sprint(x)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "–"
	}
	// The figure the data block holds (num): the charts' tooltips show
	// the same digits.
	f, _ = strconv.ParseFloat(strconv.FormatFloat(f, 'g', 6, 64), 64)
	a := math.Abs(f)
	switch {
	case a >= 100:
		return fmt.Sprintf("%.0f", f)
	case a >= 10:
		return fmt.Sprintf("%.1f", f)
	case a >= 1:
		return fmt.Sprintf("%.2f", f)
	}
	return fmt.Sprintf("%.3f", f)
}
