package html_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/report/html"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/trend"
)

// history is what a store holds of a series recorded 20 times: 20
// copies of a real sweep (testdata/sweep.json), an hour apart, each step's
// tps edited by 1 + N(0, 1 %) and 4 % lower from the 11th copy on, each
// under its own commit, as the tps series of each client count (a point
// the median of the step's tps, as the store makes it). It returns the
// series and the commits.
func history(t *testing.T) ([]trend.History, []string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(11, 1))
	var commits []string
	byClients := map[int]*trend.History{}
	var hs []*trend.History
	for i := range 20 {
		var f result.File
		if err := json.Unmarshal(raw, &f); err != nil {
			t.Fatal(err)
		}
		f.Started = f.Started.Add(time.Duration(i) * time.Hour)
		k := 1 + 0.01*rng.NormFloat64()
		if i >= 10 {
			k *= 0.96
		}
		commits = append(commits, fmt.Sprintf("%02x%s", i, strings.Repeat("e", 38)))
		for j := range f.Steps {
			st := &f.Steps[j]
			h := byClients[st.Clients]
			if h == nil {
				h = &trend.History{Series: trend.Series{ID: int64(len(hs) + 1), Unit: "txn/s", HigherIsBetter: true,
					Key: trend.Key{Workload: f.Workload.Name, Label: "main", Clients: st.Clients, Measure: "tps", Machine: "m"}}}
				byClients[st.Clients], hs = h, append(hs, h)
			}
			// One step: no interval, which the store keeps as NULL and
			// reads back as NaN.
			sum := stats.Summarize([]float64{st.Summary.TPS * k}, stats.Options{})
			h.Points = append(h.Points, trend.Point{ResultID: int64(i + 1), Value: sum.Median, Lo: math.NaN(), Hi: math.NaN(), N: sum.N,
				Label: "main", Commit: commits[i], Time: f.Started})
		}
	}
	var out []trend.History
	for _, h := range hs {
		h.Count, h.Last = len(h.Points), h.Points[len(h.Points)-1]
		out = append(out, *h)
	}
	return out, commits
}

// pgscale history show --format html opens in Chromium with no console
// message or request: a chart per series with a size; hovering a run
// names its commit and value, and the run after the change point the
// change and the commits it lies between.
func TestTrendInBrowser(t *testing.T) {
	needBrowser(t)
	hs, commits := history(t)
	var buf bytes.Buffer
	h := &report.History{Store: "history.db", Series: hs, Changes: trend.ChangePointsOf(hs, stats.ChangePointOptions{})}
	f, err := report.Lookup("html")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Write(&buf, &report.Doc{History: h}); err != nil {
		t.Fatal(err)
	}
	pg := buf.Bytes()
	checkScripts(t, "history", string(pg))
	ctx, v := open(t, "history", pg, 1100, 900)
	waitDrawn(t, ctx)
	charts := eval[[]string](t, ctx, `[...document.querySelectorAll('div.uchart')].filter(s => { const c = s.querySelector("canvas"); const r = c && c.getBoundingClientRect(); return r && r.width > 300 && r.height > 80 }).map(s => s.id)`)
	if len(charts) != 4 {
		t.Fatalf("charts drawn with a size: %v, want the 4 client counts' tps", charts)
	}
	for _, id := range charts {
		// The x axis runs from half a run before the first to half after
		// the last of the 20: run k is at (k - 0.5) / 20 of the width.
		for _, run := range []int{1, 11, 20} {
			tip := hover(t, ctx, id, 0, (float64(run)-0.5)/20, 0.5)
			if !strings.HasPrefix(tip, commits[run-1]+": ") || !strings.Contains(tip, fmt.Sprintf(", run %d, ", run)) {
				t.Errorf("%s: hovering run %d shows %q, want its commit", id, run, tip)
			}
			// The change: between the 10th and 11th commits, about -4 %.
			change := strings.Contains(tip, "\nchange -") && strings.Contains(tip, "between "+commits[9][:7]+" and "+commits[10][:7])
			if change != (run == 11) {
				t.Errorf("%s: hovering run %d shows %q: the change belongs to run 11", id, run, tip)
			}
			if run == 11 && id == charts[0] {
				writeShot(t, ctx, "history-trend")
			}
		}
	}
	var data struct {
		Series []struct {
			Changes []struct {
				Index int     `json:"index"`
				Worse bool    `json:"worse"`
				Chg   float64 `json:"change"`
			} `json:"changes"`
		} `json:"series"`
	}
	if err := json.Unmarshal([]byte(eval[string](t, ctx, `document.getElementById("pgscale-data").textContent`)), &data); err != nil || len(data.Series) != 4 {
		t.Fatalf("data block: %v", err)
	}
	for i, s := range data.Series {
		if len(s.Changes) != 1 || s.Changes[0].Index != 10 || !s.Changes[0].Worse || math.Abs(s.Changes[0].Chg+0.04) > 0.015 {
			t.Errorf("series %d: changes %+v, want one -4%% for the worse at point 10", i, s.Changes)
		}
	}
	v.quiet(t)

	ctx, v = open(t, "history-phone", pg, 390, 844)
	if w := eval[[]float64](t, ctx, `[document.documentElement.scrollWidth, document.documentElement.clientWidth]`); w[0] > w[1] {
		t.Errorf("the page is %v px wide on a %v px screen", w[0], w[1])
	}
	v.quiet(t)
	if *shots != "" {
		os.WriteFile(filepath.Join(*shots, "history.html"), pg, 0o644)
	}
}

