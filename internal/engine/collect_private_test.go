package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/load"
	"github.com/pgscale/pgscale/internal/metrics"
)

// slicedStep plays collect's events on a clock of its own for a step of
// 2 s per target in 100 ms slices (10 ms settle) over two targets that
// alternate, after 0.2 s of warm-up: the clients complete a transaction
// every millisecond on the target they are told, and the collector looks
// when it planned to, except that it is held up until the time late
// returns for an event planned at next (before the collector handles it).
// It returns the measured slices and the end the clients were told.
func slicedStep(t *testing.T, late func(next time.Time, c *collector) time.Time) (slices []Slice, endAt time.Time) {
	t.Helper()
	start := time.Unix(1000, 0)
	cfg := &Config{Settings: load.Settings{Duration: 4 * time.Second, Warmup: 200 * time.Millisecond, Interval: time.Second},
		Targets: make([]*pgconn.Config, 2), Slice: 100 * time.Millisecond, Settle: 10 * time.Millisecond,
		SliceTarget: func(i int) int { return i % 2 }}
	rec := metrics.NewRecorder(0, 1)
	e := &engine{cfg: cfg, recs: []*metrics.Recorder{rec}, connCfgs: make([]*pgconn.Config, 2)}
	res := &Result{Total: metrics.NewInterval(0, 1), Series: []Point{}, Slices: []Slice{}}
	c := newCollector(e, res, start, start.Add(cfg.Warmup))
	now := start
	for range 10000 {
		next, final := c.nextEvent()
		at := late(next, c)
		if at.Before(now) {
			at = now // events whose time went by come at once
		}
		if final {
			at = next
		}
		// The clients run until the collector looks, on the target it
		// last told them, and stop at the end they were told.
		for ; now.Before(at); now = now.Add(time.Millisecond) {
			if end := e.endAt.Load(); end != 0 && now.UnixNano() >= end {
				break
			}
			iv := rec.Lock()
			iv.RecordTxn(1000, 0, false)
			rec.Unlock()
		}
		now = at
		c.event(next, at, final)
		if final {
			return res.Slices, time.Unix(0, e.endAt.Load())
		}
	}
	t.Fatal("the step never ended")
	return nil, time.Time{}
}

// perTarget is each target's slices and counted time.
func perTarget(slices []Slice) (n [2]int, counted [2]time.Duration, txns [2]int64) {
	for _, s := range slices {
		n[s.Target]++
		counted[s.Target] += s.Length
		txns[s.Target] += s.Counts.Transactions
	}
	return n, counted, txns
}

// On time, each target gets its 20 slices of 90 ms counted, and the
// clients are told the planned end.
func TestSlicesOnTime(t *testing.T) {
	slices, endAt := slicedStep(t, func(next time.Time, _ *collector) time.Time { return next })
	n, counted, txns := perTarget(slices)
	for ti := range n {
		if n[ti] != 20 || counted[ti] != 20*90*time.Millisecond || txns[ti] != 20*90 {
			t.Errorf("target %d: %d slices, %v counted, %d transactions; want 20, 1.8s, 1800", ti, n[ti], counted[ti], txns[ti])
		}
	}
	if want := time.Unix(1000, 0).Add(4200 * time.Millisecond); !endAt.Equal(want) {
		t.Errorf("clients told the end %v, want %v", endAt, want)
	}
}

