package metrics

import (
	"sync"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// FailKind says why a transaction failed.
type FailKind uint8

// Failure kinds. Serialization and deadlock failures are the ones pgbench
// retries (SQLSTATE 40001 and 40P01); connection failures are a lost or
// refused connection; everything else (an SQL error, a script error) is other.
const (
	FailSerialization FailKind = iota
	FailDeadlock
	FailConnection
	FailOther
	NumFailKinds
)

var failNames = [NumFailKinds]string{"serialization", "deadlock", "connection", "other"}

func (k FailKind) String() string { return failNames[k] }

// Counts are the additive figures of an interval: merging two intervals adds
// them (LagMaxUS takes the maximum).
type Counts struct {
	Transactions int64               // completed and counted, late ones included
	Failed       [NumFailKinds]int64 // failed transactions by final cause
	Retried      int64               // transactions retried at least once
	Retries      int64               // retries in all
	Skipped      int64               // not started: already later than --latency-limit (with --rate)
	Late         int64               // completed later than --latency-limit
	LatSumUS     float64             // sum of latencies, for the exact mean
	LatSumSqUS   float64             // sum of squared latencies, for the stddev
	LagSumUS     float64             // sum of schedule lags (with --rate)
	LagMaxUS     int64               // largest schedule lag
	Conns        int64               // connections opened (with --connect)
	ConnSumUS    float64             // time spent opening them
}

// FailedTotal is the number of failed transactions of every kind.
func (c *Counts) FailedTotal() int64 {
	var n int64
	for _, f := range c.Failed {
		n += f
	}
	return n
}

func (c *Counts) add(o *Counts) {
	c.Transactions += o.Transactions
	for i := range c.Failed {
		c.Failed[i] += o.Failed[i]
	}
	c.Retried += o.Retried
	c.Retries += o.Retries
	c.Skipped += o.Skipped
	c.Late += o.Late
	c.LatSumUS += o.LatSumUS
	c.LatSumSqUS += o.LatSumSqUS
	c.LagSumUS += o.LagSumUS
	c.LagMaxUS = max(c.LagMaxUS, o.LagMaxUS)
	c.Conns += o.Conns
	c.ConnSumUS += o.ConnSumUS
}

// CommandStat is one script command's figures, for pgbench's -r report.
type CommandStat struct {
	Count   int64
	SumUS   float64
	Failed  int64
	Retries int64
}

// ScriptStat is one script's share of the transactions, for the
// per-script lines pgbench prints when several scripts are weighted.
type ScriptStat struct {
	Transactions int64
	Failed       int64
	LatSumUS     float64
	LatSumSqUS   float64
	// ByKind splits Failed by final cause; Retried, Retries and Skipped
	// are as in Counts, for the script's transactions only.
	ByKind           [NumFailKinds]int64
	Retried, Retries int64
	Skipped          int64
}

// Interval holds what happened during one interval (or a whole step, once
// merged): counts, a latency histogram of counted transactions, one
// ScriptStat per script and, with per-command reporting, one CommandStat
// per script command.
type Interval struct {
	Counts
	Latency  *hdr.Histogram
	Scripts  []ScriptStat
	Commands []CommandStat
}

// NewInterval returns an empty interval with room for nscripts scripts and
// ncmds commands.
func NewInterval(ncmds, nscripts int) *Interval {
	return &Interval{Latency: NewHistogram(), Commands: make([]CommandStat, ncmds), Scripts: make([]ScriptStat, nscripts)}
}

// RecordScript adds one transaction of script si: its latency when it
// succeeded, or a failure of kind.
func (iv *Interval) RecordScript(si int, latUS int64, failed bool, kind FailKind) {
	st := &iv.Scripts[si]
	if failed {
		st.Failed++
		st.ByKind[kind]++
		return
	}
	st.Transactions++
	lat := float64(latUS)
	st.LatSumUS += lat
	st.LatSumSqUS += lat * lat
}

// RecordTxn records one completed transaction: its latency (from its
// scheduled start with --rate) and its schedule lag, in microseconds.
func (iv *Interval) RecordTxn(latUS, lagUS int64, late bool) {
	iv.Transactions++
	lat := float64(latUS)
	iv.LatSumUS += lat
	iv.LatSumSqUS += lat * lat
	iv.LagSumUS += float64(lagUS)
	if lagUS > iv.LagMaxUS {
		iv.LagMaxUS = lagUS
	}
	if late {
		iv.Late++
	}
	RecordUS(iv.Latency, latUS)
}

// Merge adds o into iv.
func (iv *Interval) Merge(o *Interval) {
	iv.Counts.add(&o.Counts)
	iv.Latency.Merge(o.Latency)
	if len(iv.Commands) < len(o.Commands) {
		iv.Commands = append(iv.Commands, make([]CommandStat, len(o.Commands)-len(iv.Commands))...)
	}
	if len(iv.Scripts) < len(o.Scripts) {
		iv.Scripts = append(iv.Scripts, make([]ScriptStat, len(o.Scripts)-len(iv.Scripts))...)
	}
	for i, c := range o.Scripts {
		d := &iv.Scripts[i]
		d.Transactions += c.Transactions
		d.Failed += c.Failed
		d.LatSumUS += c.LatSumUS
		d.LatSumSqUS += c.LatSumSqUS
		for k := range d.ByKind {
			d.ByKind[k] += c.ByKind[k]
		}
		d.Retried += c.Retried
		d.Retries += c.Retries
		d.Skipped += c.Skipped
	}
	for i, c := range o.Commands {
		d := &iv.Commands[i]
		d.Count += c.Count
		d.SumUS += c.SumUS
		d.Failed += c.Failed
		d.Retries += c.Retries
	}
}

// Reset empties iv, keeping its storage.
func (iv *Interval) Reset() {
	iv.Counts = Counts{}
	iv.Latency.Reset()
	clear(iv.Scripts)
	clear(iv.Commands)
}

// Recorder is the current interval of one client, or of a shard of
// clients: each records into it under the recorder's own mutex, and the
// collector swaps it out once per interval. The engine gives each client a
// recorder of its own up to a few dozen clients, so the mutex is contended
// only by the collector's one swap per interval, and shares each recorder
// among a shard of clients beyond, so memory does not grow with a latency
// histogram per client.
type Recorder struct {
	mu  sync.Mutex
	cur *Interval
}

// NewRecorder returns a recorder for a client running nscripts scripts with
// ncmds commands in all.
func NewRecorder(ncmds, nscripts int) *Recorder { return &Recorder{cur: NewInterval(ncmds, nscripts)} }

// Lock returns the current interval for recording; call Unlock after.
func (r *Recorder) Lock() *Interval {
	r.mu.Lock()
	return r.cur
}

// Unlock releases the interval returned by Lock.
func (r *Recorder) Unlock() { r.mu.Unlock() }

// Swap installs fresh (which must be empty) as the current interval and
// returns the one it replaces, which now belongs to the caller.
func (r *Recorder) Swap(fresh *Interval) *Interval {
	r.mu.Lock()
	old := r.cur
	r.cur = fresh
	r.mu.Unlock()
	return old
}
