package stats_test

import (
	"math"
	"testing"

	"github.com/pgscale/pgscale/internal/stats"
)

// Two builds of one program whose timers cost 3 000 instructions a
// second, one of them 11 instructions more per event: the fit finds the
// rate and each build's work per event, whatever each window lasted.
func TestFitTime(t *testing.T) {
	secs := [][]float64{{1.6, 1.2, 1.04, 2.9, 1.5}, {1.55, 2.38, 1.46, 1.1, 3.3}}
	per := []float64{4240, 4251}
	var groups [][]stats.TimePoint
	for g, ss := range secs {
		var ps []stats.TimePoint
		for i, s := range ss {
			noise := float64(i%3-1) * 40 // a timer fired or not
			ps = append(ps, stats.TimePoint{Count: per[g]*300 + 3000*s + noise, Events: 300, Seconds: s})
		}
		groups = append(groups, ps)
	}
	f := stats.FitTime(groups)
	if !f.Determined || math.Abs(f.PerSecond-3000) > 100 || f.SE <= 0 || f.DF != 7 {
		t.Fatalf("fit %+v: want about 3000 a second", f)
	}
	for g, ps := range groups {
		for _, p := range ps {
			if got := f.PerEventPart(p); math.Abs(got-per[g]) > 0.5 {
				t.Errorf("group %d: %.2f per event, want %.0f (raw %.2f)", g, got, per[g], p.Count/p.Events)
			}
		}
	}
	// Windows of one length tell nothing of time: no rate.
	same := [][]stats.TimePoint{{{Count: 1000, Events: 10, Seconds: 1}, {Count: 1010, Events: 10, Seconds: 1}}, {{Count: 1000, Events: 10, Seconds: 1}, {Count: 990, Events: 10, Seconds: 1}}}
	if f := stats.FitTime(same); f.Determined || f.PerSecond != 0 || f.PerEventPart(same[0][0]) != 100 {
		t.Errorf("windows of one length: %+v", f)
	}
	// Counts that fall as windows grow are no time-driven work.
	neg := [][]stats.TimePoint{{{Count: 1000, Events: 10, Seconds: 1}, {Count: 900, Events: 10, Seconds: 2}, {Count: 800, Events: 10, Seconds: 3}}}
	if f := stats.FitTime(neg); f.PerSecond != 0 || math.Abs(f.PerEventPart(neg[0][1])-90) > 1e-9 {
		t.Errorf("falling counts: %+v", f)
	}
}
