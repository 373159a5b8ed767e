package diagnose_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/metrics"
	"github.com/pgscale/pgscale/internal/result"
)

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
	diagnose.DisturbanceEffects(step, diagnose.EffectOptions{})
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
	// After/before: 4 s after (90, 95, 100, 100) against the 8 s before:
	// batches of ⌈√4⌉ = 2, 4 before (means 100, 99, 100, 101: 100) and 2
	// after (92.5, 100: 96.25); change -3.75 %.
	a := e.AfterTPS
	if a == nil || a.Lo == nil || a.Hi == nil {
		t.Fatalf("after/before %+v: want a change with an interval", a)
	}
	near(t, "after change", a.Change, -0.0375, 1e-12)
	if a.BatchS != 2 || a.BatchesBefore != 4 || a.BatchesDuring != 2 || !(*a.Lo < a.Change && a.Change < *a.Hi) {
		t.Errorf("after/before %+v", a)
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
	diagnose.DisturbanceEffects(step, diagnose.EffectOptions{Settle: 2 * time.Second})
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
	diagnose.DisturbanceEffects(step, diagnose.EffectOptions{})
	b = step.Disturbances[1].Effect
	if b.Before != nil || b.TPS != nil {
		t.Errorf("B inside A: before %+v, change %+v; want none", b.Before, b.TPS)
	}
	if !strings.Contains(strings.Join(b.Warnings, "\n"), "overlaps A") {
		t.Errorf("B inside A: warnings %q; want the overlap named", b.Warnings)
	}

	// A window that never ran has no effect.
	step = mk(result.Disturbance{Name: "A", Spec: "A", StartS: 5, EndS: 10})
	diagnose.DisturbanceEffects(step, diagnose.EffectOptions{})
	if step.Disturbances[0].Effect != nil {
		t.Errorf("window that did not run has effect %+v", step.Disturbances[0].Effect)
	}

	// A window right at the start: nothing before, after only.
	step = mk(w("A", 0, 10))
	diagnose.DisturbanceEffects(step, diagnose.EffectOptions{})
	a = step.Disturbances[0].Effect
	if a.Before != nil || a.TPS != nil || a.During == nil || a.After == nil || len(a.Warnings) == 0 {
		t.Errorf("window at 0: %+v; want during and after, no change, a warning", a)
	}
}
