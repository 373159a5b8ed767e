package engine

import (
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pgscale/pgscale/internal/metrics"
)

// collect swaps every recorder out at every interval tick and slice edge,
// merges, and reports progress, until the clients are done.
func (e *engine) collect(res *Result, start, window time.Time, done <-chan struct{}) {
	c := newCollector(e, res, start, window)
	for {
		next, final := c.nextEvent()
		woke := make(chan struct{}, 1)
		go sleepUntil(next, woke)
		select {
		case <-woke:
		case <-done:
			next, final = time.Now(), true
		case <-e.parent.Done():
			next, final = time.Now(), true
		case <-e.abortCh:
			next, final = time.Now(), true
		}
		if final {
			e.stop.Store(true)
			close(e.stopCh)
			e.waitClients(done)
			if n := time.Now(); c.end.IsZero() || n.Before(next) {
				next = n
			}
			if !c.end.IsZero() && next.After(c.end) {
				// The clients stopped at the end (endAt) before the
				// collector looked: it is the boundary, as on time.
				next = c.end
			}
		}
		// at is where this event's boundary really falls: when the
		// recorders are swapped out, which is after the planned time when
		// the collector was starved of CPU. Lengths and rates use it; the
		// interval ticks stay on their planned grid, while a slice edge
		// that came late moves the slices after it (delay). The final
		// boundary is the planned end: later completions were not counted.
		at := next
		if now := time.Now(); !final && now.After(next) {
			at = now
		}
		c.event(next, at, final)
		if final {
			return
		}
	}
}

// sleepUntil sends on woke once t has come, having slept in the kernel
// (nanosleep, a blocking system call that gives up its P) rather than on a
// runtime timer. A runtime timer is kept by the P that set it, and runs
// when that P schedules or an idle P steals it; a P whose client waits for
// its backend in a raw system call (IORaw) schedules nothing until the
// backend answers, and every other P may be a client's too. A backend held
// up by a lock thus held the collector's timer: it fired 3 s late, at the
// step's end, in 2 of 4 steps of select-only beside ddl-churn, after the
// window closed with a statement of its sessions cut off. A thread back
// from nanosleep needs any P, which the clients give up between
// transactions.
func sleepUntil(t time.Time, woke chan<- struct{}) {
	for d := time.Until(t); d > 0; d = time.Until(t) {
		ts := unix.NsecToTimespec(d.Nanoseconds())
		unix.Nanosleep(&ts, nil) // EINTR (a signal): sleep what is left
	}
	woke <- struct{}{}
}

// event is one of collect's events, planned at next, where its boundary
// really falls at (later than next when the collector was late): what the
// clients recorded is merged, a slice edge switches the clients' target,
// an interval ends, and a slice edge that came late moves the rest of the
// plan of slices with it (delay).
func (c *collector) event(next, at time.Time, final bool) {
	c.drain()
	edge := c.slicing && (final || !next.Before(c.nextSliceEvent()))
	if edge {
		c.sliceEdge(at)
	}
	c.endInterval(next, at, final)
	if final {
		c.finish(at)
		return
	}
	if edge {
		if at.After(next) {
			c.delay(at.Sub(next))
		}
		c.lastSlice()
	}
}

// collector is collect's state between its events: the intervals it
// merges into, the measured window, and the slice under way.
type collector struct {
	e   *engine
	cfg *Config
	res *Result

	start, window time.Time
	end           time.Time // the planned end; zero with a transaction count

	spare   []*metrics.Interval // one per recorder, swapped in for its filled one
	drained *metrics.Interval   // what the clients recorded since the last event
	iv      *metrics.Interval   // the current interval
	sl      *metrics.Interval   // the counted part of the current slice
	last    time.Time           // where the current interval began
	tick    int                 // the next interval tick's number

	measuring   bool // past the warm-up
	measureFrom time.Time
	ru0         syscall.Rusage // at measureFrom

	// Slices: slice j is [start+shift+j*Slice, start+shift+(j+1)*Slice);
	// it is counted from Settle after its start. shift is how late the
	// collector came to the slice edges so far (delay).
	slicing   bool
	slice     int
	shift     time.Duration
	counting  bool // in the counted part of the slice
	sliceFrom time.Time
	sru       syscall.Rusage     // at sliceFrom
	meter0    map[string]float64 // the meter at the start of the counted part
}

