package html_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/report/html"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/testenv"
)

// plotArea is where panel i of chart id draws, scrolled into view: its
// left, top, width and height in CSS pixels.
func plotArea(t *testing.T, ctx context.Context, id string, i int) []float64 {
	t.Helper()
	var a []float64
	for range 40 { // the charts are drawn in the frame after the page loads
		a = eval[[]float64](t, ctx, fmt.Sprintf(`(() => { const o = document.getElementById(%q).querySelectorAll(".u-over")[%d];
			if (!o) return []; o.scrollIntoView({block: "center"}); const r = o.getBoundingClientRect(); return [r.left, r.top, r.width, r.height] })()`, id, i))
		if len(a) == 4 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(a) != 4 || a[2] < 50 || a[3] < 30 {
		t.Fatalf("chart %s has no panel %d drawn: %v", id, i, a)
	}
	return a
}

// at is the point at fractions fx, fy of a plot area.
func at(a []float64, fx, fy float64) (float64, float64) { return a[0] + fx*a[2], a[1] + fy*a[3] }

// hover moves Chromium's mouse to fractions fx, fy of panel i of chart id
// and returns what the tooltip says, "" when it is hidden.
func hover(t *testing.T, ctx context.Context, id string, i int, fx, fy float64) string {
	t.Helper()
	x, y := at(plotArea(t, ctx, id, i), fx, fy)
	if err := chromedp.Do(ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x, y)); err != nil {
		t.Fatal(err)
	}
	return eval[string](t, ctx, `(() => { const t = document.querySelector(".chart-tip"); return !t || t.hidden ? "" : t.textContent })()`)
}

// drag presses the mouse at fraction from of panel i's width, moves it to
// to and lets go, half-way down, as a reader zooms.
func drag(t *testing.T, ctx context.Context, id string, i int, from, to float64) {
	t.Helper()
	a := plotArea(t, ctx, id, i)
	x0, y := at(a, from, 0.5)
	x1, _ := at(a, to, 0.5)
	held := func(p *input.DispatchMouseEventParams) { p.Buttons = 1 }
	steps := []chromedp.Action[chromedp.Void]{
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x0, y),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, x0, y, chromedp.ButtonLeft, held, chromedp.ClickCount(1)),
	}
	for k := 1; k <= 5; k++ {
		steps = append(steps, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x0+(x1-x0)*float64(k)/5, y, chromedp.ButtonLeft, held))
	}
	steps = append(steps, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, x1, y, chromedp.ButtonLeft, chromedp.ClickCount(1)))
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

// areaRange is the x range panel i of chart id says it shows (charts.js
// writes it in the plot area's label, for screen readers too).
var rangeRE = regexp.MustCompile(`: (\w+) (-?[\d.]+) to (-?[\d.]+); `)

func areaRange(t *testing.T, ctx context.Context, id string, i int) (float64, float64) {
	t.Helper()
	plotArea(t, ctx, id, i)
	l := eval[string](t, ctx, fmt.Sprintf(`document.getElementById(%q).querySelectorAll(".u-wrap")[%d].getAttribute("aria-label")`, id, i))
	m := rangeRE.FindStringSubmatch(l)
	if m == nil {
		t.Fatalf("chart %s panel %d: label %q names no range", id, i, l)
	}
	lo, _ := strconv.ParseFloat(m[2], 64)
	hi, _ := strconv.ParseFloat(m[3], 64)
	return lo, hi
}

// numbers are the figures a line of text holds, each with the place of
// its last digit (0.01 for "12.34").
var numberRE = regexp.MustCompile(`-?\d+(?:\.\d+)?`)

func numbers(s string) (vals, units []float64) {
	for _, m := range numberRE.FindAllString(s, -1) {
		v, _ := strconv.ParseFloat(m, 64)
		unit := 1.0
		if i := strings.IndexByte(m, '.'); i >= 0 {
			unit = math.Pow(10, -float64(len(m)-i-1))
		}
		vals, units = append(vals, v), append(units, unit)
	}
	return
}

