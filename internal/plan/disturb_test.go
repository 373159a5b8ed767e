package plan_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/engine"
	"github.com/pgscale/pgscale/internal/metrics"
	"github.com/pgscale/pgscale/internal/plan"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/script"
)

func TestParseDisturbSpec(t *testing.T) {
	s := time.Second
	good := []struct {
		in       string
		head     string
		start    time.Duration
		end      time.Duration
		sessions int
	}{
		{"ddl-churn@15s-30s", "ddl-churn", 15 * s, 30 * s, 1},
		{"checkpoint@20s", "checkpoint", 20 * s, 0, 1},
		{"ddl.sql@10s-25s:2", "ddl.sql", 10 * s, 25 * s, 2},
		{"checkpoint=10s@0-1m", "checkpoint=10s", 0, time.Minute, 1},
		{"a@b.sql@2.5-4", "a@b.sql", 2500 * time.Millisecond, 4 * s, 1},
		{"vacuum@500ms-1m30s:3", "vacuum", 500 * time.Millisecond, 90 * s, 3},
	}
	for _, g := range good {
		got, err := plan.ParseDisturbSpec(g.in)
		if err != nil {
			t.Errorf("ParseDisturbSpec(%q): %v", g.in, err)
			continue
		}
		if got.Head != g.head || got.Window.Start != g.start || got.Window.End != g.end || got.Sessions != g.sessions {
			t.Errorf("ParseDisturbSpec(%q) = %+v; want head %q, %v-%v, %d sessions", g.in, got, g.head, g.start, g.end, g.sessions)
		}
	}
	bad := map[string]string{
		"ddl-churn":           "no window",
		"@15s":                "no name",
		"ddl-churn@":          "start is missing",
		"ddl-churn@15s+30s":   "not a time",
		"ddl-churn@30s-15s":   "end must come after",
		"ddl-churn@15s-15s":   "end must come after",
		"ddl-churn@15s-30s:0": "not a positive integer",
		"ddl-churn@15s-30s:x": "not a positive integer",
		"ddl-churn@-5s":       "start is missing",
		"ddl-churn@15s-":      "end is missing",
	}
	for in, want := range bad {
		_, err := plan.ParseDisturbSpec(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseDisturbSpec(%q) error = %v; want one saying %q", in, err, want)
		}
	}
}

func dist(name, spec string, start, end time.Duration) plan.Disturbance {
	return plan.Disturbance{Name: name, Spec: spec, Window: plan.Window{Start: start, End: end}, Sessions: 1}
}

func TestCheckSchedule(t *testing.T) {
	s := time.Second
	T := 40 * s
	tests := []struct {
		name  string
		ds    []plan.Disturbance
		index int // -1: fine
		want  string
	}{
		{"fine", []plan.Disturbance{dist("ddl-churn", "a", 15*s, 30*s), dist("checkpoint", "b", 20*s, 0)}, -1, ""},
		{"different names may overlap", []plan.Disturbance{dist("ddl-churn", "a", 15*s, 30*s), dist("vacuum", "b", 10*s, 35*s)}, -1, ""},
		{"same name, one after the other", []plan.Disturbance{dist("ddl-churn", "a", 5*s, 10*s), dist("ddl-churn", "b", 10*s, 20*s)}, -1, ""},
		{"ends at the end", []plan.Disturbance{dist("ddl-churn", "a", 0, T)}, -1, ""},
		{"ends after the run", []plan.Disturbance{dist("ddl-churn", "a", 15*s, 50*s)}, 0, "ends at 50s, after the end of the run (-T 40s)"},
		{"starts after the run", []plan.Disturbance{dist("checkpoint", "a", 40*s, 0)}, 0, "starts at 40s"},
		{"overlap", []plan.Disturbance{dist("ddl-churn", "a", 15*s, 30*s), dist("x", "b", 1*s, 2*s), dist("ddl-churn", "c", 25*s, 35*s)}, 2, "overlaps a"},
		{"open end overlaps later window", []plan.Disturbance{dist("checkpoint", "a", 10*s, 0), dist("checkpoint", "b", 30*s, 35*s)}, 1, "overlaps a"},
	}
	for _, tt := range tests {
		err := plan.CheckSchedule(tt.ds, T)
		if tt.index < 0 {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		se, ok := err.(*plan.ScheduleError)
		if !ok || se.Index != tt.index || !strings.Contains(se.Msg, tt.want) {
			t.Errorf("%s: error %#v; want index %d saying %q", tt.name, err, tt.index, tt.want)
		}
	}
}

func TestMarkers(t *testing.T) {
	s := time.Second
	dt := &plan.Disturber{Disturbances: []plan.Disturbance{
		dist("ddl-churn", "a", 15*s, 30*s), dist("checkpoint", "b", 0, 0),
	}}
	at := func(start time.Duration, warmup time.Duration) []string {
		p := engine.Progress{Elapsed: warmup + start + s, Point: engine.Point{Start: start, Length: s}}
		return dt.Markers(p)
	}
	check := func(name string, got []string, want ...string) {
		t.Helper()
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: markers %q, want %q", name, got, want)
		}
	}
	check("line at 15.0 s", at(14*s, 0), "[ddl-churn started]")
	check("line at 16.0 s", at(15*s, 0))
	check("line at 30.0 s", at(29*s, 0), "[ddl-churn stopped]")
	check("first line, window at 0", at(0, 0), "[checkpoint started]")
	check("after a warm-up, window at 0 marks the warm-up's last line", at(-s, 3*s), "[checkpoint started]")
	check("after a warm-up, not again on the first measured line", at(0, 3*s))
}