func newCollector(e *engine, res *Result, start, window time.Time) *collector {
	cfg := e.cfg
	ncmds, nscripts := len(res.Total.Commands), len(res.Total.Scripts)
	c := &collector{e: e, cfg: cfg, res: res, start: start, window: window,
		spare:   make([]*metrics.Interval, len(e.recs)),
		drained: metrics.NewInterval(ncmds, nscripts),
		iv:      metrics.NewInterval(ncmds, nscripts),
		sl:      metrics.NewInterval(ncmds, nscripts),
		last:    start, tick: 1,
		measuring: cfg.Warmup <= 0, measureFrom: window, // when the measured window really began
		slicing: len(e.connCfgs) > 1}
	for i := range c.spare {
		c.spare[i] = metrics.NewInterval(ncmds, nscripts)
	}
	if c.measuring {
		syscall.Getrusage(syscall.RUSAGE_SELF, &c.ru0)
	}
	if cfg.Duration > 0 {
		c.end = window.Add(cfg.Duration)
	}
	if c.slicing {
		c.counting = cfg.Settle == 0
		c.sliceFrom = start
		syscall.Getrusage(syscall.RUSAGE_SELF, &c.sru)
		if c.counting {
			c.readMeter()
		}
		c.lastSlice()
	}
	return c
}

// nextEvent is when the next event is planned: an interval tick, the end
// of warm-up, a slice edge or the end; final says it is the end.
func (c *collector) nextEvent() (next time.Time, final bool) {
	next = c.start.Add(time.Duration(c.tick) * c.cfg.Interval)
	if !c.measuring && next.After(c.window) {
		next = c.window
	}
	if c.slicing {
		if t := c.nextSliceEvent(); t.Before(next) {
			next = t
		}
	}
	if !c.end.IsZero() && !next.Before(c.end) {
		next, final = c.end, true
	}
	return next, final
}

// nextSliceEvent is the current slice's next edge: the end of its settle
// time, or its end.
func (c *collector) nextSliceEvent() time.Time {
	b := c.start.Add(c.shift + time.Duration(c.slice)*c.cfg.Slice)
	if !c.counting && c.cfg.Settle > 0 {
		return b.Add(c.cfg.Settle)
	}
	return b.Add(c.cfg.Slice)
}

// delay moves the rest of the plan of slices d later, because the
// collector came d late to the slice edge it just passed: the clients
// served the slice under way until then. Every slice keeps its settle time
// and its counted length from when the clients really switched; on the
// planned grid, the slices whose time went by meanwhile were counted for
// a few microseconds (their edges passed one after the other as the
// collector caught up), and a target whose slices followed a starved
// collector's was measured for nearly nothing. The measured window's start
// (when still ahead) and its end move too, so every target still gets its
// slices: the step runs d longer.
func (c *collector) delay(d time.Duration) {
	c.shift += d
	if !c.measuring {
		c.window = c.window.Add(d)
	}
	if !c.end.IsZero() {
		c.end = c.end.Add(d)
	}
}

// lastSlice tells the clients the end (endAt) once no slice edge is left
// before it: with slices the end moves with every late edge (delay), so
// the clients learn it only when it can no longer move; until then they
// keep running however late the collector is.
func (c *collector) lastSlice() {
	if !c.end.IsZero() && !c.nextSliceEvent().Before(c.end) {
		c.e.endAt.Store(c.end.UnixNano())
	}
}

// readMeter reads the slice meter at the start of a slice's counted part.
func (c *collector) readMeter() {
	if c.cfg.SliceMeter != nil && c.slicing {
		c.meter0 = c.cfg.SliceMeter(int(c.e.target.Load()))
	}
}

// drain swaps every recorder out and merges what the clients recorded into
// the current interval and, when it is counted, the current slice.
func (c *collector) drain() {
	for i, r := range c.e.recs {
		old := r.Swap(c.spare[i])
		c.drained.Merge(old)
		old.Reset()
		c.spare[i] = old
	}
	c.iv.Merge(c.drained)
	if c.slicing && c.counting && c.measuring {
		c.sl.Merge(c.drained)
	}
	c.drained.Reset()
}