// shows checks that a tooltip's line states want, to the digits shown.
func shows(t *testing.T, line string, want ...float64) {
	t.Helper()
	got, units := numbers(line)
	if len(got) < len(want) {
		t.Errorf("%q holds %v, want %v", line, got, want)
		return
	}
	for i, w := range want {
		if math.Abs(got[i]-w) > units[i]/2+1e-9 {
			t.Errorf("%q: figure %d is %v, the data block's %v", line, i+1, got[i], w)
		}
	}
}

// scalingData is the page's scaling lines as the data block holds them.
type scalingData struct {
	Scaling struct {
		Series []struct {
			Label  string `json:"label"`
			Points []struct {
				Clients int       `json:"clients"`
				TPS     float64   `json:"tps"`
				Lo      *float64  `json:"tps_lo"`
				Hi      *float64  `json:"tps_hi"`
				Rounds  []float64 `json:"round_tps"`
				Vs      *struct {
					Text string `json:"text"`
				} `json:"vs_baseline"`
			} `json:"points"`
		} `json:"series"`
	} `json:"scaling"`
}

// TestChartHover hovers the scaling charts of an A/B run with Chromium's
// mouse: the tooltip names the client count under the mouse and each
// target's throughput with its interval and rounds, as the data block has
// them, and the change chart each candidate's change as the comparison
// words it.
func TestChartHover(t *testing.T) {
	needBrowser(t)
	pg := fixturePage(t, "abregress/base.json", "abregress/slow.json")
	var d scalingData
	if err := json.Unmarshal(embeddedData(t, pg), &d); err != nil {
		t.Fatal(err)
	}
	ctx, v := open(t, "chart-hover", pg, 1400, 900)
	for _, fx := range []float64{0.02, 0.98} {
		tip := hover(t, ctx, "scaling-tps", 0, fx, 0.5)
		lines := strings.Split(tip, "\n")
		var clients int
		if _, err := fmt.Sscanf(lines[0], "%d client", &clients); err != nil {
			t.Fatalf("hovering at %v of the width: tooltip %q names no client count", fx, tip)
		}
		if want := map[float64]int{0.02: 1, 0.98: 2}[fx]; clients != want {
			t.Errorf("hovering at %v of the width shows %d clients, want %d", fx, clients, want)
		}
		for _, s := range d.Scaling.Series {
			for _, p := range s.Points {
				if p.Clients != clients {
					continue
				}
				var line string
				for _, l := range lines[1:] {
					if strings.HasPrefix(l, s.Label+": ") {
						line = l
					}
				}
				if line == "" || p.Lo == nil || p.Hi == nil {
					t.Errorf("%d clients: no line for %s in %q (or no interval in the data)", clients, s.Label, tip)
					continue
				}
				shows(t, line, p.TPS, *p.Lo, *p.Hi)
				if !strings.Contains(line, fmt.Sprintf("geometric mean of %d rounds", len(p.Rounds))) {
					t.Errorf("%q does not say how many rounds", line)
				}
			}
		}
		if fx > 0.5 {
			writeShot(t, ctx, "html-report-chart-hover")
		}
	}
	tip := hover(t, ctx, "scaling-change", 0, 0.98, 0.5)
	for _, s := range d.Scaling.Series {
		for _, p := range s.Points {
			if p.Clients == 2 && p.Vs != nil && !strings.Contains(tip, s.Label+": "+p.Vs.Text) {
				t.Errorf("the change chart at 2 clients says %q, want %s's %s", tip, s.Label, p.Vs.Text)
			}
		}
	}
	if !strings.Contains(tip, "slow: ") {
		t.Errorf("the change chart says %q: no change of slow against base", tip)
	}
	v.quiet(t)
}

