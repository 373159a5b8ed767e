package html

import (
	"fmt"
	"html/template"
	"io"
	"math"

	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
)

// WriteBisect writes a bisect's log as one self-contained HTML page: the
// headline, the measure against commit order (each measured commit a
// point coloured by its class, a line where a culprit comes in), the
// culprits with their why and diff stat, and the steps. headline is the
// text report's (report.BisectHeadline).
func WriteBisect(w io.Writer, b *result.Bisect, headline string) error {
	v := bisectView{Log: b, Headline: headline, CSS: template.CSS(styleCSS), Chart: bisectChart(b)}
	if b.Change != nil {
		v.Change = stats.FormatChange(b.Change.Change, b.Change.Lo, b.Change.Hi)
	}
	for _, c := range b.Culprits {
		v.Culprits = append(v.Culprits, culpritView{BisectCulprit: c, Change: stats.FormatChange(c.Change.Change, c.Change.Lo, c.Change.Hi),
			Share: fmt.Sprintf("%.0f%%", 100*c.Share), Part: len(v.Culprits) + 1})
	}
	for _, s := range b.Steps {
		sv := stepView{BisectStep: s, Commit: short(s.Commit), Against: short(s.Lo), Class: s.Class}
		if s.Hi != "" {
			sv.Against += ".." + short(s.Hi)
		} else {
			sv.Class = "ends"
		}
		if !s.Complete {
			sv.Class = "incomplete"
		}
		for _, c := range []*result.BisectChange{s.FromLo, s.ToHi} {
			t := "–"
			if c != nil {
				t = stats.FormatChange(c.Change, c.Lo, c.Hi)
			}
			sv.Changes = append(sv.Changes, t)
		}
		v.Steps = append(v.Steps, sv)
	}
	return bisectTmpl.Execute(w, v)
}

type bisectView struct {
	Log      *result.Bisect
	Headline string
	Change   string
	CSS      template.CSS
	Chart    *bisectChartView
	Culprits []culpritView
	Steps    []stepView
}

type culpritView struct {
	result.BisectCulprit
	Change, Share string
	// Part is its place among the parts of a split change, from 1.
	Part int
}

type stepView struct {
	result.BisectStep
	Commit, Against, Class string
	Changes                []string
}

// bisectChartView is the chart of the measure against commit order, laid out
// in SVG coordinates.
type bisectChartView struct {
	W, H    int
	Points  []chartPoint
	Ticks   []chartTick
	Culprit []float64 // x of the line before each culprit
	Top     float64
	Bottom  float64
	Left    float64
	Right   float64
	Unit    string
}

type chartPoint struct {
	X, Y          float64
	Measured      bool
	Label, Title  string
	Class, Colour string
}

type chartTick struct {
	Y    float64
	Text string
}

// bisectColours are the colours of each class of commit.
var bisectColours = map[string]string{
	result.BisectGood: "#2e7d32", result.BisectBad: "#c62828", result.BisectPart: "#ef6c00",
	result.BisectNeither: "#6a1b9a", result.BisectSkipped: "#9e9e9e", result.BisectUnbuildable: "#9e9e9e",
}

// bisectChart lays out the chart; nil when no commit has a value.
func bisectChart(b *result.Bisect) *bisectChartView {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range b.Commits {
		if c.Value != nil {
			lo, hi = math.Min(lo, *c.Value), math.Max(hi, *c.Value)
		}
	}
	if math.IsInf(lo, 0) {
		return nil
	}
	if hi-lo < 1e-9*math.Abs(hi) || hi == lo {
		lo, hi = lo*0.999, hi*1.001
	}
	pad := (hi - lo) * 0.15
	lo, hi = lo-pad, hi+pad
	n := len(b.Commits)
	cv := &bisectChartView{W: max(480, 60*n+120), H: 320, Left: 90, Top: 20, Bottom: 250, Unit: b.Unit}
	cv.Right = float64(cv.W) - 70 // room for the last commit's slanted label
	x := func(i int) float64 {
		if n == 1 {
			return cv.Left
		}
		return cv.Left + (cv.Right-cv.Left)*float64(i)/float64(n-1)
	}
	y := func(v float64) float64 { return cv.Bottom - (cv.Bottom-cv.Top)*(v-lo)/(hi-lo) }
	for k := 0; k <= 4; k++ {
		v := lo + (hi-lo)*float64(k)/4
		cv.Ticks = append(cv.Ticks, chartTick{Y: y(v), Text: fmtNum(v)})
	}
	for i, c := range b.Commits {
		p := chartPoint{X: x(i), Y: cv.Bottom, Label: short(c.Hash), Class: c.Status, Colour: "#9e9e9e", Title: short(c.Hash) + " " + c.Subject}
		if col, ok := bisectColours[c.Status]; ok {
			p.Colour = col
		}
		if i == 0 {
			p.Colour = bisectColours[result.BisectGood]
		}
		if i == n-1 {
			p.Colour = bisectColours[result.BisectBad]
		}
		if c.Value != nil {
			p.Measured, p.Y = true, y(*c.Value)
			p.Title += fmt.Sprintf(": %s %s", fmtNum(*c.Value), b.Unit)
		}
		if c.Status != "" {
			p.Title += " (" + c.Status + ")"
		}
		cv.Points = append(cv.Points, p)
	}
	for _, c := range b.Culprits {
		if i := b.CommitIndex(c.Commit.Hash); i > 0 {
			cv.Culprit = append(cv.Culprit, (x(i)+x(i-1))/2)
		}
	}
	return cv
}

