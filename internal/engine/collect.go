package engine

import (
	"syscall"
	"time"

	"github.com/pgscale/pgscale/internal/metrics"
)

// collect swaps every recorder out at every interval tick and slice edge,
// merges, and reports progress, until the clients are done.
func (e *engine) collect(res *Result, start, window time.Time, done <-chan struct{}) {
	c := newCollector(e, res, start, window)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		next, final := c.nextEvent()
		timer.Reset(time.Until(next))
		select {
		case <-timer.C:
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
		}
		// at is where this event's boundary really falls: when the
		// recorders are swapped out, which is after the planned time when
		// the collector was starved of CPU. Lengths and rates use it; the
		// plan (ticks, slice edges) stays on the planned grid. The final
		// boundary is the planned end: later completions were not counted.
		at := next
		if now := time.Now(); !final && now.After(next) {
			at = now
		}
		c.drain()
		if c.slicing && (final || !next.Before(c.nextSliceEvent())) {
			c.sliceEdge(at)
		}
		c.endInterval(next, at, final)
		if final {
			c.finish(at)
			return
		}
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

	// Slices: slice j is [start+j*Slice, start+(j+1)*Slice); it is counted
	// from Settle after its start.
	slicing   bool
	slice     int
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
	b := c.start.Add(time.Duration(c.slice) * c.cfg.Slice)
	if !c.counting && c.cfg.Settle > 0 {
		return b.Add(c.cfg.Settle)
	}
	return b.Add(c.cfg.Slice)
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
