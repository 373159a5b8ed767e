package metrics_test

import (
	"math"
	"sync"
	"testing"

	"github.com/pgscale/pgscale/internal/metrics"
)

func TestSummarizeKnownDistribution(t *testing.T) {
	iv := metrics.NewInterval(0, 0)
	// 1..1000 µs, each once: mean 500.5 µs, population stddev sqrt((n²-1)/12).
	for us := int64(1); us <= 1000; us++ {
		iv.RecordTxn(us, 0, false)
	}
	s := iv.Summarize()
	if s.MeanMs != 0.5005 {
		t.Errorf("mean = %v ms, want 0.5005", s.MeanMs)
	}
	if want := math.Sqrt((1000.0*1000-1)/12) / 1000; math.Abs(s.StddevMs-want) > 1e-9 {
		t.Errorf("stddev = %v ms, want %v", s.StddevMs, want)
	}
	// Values below 2048 µs are exact in the histogram.
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"p50", s.P50Ms, 0.5}, {"p90", s.P90Ms, 0.9}, {"p99", s.P99Ms, 0.99}, {"p99.9", s.P999Ms, 0.999}, {"min", s.MinMs, 0.001}, {"max", s.MaxMs, 1}} {
		if c.got != c.want {
			t.Errorf("%s = %v ms, want %v", c.name, c.got, c.want)
		}
	}
}

func TestRecordClampsOutOfRange(t *testing.T) {
	iv := metrics.NewInterval(0, 0)
	iv.RecordTxn(0, 0, false)
	iv.RecordTxn(metrics.HighestUS*2, 0, true)
	if got := iv.Latency.TotalCount(); got != 2 {
		t.Fatalf("histogram holds %d values, want 2 (out-of-range values clamped, not dropped)", got)
	}
	if iv.Late != 1 {
		t.Errorf("late = %d, want 1", iv.Late)
	}
}

func TestMergeAddsCountsAndHistograms(t *testing.T) {
	a, b := metrics.NewInterval(2, 1), metrics.NewInterval(2, 1)
	a.RecordTxn(100, 5, false)
	a.Failed[metrics.FailSerialization] = 2
	a.Commands[1] = metrics.CommandStat{Count: 1, SumUS: 40}
	a.RecordScript(0, 100, false, metrics.FailOther)
	b.RecordTxn(300, 9, true)
	b.Failed[metrics.FailSerialization] = 1
	b.Failed[metrics.FailConnection] = 4
	b.Retries = 3
	b.Commands[1] = metrics.CommandStat{Count: 2, SumUS: 60, Failed: 1}
	b.RecordScript(0, 300, false, metrics.FailOther)
	b.RecordScript(0, 0, true, metrics.FailDeadlock)
	a.Merge(b)
	if a.Transactions != 2 || a.FailedTotal() != 7 || a.Failed[metrics.FailSerialization] != 3 || a.Retries != 3 || a.Late != 1 {
		t.Errorf("merged counts wrong: %+v", a.Counts)
	}
	if a.LagMaxUS != 9 || a.LagSumUS != 14 {
		t.Errorf("lag max %d sum %v, want 9 and 14", a.LagMaxUS, a.LagSumUS)
	}
	if a.Commands[1] != (metrics.CommandStat{Count: 3, SumUS: 100, Failed: 1}) {
		t.Errorf("command stats %+v", a.Commands[1])
	}
	want := metrics.ScriptStat{Transactions: 2, Failed: 1, LatSumUS: 400, LatSumSqUS: 100000}
	want.ByKind[metrics.FailDeadlock] = 1
	if a.Scripts[0] != want {
		t.Errorf("script stats %+v", a.Scripts[0])
	}
	if s := a.Summarize(); s.MeanMs != 0.2 || s.MaxMs != 0.3 {
		t.Errorf("merged summary %+v", s)
	}
	a.Reset()
	if a.Transactions != 0 || a.Latency.TotalCount() != 0 || a.Commands[1].Count != 0 {
		t.Errorf("reset left data: %+v", a)
	}
}

func TestEncodeDecodeIsExact(t *testing.T) {
	iv := metrics.NewInterval(0, 0)
	for i := int64(1); i < 200000; i += 7 {
		iv.RecordTxn(i*i%5_000_000+1, 0, false)
	}
	s, err := metrics.EncodeHistogram(iv.Latency)
	if err != nil {
		t.Fatal(err)
	}
	h, err := metrics.DecodeHistogram(s)
	if err != nil {
		t.Fatal(err)
	}
	if !h.Equals(iv.Latency) {
		t.Error("decoded histogram differs from the encoded one")
	}
	if _, err := metrics.DecodeHistogram("not base64!"); err == nil {
		t.Error("garbage decoded without error")
	}
}

// Clients record while a collector swaps intervals out: every transaction is
// counted exactly once (run with -race).
func TestRecorderSwapLosesNothing(t *testing.T) {
	const clients, perClient = 4, 20000
	recs := make([]*metrics.Recorder, clients)
	for i := range recs {
		recs[i] = metrics.NewRecorder(0, 0)
	}
	var wg sync.WaitGroup
	for _, r := range recs {
		wg.Add(1)
		go func(r *metrics.Recorder) {
			defer wg.Done()
			for i := 0; i < perClient; i++ {
				iv := r.Lock()
				iv.RecordTxn(int64(i%900+1), 0, false)
				r.Unlock()
			}
		}(r)
	}
	total := metrics.NewInterval(0, 0)
	spare := make([]*metrics.Interval, clients)
	for i := range spare {
		spare[i] = metrics.NewInterval(0, 0)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	collect := func() {
		for i, r := range recs {
			old := r.Swap(spare[i])
			total.Merge(old)
			old.Reset()
			spare[i] = old
		}
	}
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		collect()
	}
	collect()
	if total.Transactions != clients*perClient || total.Latency.TotalCount() != clients*perClient {
		t.Errorf("counted %d transactions (%d in histogram), want %d", total.Transactions, total.Latency.TotalCount(), clients*perClient)
	}
}