// TestTimelineZoom drags across the throughput panel of an A/B run's
// timeline: it and the latency panel below both show the stretch dragged
// over, hovering the latency panel's left edge names an interval in it,
// and a double-click shows the whole run again in both.
func TestTimelineZoom(t *testing.T) {
	needBrowser(t)
	ctx, v := open(t, "timeline-zoom", fixturePage(t, "abregress/base.json", "abregress/slow.json"), 1400, 900)
	const id = "timeline-ab0-c1"
	lo, hi := areaRange(t, ctx, id, 0)
	if l1, h1 := areaRange(t, ctx, id, 1); l1 != lo || h1 != hi {
		t.Fatalf("the panels show %v–%v and %v–%v before a zoom", lo, hi, l1, h1)
	}
	drag(t, ctx, id, 0, 0.3, 0.6)
	zlo, zhi := areaRange(t, ctx, id, 0)
	want0, want1 := lo+0.3*(hi-lo), lo+0.6*(hi-lo)
	if tol := 0.03 * (hi - lo); math.Abs(zlo-want0) > tol || math.Abs(zhi-want1) > tol {
		t.Errorf("dragged over %.2f–%.2f s, the panel shows %v–%v", want0, want1, zlo, zhi)
	}
	if l1, h1 := areaRange(t, ctx, id, 1); l1 != zlo || h1 != zhi {
		t.Errorf("the latency panel shows %v–%v, not the zoomed %v–%v", l1, h1, zlo, zhi)
	}
	tip := hover(t, ctx, id, 1, 0.02, 0.5)
	var sec float64
	if _, err := fmt.Sscanf(tip, "%g s", &sec); err != nil || sec < zlo-0.5 || sec > zhi {
		t.Errorf("hovering the zoomed latency panel's left edge shows %q, want a time in %v–%v", tip, zlo, zhi)
	}
	writeShot(t, ctx, "html-report-timeline-zoom")
	x, y := at(plotArea(t, ctx, id, 1), 0.5, 0.5)
	if err := chromedp.Do(ctx, chromedp.MouseClickXY(x, y), chromedp.MouseClickXY(x, y, chromedp.ClickCount(2))); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if l, h := areaRange(t, ctx, id, i); l != lo || h != hi {
			t.Errorf("after a double-click panel %d shows %v–%v, want all of %v–%v", i, l, h, lo, hi)
		}
	}
	v.quiet(t)
}

// legendClick clicks, with the mouse, the entry named name of the legend
// of panel i of chart id.
func legendClick(t *testing.T, ctx context.Context, id string, i int, name string) {
	t.Helper()
	plotArea(t, ctx, id, i)
	r := eval[[]float64](t, ctx, fmt.Sprintf(`(() => { const l = document.getElementById(%q).querySelectorAll(".u-legend")[%d];
		const th = l && [...l.querySelectorAll("th")].find(th => th.textContent === %q); if (!th) return [];
		th.scrollIntoView({block: "center"}); const r = th.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2] })()`, id, i, name))
	if len(r) != 2 {
		t.Fatalf("chart %s panel %d: no legend entry %q", id, i, name)
	}
	if err := chromedp.Do(ctx, chromedp.MouseClickXY(r[0], r[1])); err != nil {
		t.Fatal(err)
	}
}

// off names the legend entries of chart id shown as hidden.
func off(t *testing.T, ctx context.Context, id string) []string {
	t.Helper()
	return eval[[]string](t, ctx, fmt.Sprintf(`[...document.getElementById(%q).querySelectorAll(".u-legend tr.u-off")].map(tr => tr.textContent)`, id))
}

