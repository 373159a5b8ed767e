package html

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"strconv"

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

func ptrVal(n *num) float64 {
	if n == nil {
		return 0
	}
	return float64(*n)
}