func short(h string) string { return result.BisectCommit{Hash: h}.Short() }

var bisectTmpl = template.Must(template.New("bisect").Funcs(templateFuncs).Funcs(template.FuncMap{
	"share": func(x float64) string { return fmt.Sprintf("%.0f%%", 100*x) },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Headline}}</title><style>{{.CSS}}
.bisect-chart text{font-size:11px;font-family:sans-serif}
.bisect-diff{white-space:pre;font-family:monospace;background:#f6f8fa;padding:.5em}
</style></head><body>
<h1>{{.Headline}}</h1>
<p>Bisect of <code>{{.Log.Target}}</code> ({{.Log.What}} of <code>{{.Log.Source}}</code>), <code>{{.Log.Good}}..{{.Log.Bad}}</code>: {{len .Log.Commits}} commits with the good end, judged by <b>{{.Log.Measure}}@{{.Log.Step}}</b> ({{if .Log.Lower}}lower{{else}}higher{{end}} is better{{if .Log.Counted}}, counted under Valgrind{{end}}).{{if .Change}} The change: <b>{{.Change}}</b> from the good end to the bad.{{end}}</p>
{{with .Chart}}<h2>{{$.Log.Measure}} against commit order</h2>
<svg class="bisect-chart" width="{{.W}}" height="{{.H}}" viewBox="0 0 {{.W}} {{.H}}" role="img" aria-label="{{$.Log.Measure}} of each commit measured, in commit order">
<line x1="{{.Left}}" y1="{{.Bottom}}" x2="{{.Right}}" y2="{{.Bottom}}" stroke="#555"/>
<line x1="{{.Left}}" y1="{{.Top}}" x2="{{.Left}}" y2="{{.Bottom}}" stroke="#555"/>
{{range .Ticks}}<line x1="{{$.Chart.Left}}" y1="{{.Y}}" x2="{{$.Chart.Right}}" y2="{{.Y}}" stroke="#eee"/><text x="{{$.Chart.Left}}" dx="-6" y="{{.Y}}" dy="4" text-anchor="end">{{.Text}}</text>
{{end}}<text x="14" y="{{.Top}}" dy="-6">{{.Unit}}</text>
{{range .Culprit}}<line x1="{{.}}" y1="{{$.Chart.Top}}" x2="{{.}}" y2="{{$.Chart.Bottom}}" stroke="#c62828" stroke-dasharray="4 3"/>
{{end}}{{range .Points}}{{if .Measured}}<circle cx="{{.X}}" cy="{{.Y}}" r="5" fill="{{.Colour}}"><title>{{.Title}}</title></circle>{{else}}<circle cx="{{.X}}" cy="{{.Y}}" r="3" fill="none" stroke="{{.Colour}}"><title>{{.Title}}</title></circle>{{end}}
<text transform="translate({{.X}},{{$.Chart.Bottom}}) rotate(45)" dx="6" dy="10">{{.Label}}</text>
{{end}}</svg>
<p>Filled: measured (green good, red bad, orange part of a split change, grey skipped); hollow: not measured. The dashed line is where the change comes in.</p>{{end}}
{{range $i, $c := .Culprits}}<h2>{{if gt (len $.Culprits) 1}}Part {{$c.Part}} of {{len $.Culprits}}{{else}}First bad commit{{end}}: <code>{{$c.Commit.Hash}}</code></h2>
<p>{{$c.Commit.Subject}}</p>
<p>Carries <b>{{$c.Change}}</b> ({{$c.Share}} of the change) against its parent <code>{{$c.Parent}}</code>.</p>
{{if $c.BisectCulprit.Change.Why}}<ul>{{range $c.BisectCulprit.Change.Why}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if $c.BisectCulprit.Change.Functions}}<table><tr><th>function</th><th>before</th><th>after</th><th>per transaction</th><th>of the change</th></tr>
{{range $c.BisectCulprit.Change.Functions}}<tr><td><code>{{if .Inside}}inside {{end}}{{.Function}}</code></td><td>{{fmtnum .Base}}</td><td>{{fmtnum .Cand}}</td><td>{{printf "%+.0f" .Delta}}</td><td>{{share .Share}}</td></tr>
{{end}}</table>{{end}}
<div class="bisect-diff">{{$c.DiffStat}}</div>
{{end}}{{range .Log.Unresolved}}<p><b>Unresolved</b> <code>{{.First}}..{{.Last}}</code>: {{.Why}}</p>
{{end}}<h2>Steps</h2>
<table><tr><th>#</th><th>commit</th><th>against</th><th>class</th><th>from lo</th><th>to hi</th><th>rounds</th><th>build s</th><th>measure s</th></tr>
{{range .Steps}}<tr title="{{.Why}}"><td>{{.N}}</td><td><code>{{.Commit}}</code></td><td><code>{{.Against}}</code></td><td>{{.Class}}</td>{{range .Changes}}<td>{{.}}</td>{{end}}<td>{{.Rounds}}</td><td>{{printf "%.0f" .BuildS}}</td><td>{{printf "%.0f" .MeasureS}}</td></tr>
{{end}}</table>
{{if not .Log.Complete}}<p><b>Incomplete:</b> {{.Log.Reason}}</p>{{end}}
</body></html>
`))