// TestLegendToggle: a click on a target in a timeline's legend hides its
// lines in every panel and drops it from the tooltip, a second shows it
// again; the same in a scaling chart, and in a stacked bar chart a part
// leaves the stack and the tooltip.
func TestLegendToggle(t *testing.T) {
	testenv.Slow(t)
	needBrowser(t)
	ctx, v := open(t, "legend", fixturePage(t, "abregress/base.json", "abregress/slow.json"), 1400, 900)
	const id = "timeline-ab0-c1"
	legendClick(t, ctx, id, 0, "slow")
	if got := strings.Join(off(t, ctx, id), "|"); got != "slow|slow p99|slow mean" {
		t.Errorf("after a click on slow the hidden lines are %q, want slow's in both panels", got)
	}
	// Across the run (the targets take turns in slices), the tooltip
	// names base somewhere and slow nowhere.
	var tips []string
	for fx := 0.02; fx < 1; fx += 0.08 {
		tips = append(tips, hover(t, ctx, id, 0, fx, 0.5))
	}
	if all := strings.Join(tips, "\n"); strings.Contains(all, "slow, ") || !strings.Contains(all, "base, ") {
		t.Errorf("with slow hidden the tooltips say %q", tips)
	}
	legendClick(t, ctx, id, 0, "slow")
	if got := off(t, ctx, id); len(got) != 0 {
		t.Errorf("after a second click %q stay hidden", got)
	}
	legendClick(t, ctx, "scaling-tps", 0, "slow")
	if tip := hover(t, ctx, "scaling-tps", 0, 0.98, 0.5); strings.Contains(tip, "slow: ") || !strings.Contains(tip, "base: ") {
		t.Errorf("with slow hidden the scaling tooltip says %q", tip)
	}
	v.quiet(t)

	ctx, v = open(t, "legend-bars", fixturePage(t, "sweep.json"), 1400, 900)
	before := hover(t, ctx, "cpu-evidence-0", 0, 0.1, 0.5)
	legendClick(t, ctx, "cpu-evidence-0", 0, "idle")
	after := hover(t, ctx, "cpu-evidence-0", 0, 0.1, 0.5)
	if !strings.Contains(before, "\nidle: ") || strings.Contains(after, "idle") || !strings.Contains(after, "\nserver: ") {
		t.Errorf("hiding idle: the tooltip said %q, then %q", before, after)
	}
	v.quiet(t)
}

// TestPageWithoutScript: with JavaScript off a page with charts still
// reads: no empty chart boxes take room, the notes say the charts need
// the script, and the tables give the numbers.
func TestPageWithoutScript(t *testing.T) {
	testenv.Slow(t)
	needBrowser(t)
	noScript := func(ctx context.Context) error {
		_, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		return err
	}
	ctx, v := open(t, "noscript", fixturePage(t, "sweep.json"), 1100, 900, noScript)
	got := eval[[]int](t, ctx, `[document.querySelectorAll("div.uchart").length, document.querySelectorAll("div.uchart canvas").length,
		[...document.querySelectorAll("div.uchart")].filter(e => e.getBoundingClientRect().height > 0).length,
		document.querySelectorAll("#scaling-table tr").length,
		[...document.querySelectorAll("noscript p.note")].filter(p => p.getBoundingClientRect().height > 0).length]`)
	if got[0] == 0 || got[1] != 0 || got[2] != 0 || got[3] < 5 || got[4] < 2 {
		t.Errorf("without JavaScript: %d chart boxes, %d canvases, %d boxes taking room, %d scaling table rows, %d notes shown", got[0], got[1], got[2], got[3], got[4])
	}
	v.quiet(t)
}

