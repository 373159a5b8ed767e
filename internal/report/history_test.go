package report_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/golden"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/trend"
)

// historyFixture is a series of 16 runs whose tps fell 6 % at the 9th,
// acknowledged, and a p99 series that rose 8 % there, not acknowledged;
// the change points are the detector's.
func historyFixture(t *testing.T) *report.History {
	t.Helper()
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	noise := []float64{0.004, -0.006, 0.002, 0.009, -0.003, -0.008, 0.005, 0.001}
	mk := func(id int64, measure, unit string, higher bool, base, step float64, acked int64) trend.History {
		h := trend.History{Series: trend.Series{ID: id, Key: trend.Key{Workload: "select-only -s 1 -M prepared", Label: "main", Clients: 8, Measure: measure, Machine: "90fe34eac892"},
			Unit: unit, HigherIsBetter: higher, AckedResult: acked}}
		for i := range 16 {
			v := base * (1 + noise[i%8])
			if i >= 8 {
				v *= 1 + step
			}
			p := trend.Point{ResultID: int64(i + 1), Value: v, Lo: math.NaN(), Hi: math.NaN(), N: 1, Label: "main",
				Commit: fmt.Sprintf("%02x", 16*i+i) + "c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9", Time: t0.Add(time.Duration(i) * time.Hour)}
			if i == 0 {
				p.Commit = "" // goes by its label
			}
			if i == 15 {
				p.Lo, p.Hi, p.N = v*0.99, v*1.01, 6
			}
			h.Points = append(h.Points, p)
		}
		h.Count, h.Last = len(h.Points), h.Points[15]
		return h
	}
	h := &report.History{Store: "/home/ci/.local/share/pgscale/history.db", Series: []trend.History{
		mk(1, "tps", "txn/s", true, 120000, -0.06, 9),
		mk(3, "p99", "ms", false, 0.21, 0.08, 0),
	}}
	for _, s := range h.Series {
		cs, _ := s.ChangePoints(stats.ChangePointOptions{})
		if len(cs) != 1 || cs[0].Index != 8 {
			t.Fatalf("fixture %s: change points %v, want one at 8", s.Measure, cs)
		}
		h.Changes = append(h.Changes, cs)
	}
	return h
}

func TestHistoryText(t *testing.T) {
	h := historyFixture(t)
	var b bytes.Buffer
	var series []trend.Series
	for _, s := range h.Series {
		series = append(series, s.Series)
	}
	if err := writeTo(&b, "text", &report.Doc{Series: &report.Series{Store: h.Store, Series: series}}); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "history-list.txt", b.Bytes())

	b.Reset()
	if err := writeTo(&b, "text", &report.Doc{History: h}); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "history-show.txt", b.Bytes())

	// check: the unacknowledged p99 change, and the tps one as if it were
	// not, against bounds.
	bounds, err := stats.ParseBounds([]string{"tps=-5%", "p99=+10%"})
	if err != nil {
		t.Fatal(err)
	}
	c := &trend.Check{Store: h.Store, Series: 2, Changes: []trend.Change{h.Changes[0][0], h.Changes[1][0]},
		Warnings: []error{errors.New("select-only | main | c=8 | p50 | 90fe34eac892: 1 value missing")}}
	c.Assessments = trend.Judge(c.Changes, bounds)
	b.Reset()
	if err := writeTo(&b, "text", &report.Doc{Check: c}); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "history-check.txt", b.Bytes())
	if out := c.Outside(); len(out) != 1 || out[0].Measure.Name != "tps" {
		t.Errorf("outside bounds: %v, want tps alone", out)
	}
}

func TestShortCommit(t *testing.T) {
	for in, want := range map[string]string{
		"d75b48c1f2e3a4b5c6d7e8f9a0b1c2d3e4f5a6b7":       "d75b48c",
		"d75b48c1f2e3a4b5c6d7e8f9a0b1c2d3e4f5a6b7-dirty": "d75b48c-dirty",
		"97fc159":      "97fc159",
		"main":         "main",
		"release-16.2": "release-16.2",
	} {
		if got := report.ShortCommit(in); got != want {
			t.Errorf("ShortCommit(%q) = %q, want %q", in, got, want)
		}
	}
}