// hist returns an interval histogram of n latencies of us microseconds.
func hist(t *testing.T, us int64, n int64) string {
	h := metrics.NewHistogram()
	if n > 0 {
		if err := h.RecordValues(us, n); err != nil {
			t.Fatal(err)
		}
	}
	s, err := metrics.EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// series builds 1 s intervals with the given tps and mean latency (ms);
// each interval's histogram holds its transactions at its mean latency.
func series(t *testing.T, tps, lat []float64) []result.Interval {
	var out []result.Interval
	for i := range tps {
		n := int64(tps[i])
		out = append(out, result.Interval{StartS: float64(i), LengthS: 1, Transactions: n, TPS: tps[i],
			Latency: result.Latency{MeanMs: lat[i]}, Histogram: hist(t, int64(lat[i]*1000), n)})
	}
	return out
}

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.IsNaN(got) || math.Abs(got-want) > tol*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %.15g, want %.15g", what, got, want)
	}
}

func TestFillEffectsHand(t *testing.T) {
	// 20 one-second intervals, a window over 10-16 s. Before is 2-10 s
	// (the first 2 s left out as warm-up): tps 100, 100, 99, 99, 99,
	// 101, 101, 101. During is 10-16 s: 74, 74, 74, 76, 76, 76. After is
	// 16-20 s. The shorter side has 6 seconds, so batches of ⌈√6⌉ = 3:
	// before keeps its last 6 seconds, batch means 99 and 101, mean 100;
	// during 74 and 76, mean 75; change -25 %. The batch means' variances
	// are 2 and 2 with 2 batches a side: the numbers of the "hand" case of
	// stats' TestCompareWindows, whose interval SciPy gives as
	// -0.30584461229243964, -0.18966270382536482, p 0.004614772962718113.
	tps := []float64{50, 80, 100, 100, 99, 99, 99, 101, 101, 101, 74, 74, 74, 76, 76, 76, 90, 95, 100, 100}
	lat := []float64{2, 1.5, 1, 1, 0.99, 0.99, 0.99, 1.01, 1.01, 1.01, 1.32, 1.32, 1.32, 1.34, 1.34, 1.34, 1.1, 1.05, 1, 1}
	step := &result.Step{Clients: 4, ElapsedS: 20, Intervals: series(t, tps, lat),
		Disturbances: []result.Disturbance{{Name: "ddl-churn", Spec: "ddl-churn@10s-16s", StartS: 10, EndS: 16, RanS: 6}}}
	plan.FillEffects(step, plan.EffectOptions{})
	e := step.Disturbances[0].Effect
	if e == nil || e.Before == nil || e.During == nil || e.After == nil || e.TPS == nil || e.Latency == nil {
		t.Fatalf("effect %+v: want before, during, after and both changes", e)
	}
	phase := func(name string, p *result.Phase, from, to float64, n int, tps, lat, p99 float64) {
		t.Helper()
		if p.FromS != from || p.ToS != to || p.Intervals != n {
			t.Errorf("%s: %v-%v s, %d intervals; want %v-%v, %d", name, p.FromS, p.ToS, p.Intervals, from, to, n)
		}
		near(t, name+" tps", p.TPS, tps, 1e-12)
		near(t, name+" latency", p.LatMeanMs, lat, 1e-12)
		near(t, name+" p99", p.LatP99Ms, p99, 1e-3) // histogram buckets: exact below 2.048 ms
	}
	// Before: 800 transactions in 8 s; latency weighted by transactions:
	// (200·1 + 297·0.99 + 303·1.01)/800 = 800.06/800. The p99 of 800
	// latencies is the 792nd: among the 303 at 1.01 ms.
	phase("before", e.Before, 2, 10, 8, 100, 800.06/800, 1.01)
	// During: 450 in 6 s; (222·1.32 + 228·1.34)/450 = 598.56/450.
	phase("during", e.During, 10, 16, 6, 75, 598.56/450, 1.34)
	// After: 385 in 4 s; (90·1.1 + 95·1.05 + 200·1)/385 = 398.75/385.
	phase("after", e.After, 16, 20, 4, 96.25, 398.75/385, 1.1)

	c := e.TPS
	near(t, "tps before", c.Base, 100, 1e-12)
	near(t, "tps during", c.Cand, 75, 1e-12)
	near(t, "tps change", c.Change, -0.25, 1e-12)
	if c.Lo == nil || c.Hi == nil || c.P == nil {
		t.Fatalf("tps change has no interval: %+v", c)
	}
	near(t, "tps lo", *c.Lo, -0.30584461229243964, 1e-9)
	near(t, "tps hi", *c.Hi, -0.18966270382536482, 1e-9)
	near(t, "tps p", *c.P, 0.004614772962718113, 1e-9)
	if c.BatchS != 3 || c.BatchesBefore != 2 || c.BatchesDuring != 2 || c.Confidence != 0.95 {
		t.Errorf("batches %v s, %d before, %d during, confidence %v; want 3 s, 2, 2, 0.95", c.BatchS, c.BatchesBefore, c.BatchesDuring, c.Confidence)
	}
	// Latency: batch means 0.99, 1.01 and 1.32, 1.34: means 1 and 1.33.
	near(t, "latency change", e.Latency.Change, 0.33, 1e-12)
	if !(*e.Latency.Lo > 0 && *e.Latency.Hi > 0.33) {
		t.Errorf("latency interval %v, %v: want above 0, around +33 %%", *e.Latency.Lo, *e.Latency.Hi)
	}
	if !strings.Contains(e.Method, "2s left out") || !strings.Contains(e.Method, "95% confidence") {
		t.Errorf("method %q does not say what it left out and at what confidence", e.Method)
	}
}