func first(xs []string) string {
	if len(xs) == 0 {
		return ""
	}
	return xs[0]
}

// Whatever a store holds (commits and labels are the user's text) is
// shown as text: a hostile commit runs nothing and adds no element.
func TestTrendEscapes(t *testing.T) {
	hostile := `</title><script>alert(1)</script><img src=x onerror=alert(2)>`
	tr := html.Trend{Title: "pgscale history", Store: `/tmp/<b>x</b>.db`, Series: []html.TrendSeries{{
		ID: 1, Key: `w | "><svg onload=alert(3)> | c=2 | tps | m`, Title: hostile, Measure: "tps", Unit: "txn/s", HigherIsBetter: true,
	}}}
	for i := range 12 {
		v := 1000.0
		if i >= 6 {
			v = 900
		}
		v += float64(i % 3)
		tr.Series[0].Points = append(tr.Series[0].Points, html.TrendPoint{Value: v, Lo: math.NaN(), Hi: math.NaN(), N: 1,
			Commit: hostile, Short: hostile, Time: time.Date(2026, 12, 1, i, 0, 0, 0, time.UTC), Result: int64(i + 1)})
	}
	tr.Series[0].Changes = []html.TrendChange{{Index: 6, Before: 1001, After: 901, Change: -0.1, Lo: -0.11, Hi: -0.09, P: 1e-9}}
	var buf bytes.Buffer
	if err := html.WriteTrend(&buf, tr); err != nil {
		t.Fatal(err)
	}
	pg := buf.String()
	for _, bad := range []string{"<script>alert", "<img", "<svg onload", "<b>x"} {
		if strings.Contains(pg, bad) {
			t.Errorf("the page holds %q as markup", bad)
		}
	}
	if strings.Count(pg, "&lt;script&gt;alert(1)") < 12 {
		t.Errorf("the hostile commit is not shown as text")
	}
	checkScripts(t, "hostile history", pg)
	if browser == nil {
		return
	}
	ctx, v := open(t, "history-hostile", buf.Bytes(), 1100, 900)
	if n := eval[int](t, ctx, `document.querySelectorAll('img, svg [onload], [onload], [onerror]').length`); n != 0 {
		t.Errorf("%d elements made of the store's text", n)
	}
	ownScripts(t, ctx, buf.Bytes())
	if tip := hover(t, ctx, "trend-1", 0, 0.5/12, 0.5); !strings.HasPrefix(tip, hostile+": ") {
		t.Errorf("the tooltip says %q, not the commit as text", tip)
	}
	if title := eval[string](t, ctx, `document.querySelector("#trend-1 .u-title").textContent`); title != hostile {
		t.Errorf("the chart's title is %q, not the series' title as text", title)
	}
	v.quiet(t)
}
