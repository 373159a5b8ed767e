package txnlog_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/txnlog"
)

type fixedRand float64

func (r fixedRand) Float64() float64 { return float64(r) }

func openLog(t testing.TB, o txnlog.Options, start time.Time) *txnlog.Log {
	t.Helper()
	o.Prefix, o.PID = filepath.Join(t.TempDir(), "log"), 42
	l, err := txnlog.Create(o)
	if err != nil {
		t.Fatal(err)
	}
	st := observe.TxnStep{Clients: 2, Threads: o.Threads, Thread: func(c int) int { return c % max(o.Threads, 1) }, Start: start}
	for i := 0; i < max(o.Threads, 1); i++ {
		st.Sample = append(st.Sample, fixedRand(0.5))
	}
	l.StartStep(st)
	return l
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// pgbench's per-transaction columns: the optional lag and retries, and
// the words for transactions that did not complete.
func TestPgbenchLogLines(t *testing.T) {
	end := time.Unix(1796118290, 635379000)
	l := openLog(t, txnlog.Options{Threads: 2, Rate: true, MaxTries: 3, FailuresDetailed: true}, end)
	l.Txn(observe.Txn{Client: 0, Number: 1, Script: 0, End: end, LatencyUS: 1345, LagUS: 73, Tries: 1})
	l.Txn(observe.Txn{Client: 1, Number: 1, Script: 2, End: end, Tries: 3, Failed: true, Kind: "serialization"})
	l.Txn(observe.Txn{Client: 0, Number: 2, Script: 1, End: end.Add(time.Millisecond), Skipped: true})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	files := l.Files()
	if len(files) != 2 || filepath.Base(files[0]) != "log.42" || filepath.Base(files[1]) != "log.42.1" {
		t.Fatalf("files %v, want log.42 and log.42.1", files)
	}
	if got, want := readFile(t, files[0]), "0 1 1345 0 1796118290 635379 73 0\n0 2 skipped 1 1796118290 636379 0 0\n"; got != want {
		t.Errorf("thread 0:\n%s\nwant\n%s", got, want)
	}
	if got, want := readFile(t, files[1]), "1 1 serialization 2 1796118290 635379 0 2\n"; got != want {
		t.Errorf("thread 1:\n%s\nwant\n%s", got, want)
	}
}

// --aggregate-interval: the 15 columns, empty intervals written, the last
// unfinished one not, the first starting at the whole second.
func TestPgbenchLogAggregate(t *testing.T) {
	// Close writes the intervals that ended by the time it runs: the run
	// is set in the last few seconds.
	base := time.Now().Add(-5 * time.Second).Truncate(time.Second)
	at := func(ms int) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }
	l := openLog(t, txnlog.Options{Threads: 1, AggregateInterval: 1, Rate: true, LatencyLimit: true, MaxTries: 2}, at(400))
	l.Txn(observe.Txn{Client: 0, Number: 1, End: at(900), LatencyUS: 100, LagUS: 5, Tries: 1})
	l.Txn(observe.Txn{Client: 1, Number: 1, End: at(950), LatencyUS: 300, LagUS: 7, Tries: 2})
	l.Txn(observe.Txn{Client: 0, Number: 2, End: at(2100), Skipped: true})
	l.Txn(observe.Txn{Client: 0, Number: 3, End: at(3000), Failed: true, Kind: "deadlock", Tries: 2})
	l.Close()
	s := base.Unix()
	want := fmt.Sprintf("%d 2 400 100000 100 300 12 74 5 7 0 1 1 0 0\n", s) +
		fmt.Sprintf("%d 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n", s+1) +
		fmt.Sprintf("%d 0 0 0 0 0 0 0 0 0 1 0 0 0 0\n", s+2) +
		fmt.Sprintf("%d 0 0 0 0 0 0 0 0 0 0 1 1 0 0\n", s+3)
	if got := readFile(t, l.Files()[0]); !strings.HasPrefix(got, want) || strings.Count(got, "\n") > 7 {
		t.Errorf("aggregate log:\n%s\nwant it to start with\n%s", got, want)
	}
}

func TestPgbenchLogCannotOpen(t *testing.T) {
	_, err := txnlog.Create(txnlog.Options{Prefix: "/nonexistent/dir/log", PID: 7})
	if err == nil || err.Error() != `could not open logfile "/nonexistent/dir/log.7": No such file or directory` {
		t.Errorf("err = %v", err)
	}
}

// What a transaction costs the client that logs it with -l: formatting
// its line and writing it into the thread's buffer, under the thread's
// lock (BenchmarkPgbenchLogTxn/raw), or adding it to the interval
// (aggregate); parallel is 4 goroutines sharing one thread's file, as
// clients of one pgbench thread do. Without -l the engine's hook is one
// nil check.
func BenchmarkPgbenchLogTxn(b *testing.B) {
	for _, bc := range []struct {
		name     string
		o        txnlog.Options
		parallel bool
	}{
		{"raw", txnlog.Options{Threads: 1}, false},
		{"raw-rate-tries", txnlog.Options{Threads: 1, Rate: true, MaxTries: 3}, false},
		{"aggregate", txnlog.Options{Threads: 1, AggregateInterval: 1}, false},
		{"raw-parallel", txnlog.Options{Threads: 1}, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			now := time.Now()
			l := openLog(b, bc.o, now)
			defer l.Close()
			txn := observe.Txn{Client: 1, Number: 12345, Script: 0, End: now, LatencyUS: 1234, LagUS: 56, Tries: 1}
			b.ReportAllocs()
			b.ResetTimer()
			if bc.parallel {
				b.SetParallelism(2) // 2 × GOMAXPROCS (2 here) goroutines
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						l.Txn(txn)
					}
				})
				return
			}
			for i := 0; i < b.N; i++ {
				txn.Number = i
				l.Txn(txn)
			}
		})
	}
}