func TestFillEffectsQuietStretches(t *testing.T) {
	tps := make([]float64, 30)
	lat := make([]float64, 30)
	for i := range tps {
		tps[i], lat[i] = 100+float64(i%3), 1+float64(i%2)/100
	}
	mk := func(ds ...result.Disturbance) *result.Step {
		return &result.Step{Clients: 1, ElapsedS: 30, Intervals: series(t, tps, lat), Disturbances: ds}
	}
	w := func(spec string, start, end float64) result.Disturbance {
		return result.Disturbance{Name: spec, Spec: spec, StartS: start, EndS: end, RanS: end - start}
	}

	// Two windows one after the other: B's before starts 2 s after A's
	// end (recovery left out), A's after ends where B begins.
	step := mk(w("A", 5, 10), w("B", 18, 25))
	plan.FillEffects(step, plan.EffectOptions{Settle: 2 * time.Second})
	a, b := step.Disturbances[0].Effect, step.Disturbances[1].Effect
	span := func(name string, p *result.Phase, from, to float64) {
		t.Helper()
		if p == nil || p.FromS != from || p.ToS != to {
			t.Errorf("%s = %+v; want %v-%v s", name, p, from, to)
		}
	}
	span("A before", a.Before, 2, 5)
	span("A after", a.After, 10, 18)
	span("B before", b.Before, 12, 18)
	span("B after", b.After, 25, 30)
	if w := strings.Join(append(a.Warnings, b.Warnings...), "\n"); strings.Contains(w, "overlaps") {
		t.Errorf("warnings %q; want no overlap", w)
	}

	// Overlapping windows: flagged; no quiet before for the later one.
	step = mk(w("A", 5, 20), w("B", 10, 15))
	plan.FillEffects(step, plan.EffectOptions{})
	b = step.Disturbances[1].Effect
	if b.Before != nil || b.TPS != nil {
		t.Errorf("B inside A: before %+v, change %+v; want none", b.Before, b.TPS)
	}
	if !strings.Contains(strings.Join(b.Warnings, "\n"), "overlaps A") {
		t.Errorf("B inside A: warnings %q; want the overlap named", b.Warnings)
	}

	// A window that never ran has no effect.
	step = mk(result.Disturbance{Name: "A", Spec: "A", StartS: 5, EndS: 10})
	plan.FillEffects(step, plan.EffectOptions{})
	if step.Disturbances[0].Effect != nil {
		t.Errorf("window that did not run has effect %+v", step.Disturbances[0].Effect)
	}

	// A window right at the start: nothing before, after only.
	step = mk(w("A", 0, 10))
	plan.FillEffects(step, plan.EffectOptions{})
	a = step.Disturbances[0].Effect
	if a.Before != nil || a.TPS != nil || a.During == nil || a.After == nil || len(a.Warnings) == 0 {
		t.Errorf("window at 0: %+v; want during and after, no change, a warning", a)
	}
}

func TestCheckDisturbScript(t *testing.T) {
	for src, ok := range map[string]bool{
		"SELECT 1;\n\\sleep 100ms\n":                         true,
		"\\startpipeline\nSELECT 1;\n\\endpipeline\n":        false,
		"\\set x random(1, 10)\nSELECT :x;\n\\sleep :x ms\n": true,
	} {
		s, err := script.Parse("t.sql", src)
		if err != nil {
			t.Fatal(err)
		}
		if err := plan.CheckDisturbScript(s); (err == nil) != ok {
			t.Errorf("CheckDisturbScript(%q) = %v; want ok %v", src, err, ok)
		}
	}
}