// sliceEdge ends the settle time of a slice, or the slice itself at at: a
// measured slice's counted part is kept, and the clients switch to the
// next slice's target.
func (c *collector) sliceEdge(at time.Time) {
	cfg := c.cfg
	if c.counting {
		if c.measuring && at.After(c.sliceFrom) {
			var ru syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
			p := Slice{Target: int(c.e.target.Load()), Start: c.sliceFrom.Sub(c.window), Length: at.Sub(c.sliceFrom),
				Counts: c.sl.Counts, Latency: c.sl.Summarize(),
				ClientUser: tvDiff(ru.Utime, c.sru.Utime), ClientSys: tvDiff(ru.Stime, c.sru.Stime)}
			p.Histogram, _ = metrics.EncodeHistogram(c.sl.Latency)
			if cfg.SliceMeter != nil && c.meter0 != nil {
				p.Costs = diff(cfg.SliceMeter(p.Target), c.meter0)
			}
			c.res.Slices = append(c.res.Slices, p)
		}
		c.sl.Reset()
		c.slice++
		c.e.target.Store(int32(cfg.SliceTarget(c.slice)))
		c.counting = cfg.Settle == 0
	} else {
		c.counting = true
	}
	c.sliceFrom = at
	syscall.Getrusage(syscall.RUSAGE_SELF, &c.sru)
	if c.counting {
		c.readMeter()
	}
}

// endInterval ends the current interval at at when next is an interval
// tick, the end of warm-up or the end: a measured interval joins the
// series and the total, and progress is reported. At the end of warm-up
// the measured window starts.
func (c *collector) endInterval(next, at time.Time, final bool) {
	cfg := c.cfg
	tickAt := c.start.Add(time.Duration(c.tick) * cfg.Interval)
	if !final && next.Before(tickAt) && (c.measuring || next.Before(c.window)) {
		return
	}
	if !next.Before(tickAt) {
		c.tick++
	}
	if at.Before(c.last) {
		// The planned end, before where a late collector ended the
		// interval before it: this last one is empty, not of negative
		// length.
		at = c.last
	}
	p := Point{Start: c.last.Sub(c.window), Length: at.Sub(c.last), Counts: c.iv.Counts, Latency: c.iv.Summarize()}
	if c.measuring {
		p.Histogram, _ = metrics.EncodeHistogram(c.iv.Latency)
		c.res.Total.Merge(c.iv)
		c.res.Series = append(c.res.Series, p)
	}
	if cfg.Progress != nil && p.Length > 0 {
		cfg.Progress(Progress{Clients: cfg.Clients, Elapsed: next.Sub(c.start), Warmup: !c.measuring, Point: p})
	}
	c.iv.Reset()
	c.last = at
	// A collector that came to a tick later than the ticks after it (the
	// machine starved it of CPU) ends one interval there and goes on at
	// the next tick still ahead, as pgbench's -P skips the reports whose
	// time went by. Ending one interval per tick passed, each a few
	// microseconds long, put rates measured over nothing into the series:
	// a disturbance's before phase then began at such an interval (its
	// batch length read 0.0065 s), and its tps carried the noise.
	for !c.start.Add(time.Duration(c.tick) * cfg.Interval).After(at) {
		c.tick++
	}
	if !c.measuring && !next.Before(c.window) {
		c.measuring = true
		c.measureFrom = at
		syscall.Getrusage(syscall.RUSAGE_SELF, &c.ru0)
		if c.slicing && c.counting && at.After(c.sliceFrom) {
			c.sliceFrom = at // a slice straddling the window counts from the window
			c.sru = c.ru0
			c.readMeter()
		}
	}
}

// finish records the measured window's start, length and client CPU.
func (c *collector) finish(at time.Time) {
	var ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	c.res.ClientUser = tvDiff(ru1.Utime, c.ru0.Utime)
	c.res.ClientSys = tvDiff(ru1.Stime, c.ru0.Stime)
	c.res.Began = c.measureFrom
	c.res.Elapsed = max(at.Sub(c.measureFrom), 0)
}

// diff is b - a, key by key, for the keys of b: the growth of each
// counter. The counters never fall: a difference below zero is rounding
// (sums of the same times in another order, -5.5e-17) and counts as none.
func diff(b, a map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(b))
	for k, v := range b {
		out[k] = max(0, v-a[k])
	}
	return out
}

func tvDiff(a, b syscall.Timeval) time.Duration {
	return time.Duration(a.Nano() - b.Nano())
}
