package step_test

import (
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/engine"
	"github.com/pgscale/pgscale/internal/metrics"
	"github.com/pgscale/pgscale/internal/step"
)

// slice makes one measured slice of target ti with n transactions of lat µs each.
func slice(t *testing.T, ti int, start, length time.Duration, n int64, latUS int64) engine.Slice {
	t.Helper()
	iv := metrics.NewInterval(0, 0)
	for i := int64(0); i < n; i++ {
		iv.RecordTxn(latUS, 0, false)
	}
	h, err := metrics.EncodeHistogram(iv.Latency)
	if err != nil {
		t.Fatal(err)
	}
	return engine.Slice{Target: ti, Start: start, Length: length, Counts: iv.Counts, Latency: iv.Summarize(), Histogram: h,
		ClientUser: 10 * time.Millisecond, ClientSys: 5 * time.Millisecond}
}

// Each target's step is built from its own slices alone.
func TestSplitSlices(t *testing.T) {
	ms := time.Millisecond
	res := &engine.Result{Clients: 2, Began: time.Unix(100, 0), Total: metrics.NewInterval(0, 0), Slices: []engine.Slice{
		slice(t, 0, 0, 450*ms, 900, 100),
		slice(t, 1, 500*ms, 450*ms, 450, 200),
		slice(t, 1, 1000*ms, 450*ms, 450, 200),
		slice(t, 0, 1500*ms, 450*ms, 1800, 50),
	}}
	steps := step.Split(res, 2)
	if len(steps) != 2 {
		t.Fatalf("%d steps, want 2", len(steps))
	}
	a, b := steps[0], steps[1]
	if a.Summary.Transactions != 2700 || b.Summary.Transactions != 900 {
		t.Errorf("transactions %d and %d, want 2700 and 900", a.Summary.Transactions, b.Summary.Transactions)
	}
	if a.ElapsedS != 0.9 || b.ElapsedS != 0.9 {
		t.Errorf("counted %v s and %v s, want 0.9 each", a.ElapsedS, b.ElapsedS)
	}
	if a.Summary.TPS != 3000 || b.Summary.TPS != 1000 {
		t.Errorf("tps %v and %v, want 3000 and 1000", a.Summary.TPS, b.Summary.TPS)
	}
	// Target 0: 900 at 100 µs and 1800 at 50 µs: median 50 µs, mean 66.7 µs.
	if a.Summary.Latency.P50Ms != 0.05 || b.Summary.Latency.P50Ms != 0.2 {
		t.Errorf("p50 %v and %v ms, want 0.05 and 0.2", a.Summary.Latency.P50Ms, b.Summary.Latency.P50Ms)
	}
	if m := a.Summary.Latency.MeanMs; m < 0.0666 || m > 0.0667 {
		t.Errorf("target 0 mean latency %v ms, want 0.0667", m)
	}
	if len(a.Intervals) != 2 || a.Intervals[1].StartS != 1.5 || len(b.Intervals) != 2 || b.Intervals[0].StartS != 0.5 {
		t.Errorf("intervals are not each target's slices: %+v / %+v", a.Intervals, b.Intervals)
	}
	// 2 slices × 15 ms of client CPU over 2700 transactions.
	if c := a.Summary.ClientCPU.PerTxnUS; c < 11.1 || c > 11.12 {
		t.Errorf("client cpu/txn %v µs, want 11.11", c)
	}
}