// microPage is a page of one micro-benchmark comparison, as
// internal/report hands it over: eight measures, their changes in no
// order, one past its bound.
func microPage(t *testing.T) []byte {
	t.Helper()
	m := html.Micro{Title: "patch against main", Outcome: "failed", Class: "bad", Headline: "Microbench: 7 of 8 measures within bounds",
		Baseline: "main", Name: "patch", Footnote: "go test -bench . (go format), 8 rounds."}
	for i, b := range []string{"plain/scan", "cached/get", "cached/put", "cached/delete"} {
		for j, unit := range []string{"ns/op", "B/op"} {
			change := []float64{0.004, -0.012, 0.0007, 0.081, -0.003, 0.02, -0.0001, 0.015}[2*i+j]
			m.Rows = append(m.Rows, html.MicroRow{Bench: b, Unit: unit, Base: fmt.Sprint(1000 * (i + 1)), Cand: fmt.Sprint(1000 * (i + 1)),
				Change: fmt.Sprintf("%+.1f%% ± 0.5%%", 100*change), ChangeValue: change, Outside: change > 0.05, Status: "within bounds"})
		}
	}
	var buf bytes.Buffer
	if err := html.Write(&buf, html.Doc{Micro: []html.Micro{m}}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestMicroSort: a click on a header of the micro-benchmarks' table sorts
// its rows by that column, numbers as numbers, a second click reverses
// them.
func TestMicroSort(t *testing.T) {
	needBrowser(t)
	ctx, v := open(t, "micro-sort", microPage(t), 1100, 900)
	column := func(i int) []string {
		return eval[[]string](t, ctx, fmt.Sprintf(`[...document.querySelectorAll("#micro-table-0 tbody tr")].map(tr => tr.cells[%d].getAttribute("data-v") ?? tr.cells[%[1]d].textContent)`, i))
	}
	click := func(name string) {
		r := eval[[]float64](t, ctx, fmt.Sprintf(`(() => { const th = [...document.querySelectorAll("#micro-table-0 thead th")].find(th => th.textContent === %q);
			if (!th) return []; const r = th.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2] })()`, name))
		if len(r) != 2 {
			t.Fatalf("no header %q", name)
		}
		if err := chromedp.Do(ctx, chromedp.MouseClickXY(r[0], r[1])); err != nil {
			t.Fatal(err)
		}
	}
	sorted := func(xs []string, less func(a, b string) bool) bool {
		for i := 1; i < len(xs); i++ {
			if less(xs[i], xs[i-1]) {
				return false
			}
		}
		return true
	}
	byNumber := func(a, b string) bool {
		x, _ := strconv.ParseFloat(a, 64)
		y, _ := strconv.ParseFloat(b, 64)
		return x < y
	}
	if n := len(column(4)); n != 8 {
		t.Fatalf("%d rows, want 8 (4 benchmarks × 2 measures)", n)
	}
	if c := column(4); sorted(c, byNumber) {
		t.Fatalf("the changes %q are in order before a click: the test would prove nothing", c)
	}
	click("change")
	if c := column(4); !sorted(c, byNumber) {
		t.Errorf("after a click on change the changes read %q, not rising", c)
	}
	click("change")
	if c := column(4); !sorted(c, func(a, b string) bool { return byNumber(b, a) }) {
		t.Errorf("after a second click the changes read %q, not falling", c)
	}
	click("benchmark")
	if c := column(0); !sorted(c, func(a, b string) bool { return a < b }) {
		t.Errorf("after a click on benchmark they read %q, not in order", c)
	}
	if got := eval[string](t, ctx, `document.querySelector("#micro-table-0 th[aria-sort]").textContent + " " + document.querySelector("#micro-table-0 th[aria-sort]").getAttribute("aria-sort")`); got != "benchmark ascending" {
		t.Errorf("the sorted column says %q", got)
	}
	writeShot(t, ctx, "html-report-micro-sort")
	v.quiet(t)
}

// waitDrawn waits until every chart box of the page has its canvas.
func waitDrawn(t *testing.T, ctx context.Context) {
	t.Helper()
	for range 50 {
		if eval[bool](t, ctx, `[...document.querySelectorAll("div.uchart")].every(e => e.querySelector("canvas"))`) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("charts not drawn")
}

// TestPoolerQueueChart: a step whose pooler was sampled draws its queue
// under the load's throughput on one time axis: hovering a sample names
// its waiting clients and active server connections as the data block
// has them, and a drag over the throughput zooms the queue too.
func TestPoolerQueueChart(t *testing.T) {
	testenv.Slow(t)
	needBrowser(t)
	doc := readDoc(t, "sweep.json")
	f := doc.Files[0].File
	s := &f.Steps[0]
	var series []result.PoolSample
	for k := range 9 {
		waiting, active := float64(k%4), float64(4-k%3)
		series = append(series, result.PoolSample{TS: 0.25 * float64(k), ClientsWaiting: &waiting, ServersActive: &active})
	}
	s.Probes.SetPooler(&result.Pools{Program: "pgbouncer", Commands: []string{"SHOW POOLS"}, Samples: len(series), WindowS: 2, Series: series})
	doc.Files[0] = compare.AnalyzeFile(compare.Input{Name: doc.Files[0].Name, File: f})
	ctx, v := open(t, "pooler-queue", writePage(t, doc), 1100, 900)
	id := eval[string](t, ctx, `document.querySelector('div.uchart[data-chart="pooler"]').id`)
	// The x axis runs from 0 to the last sample (2 s): sample 4 is at 1 s.
	tip := hover(t, ctx, id, 1, 0.5, 0.5)
	if want := "1.00 s\n0 clients waiting\n3.00 server connections active"; tip != want {
		t.Errorf("hovering the queue at 1 s shows %q, want %q", tip, want)
	}
	drag(t, ctx, id, 0, 0.25, 0.75)
	lo, hi := areaRange(t, ctx, id, 1)
	if math.Abs(lo-0.5) > 0.1 || math.Abs(hi-1.5) > 0.1 {
		t.Errorf("after a drag over 0.5–1.5 s of the throughput, the queue shows %v–%v s", lo, hi)
	}
	v.quiet(t)
}

// TestWideIntervalOffAxis: an interval far wider than the values (the ab
// fixture's p99 at 2 clients reaches 1.49 ms from 0.06) runs off the
// p99 chart's axis, which stays scaled to the values and rounds, so the
// lines do not flatten; the tooltip still gives the interval.
func TestWideIntervalOffAxis(t *testing.T) {
	needBrowser(t)
	pg := fixturePage(t, "ab/a.json", "ab/b.json")
	var d struct {
		Scaling struct {
			Series []struct {
				Points []struct {
					P99    float64   `json:"p99_ms"`
					Hi     float64   `json:"p99_hi"`
					Rounds []float64 `json:"round_p99_ms"`
				} `json:"points"`
			} `json:"series"`
		} `json:"scaling"`
	}
	if err := json.Unmarshal(embeddedData(t, pg), &d); err != nil {
		t.Fatal(err)
	}
	var most, widest float64
	for _, s := range d.Scaling.Series {
		for _, p := range s.Points {
			most = max(most, p.P99)
			if len(p.Rounds) > 0 {
				most = max(most, slices.Max(p.Rounds))
			}
			widest = max(widest, p.Hi)
		}
	}
	if widest < 4*most {
		t.Fatalf("the fixture's widest p99 interval reaches %v, its values %v: no interval to run off the axis", widest, most)
	}
	ctx, v := open(t, "wide", pg, 1400, 900)
	plotArea(t, ctx, "scaling-p99", 0)
	label := eval[string](t, ctx, `document.querySelector("#scaling-p99 .u-wrap").getAttribute("aria-label")`)
	var top float64
	if _, err := fmt.Sscanf(label[strings.LastIndex(label, " to ")+1:], "to %g", &top); err != nil {
		t.Fatalf("label %q says no y range", label)
	}
	if top < most || top >= widest {
		t.Errorf("the p99 axis reaches %v: want the values' %v and not the interval's %v", top, most, widest)
	}
	if tip := hover(t, ctx, "scaling-p99", 0, 0.98, 0.5); !strings.Contains(tip, fmt.Sprintf("– %.2f]", widest)) {
		t.Errorf("the tooltip %q does not give the wide interval up to %v", tip, widest)
	}
	v.quiet(t)
}
