// Package txnlog writes pgbench's per-transaction log (-l) while a run goes:
// a sink of the engine's transactions, one file per pgbench thread.
package txnlog

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pgscale/pgscale/internal/observe"
)

// Options say which transaction log pgbench -l would write.
type Options struct {
	// Prefix is --log-prefix (default "pgbench_log"), PID the number in
	// the file names (default this process's).
	Prefix string
	PID    int
	// Threads is the number of files: one per thread of -j, as pgbench
	// writes them.
	Threads int
	// SamplingRate is --sampling-rate (0: every transaction);
	// AggregateInterval is --aggregate-interval in seconds (0: a line per
	// transaction).
	SamplingRate      float64
	AggregateInterval int
	// Rate (-R), LatencyLimit (-L), MaxTries and FailuresDetailed choose
	// the optional columns, as in pgbench.
	Rate, LatencyLimit bool
	MaxTries           int
	FailuresDetailed   bool
}

// Log writes pgbench's per-transaction log (-l): one file per
// thread, PREFIX.PID for thread 0 and PREFIX.PID.N for thread N, with a
// line per transaction in pgbench's columns (client, transaction number,
// latency in µs or why not, script, Unix seconds and microseconds of its
// end, the schedule lag under -R, the retries under --max-tries), or with
// an aggregate interval a line per interval in pgbench's 15 columns. It is
// an observe.TxnSink; Txn is safe for concurrent use.
type Log struct {
	opts    Options
	files   []string
	threads []*logThread
	step    observe.TxnStep
}

// logThread is one thread's file, written under its own lock.
type logThread struct {
	mu     sync.Mutex
	f      *os.File
	w      *bufio.Writer
	sample interface{ Float64() float64 }
	agg    aggregate
	line   []byte
}

// aggregate is pgbench's StatsData for one interval of --aggregate-interval.
type aggregate struct {
	start                          int64 // µs since the epoch
	cnt, skipped, retried, retries int64
	serialization, deadlock        int64
	lat, lag                       simpleStats
}

// simpleStats is pgbench's SimpleStats, in µs.
type simpleStats struct {
	count               int64
	min, max, sum, sum2 float64
}

func (s *simpleStats) add(v float64) {
	if s.count == 0 || v < s.min {
		s.min = v
	}
	if s.count == 0 || v > s.max {
		s.max = v
	}
	s.count++
	s.sum += v
	s.sum2 += v * v
}

// Create creates the log files, as pgbench does before it
// connects; an error names the file as pgbench's "could not open logfile"
// does.
func Create(o Options) (*Log, error) {
	if o.Prefix == "" {
		o.Prefix = "pgbench_log"
	}
	if o.PID == 0 {
		o.PID = os.Getpid()
	}
	l := &Log{opts: o}
	for t := 0; t < max(o.Threads, 1); t++ {
		name := fmt.Sprintf("%s.%d", o.Prefix, o.PID)
		if t > 0 {
			name = fmt.Sprintf("%s.%d.%d", o.Prefix, o.PID, t)
		}
		f, err := os.Create(name)
		if err != nil {
			l.Close()
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			msg := err.Error()
			msg = strings.ToUpper(msg[:1]) + msg[1:] // C's strerror
			return nil, fmt.Errorf("could not open logfile \"%s\": %s", name, msg)
		}
		l.files = append(l.files, name)
		l.threads = append(l.threads, &logThread{f: f, w: bufio.NewWriterSize(f, 64<<10)})
	}
	return l, nil
}

// Files returns the log files' names, in thread order.
func (l *Log) Files() []string { return append([]string(nil), l.files...) }

// StartStep takes the step's thread layout and sampling sequences; the
// first aggregate interval starts at the clients' start rounded down to a
// second, as pgbench's does.
func (l *Log) StartStep(st observe.TxnStep) {
	l.step = st
	for t, th := range l.threads {
		th.mu.Lock()
		if t < len(st.Sample) {
			th.sample = st.Sample[t]
		}
		th.agg = aggregate{start: st.Start.UnixMicro() / 1e6 * 1e6}
		th.mu.Unlock()
	}
}

// Txn logs one transaction in its thread's file.
func (l *Log) Txn(t observe.Txn) {
	i := 0
	if l.step.Thread != nil {
		i = min(l.step.Thread(t.Client), len(l.threads)-1)
	}
	th := l.threads[i]
	th.mu.Lock()
	defer th.mu.Unlock()
	o := &l.opts
	if o.SamplingRate != 0 && th.sample != nil && th.sample.Float64() > o.SamplingRate {
		return
	}
	now := t.End.UnixMicro()
	if o.AggregateInterval > 0 {
		th.flush(o, now)
		th.agg.add(o, &t)
		return
	}
	b := th.line[:0]
	b = strconv.AppendInt(b, int64(t.Client), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(t.Number), 10)
	b = append(b, ' ')
	switch {
	case t.Skipped:
		b = append(b, "skipped"...)
	case t.Failed && o.FailuresDetailed:
		b = append(b, t.Kind...) // serialization, deadlock; other for pgscale's other failures
	case t.Failed:
		b = append(b, "failed"...)
	default:
		b = strconv.AppendInt(b, t.LatencyUS, 10)
	}
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(t.Script), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, now/1e6, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, now%1e6, 10)
	if o.Rate {
		b = append(b, ' ')
		b = strconv.AppendInt(b, t.LagUS, 10)
	}
	if o.MaxTries != 1 {
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(max(t.Tries-1, 0)), 10)
	}
	b = append(b, '\n')
	th.line = b
	th.w.Write(b)
}

// add is pgbench's accumStats.
func (a *aggregate) add(o *Options, t *observe.Txn) {
	if t.Skipped {
		a.skipped++
		return
	}
	if t.Tries > 1 {
		a.retries += int64(t.Tries - 1)
		a.retried++
	}
	switch {
	case !t.Failed:
		a.cnt++
		a.lat.add(float64(t.LatencyUS))
		if o.Rate {
			a.lag.add(float64(t.LagUS))
		}
	case t.Kind == "serialization":
		a.serialization++
	case t.Kind == "deadlock":
		a.deadlock++
	}
}

// flush writes every interval that ended by now (µs since the epoch),
// empty ones included, as pgbench's doLog does.
func (th *logThread) flush(o *Options, now int64) {
	step := int64(o.AggregateInterval) * 1e6
	for th.agg.start+step <= now {
		a := &th.agg
		var lag simpleStats
		if o.Rate {
			lag = a.lag
		}
		var skipped, retried, retries, ser, dead int64
		if o.LatencyLimit {
			skipped = a.skipped
		}
		if o.MaxTries != 1 {
			retried, retries = a.retried, a.retries
		}
		if o.FailuresDetailed {
			ser, dead = a.serialization, a.deadlock
		}
		fmt.Fprintf(th.w, "%d %d %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f %d %d %d %d %d\n",
			a.start/1e6, a.cnt, a.lat.sum, a.lat.sum2, a.lat.min, a.lat.max,
			lag.sum, lag.sum2, lag.min, lag.max, skipped, retried, retries, ser, dead)
		*a = aggregate{start: a.start + step}
	}
}

// Close writes the aggregate intervals that ended by now (not the last,
// unfinished one, as pgbench), and closes the files.
func (l *Log) Close() error {
	now := time.Now().UnixMicro()
	var errs []error
	for _, th := range l.threads {
		th.mu.Lock()
		if l.opts.AggregateInterval > 0 {
			th.flush(&l.opts, now)
		}
		errs = append(errs, th.w.Flush(), th.f.Close())
		th.mu.Unlock()
	}
	return errors.Join(errs...)
}