// A collector held up for 250 ms (the machine starved it; the clients
// kept running on the target it had told them) does not take the slices
// whose time went by meanwhile from the targets they belonged to: every
// slice keeps its settle time and its 90 ms counted from when the clients
// really switched, and the step runs 250 ms longer. On the planned grid,
// they were counted for no time at all, and a target whose slices all
// followed such stalls completed nothing in the step (a round lost in an
// A/B run under a CPU hog).
func TestSlicesLateCollector(t *testing.T) {
	held := func(from, until time.Duration) func(time.Time, *collector) time.Time {
		t0 := time.Unix(1000, 0)
		return func(next time.Time, _ *collector) time.Time {
			if d := next.Sub(t0); d >= from && d < until {
				return t0.Add(until)
			}
			return next
		}
	}
	// Held up from the end of slice 7 (target 1) to 250 ms later: slices
	// 8 and 9 (targets 0 and 1) went by on the planned grid.
	slices, endAt := slicedStep(t, held(800*time.Millisecond, 1050*time.Millisecond))
	n, counted, txns := perTarget(slices)
	for ti := range n {
		if n[ti] != 20 {
			t.Errorf("target %d: %d slices, want 20", ti, n[ti])
		}
	}
	for i, s := range slices {
		if s.Length < 90*time.Millisecond || s.Counts.Transactions < 90 {
			t.Errorf("slice %d (target %d) at %v: counted %v, %d transactions; want 90 ms and 90 at least", i, s.Target, s.Start, s.Length, s.Counts.Transactions)
		}
	}
	// Target 1's slice under way counts the 250 ms its clients ran on it.
	if counted[0] != 20*90*time.Millisecond || counted[1] != 20*90*time.Millisecond+250*time.Millisecond || txns[1] != 20*90+250 {
		t.Errorf("counted %v, %d transactions; want 1.8s and 2.05s, 1800 and 2050", counted, txns)
	}
	if want := time.Unix(1000, 0).Add(4450 * time.Millisecond); !endAt.Equal(want) {
		t.Errorf("clients told the end %v, want %v (the planned end 250 ms later)", endAt, want)
	}

	// A collector late by more than a slice at the end of every slice of
	// target 1 (its clients held up there): target 0 still gets all its
	// slices.
	slices, _ = slicedStep(t, func(next time.Time, c *collector) time.Time {
		if c.counting && c.e.target.Load() == 1 && next.Equal(c.nextSliceEvent()) {
			return next.Add(150 * time.Millisecond)
		}
		return next
	})
	n, counted, txns = perTarget(slices)
	if n[0] != 20 || counted[0] != 20*90*time.Millisecond || txns[0] != 20*90 {
		t.Errorf("target 0 after every late edge: %d slices, %v counted, %d transactions; want 20, 1.8s, 1800", n[0], counted[0], txns[0])
	}
}

// lateSeries plays an 8 s step of 1 s intervals on a clock of its own,
// the clients completing a transaction every millisecond, with the
// collector held up until until for the events planned in [from, until);
// it returns the series and the step's total.
func lateSeries(from, until time.Duration) ([]Point, int64) {
	start := time.Unix(1000, 0)
	cfg := &Config{Settings: load.Settings{Duration: 8 * time.Second, Interval: time.Second}}
	rec := metrics.NewRecorder(0, 1)
	e := &engine{cfg: cfg, recs: []*metrics.Recorder{rec}, connCfgs: make([]*pgconn.Config, 1)}
	res := &Result{Total: metrics.NewInterval(0, 1), Series: []Point{}}
	c := newCollector(e, res, start, start)
	now := start
	for range 1000 {
		next, final := c.nextEvent()
		at := next
		if d := next.Sub(start); d >= from && d < until {
			at = start.Add(until)
		}
		if at.Before(now) {
			at = now // events whose time went by come at once
		}
		if final {
			at = next // the planned end, as collect has it
		}
		for ; now.Before(at); now = now.Add(time.Millisecond) {
			iv := rec.Lock()
			iv.RecordTxn(1000, 0, false)
			rec.Unlock()
		}
		c.event(next, at, final)
		if final {
			break
		}
	}
	return res.Series, res.Total.Counts.Transactions
}

// edges is where a series' intervals start and how long they last.
func edges(series []Point) string {
	var starts, lengths []time.Duration
	for _, p := range series {
		starts, lengths = append(starts, p.Start), append(lengths, p.Length)
	}
	return fmt.Sprint(starts, lengths)
}

// A collector held up from before the 2 s tick until 4.8 s (the machine
// starved it; the clients kept running) ends one interval at 4.8 s and goes
// on at the 5 s tick, as pgbench's -P skips the reports whose time went by:
// the series has no interval of no length (one per tick passed, before),
// whose rate was measured over nothing, and its intervals still cover the
// step edge to edge. Held up past the step's end, its last interval is
// empty, not of negative length.
func TestIntervalsLateCollector(t *testing.T) {
	ms := time.Millisecond
	series, n := lateSeries(2*time.Second, 4800*ms)
	want := fmt.Sprint([]time.Duration{0, 1000 * ms, 4800 * ms, 5000 * ms, 6000 * ms, 7000 * ms},
		[]time.Duration{1000 * ms, 3800 * ms, 200 * ms, 1000 * ms, 1000 * ms, 1000 * ms})
	if got := edges(series); got != want || n != 8000 {
		t.Errorf("intervals (starts, lengths) %s, %d transactions; want %s, 8000", got, n, want)
	}
	series, _ = lateSeries(7*time.Second, 8300*ms)
	want = fmt.Sprint([]time.Duration{0, 1000 * ms, 2000 * ms, 3000 * ms, 4000 * ms, 5000 * ms, 6000 * ms, 8300 * ms},
		[]time.Duration{1000 * ms, 1000 * ms, 1000 * ms, 1000 * ms, 1000 * ms, 1000 * ms, 2300 * ms, 0})
	if got := edges(series); got != want {
		t.Errorf("held past the end: intervals (starts, lengths) %s; want %s", got, want)
	}
}
