package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/metrics"
	"github.com/pgscale/pgscale/internal/script"
)

// client is one simulated user: one goroutine, one connection, its own
// interpreter state, and a recorder of its own or shared with other clients
// (engine.recorders).
type client struct {
	e       *engine
	id      int
	sc      *script.Interp
	scripts []*script.Script
	offsets []int             // index of each script's first command in the command stats
	rec     *metrics.Recorder // shared with other clients beyond ownRecorders
	rng     *rand.Rand        // rate schedule

	// One connection per target (one target unless slicing A/B targets);
	// conn and prepared are the current target's.
	conns     []*pgconn.PgConn
	lives     []atomic.Pointer[pgconn.PgConn] // for interrupt from the collector
	preps     [][][]*pgconn.StatementDescription
	cur       int
	conn      *pgconn.PgConn
	prepared  [][]*pgconn.StatementDescription
	pipe      *pipeline // non-nil inside \startpipeline ... \endpipeline
	x         exchange
	pipeState pipeline

	params [][]byte
	sqlBuf []byte
	names  []string
	cmd    []metrics.CommandStat // this transaction's per-command figures (-r)
	timer  *time.Timer

	sched        time.Time // next scheduled start with --rate
	connUS       int64     // connection time to charge to this transaction (-C)
	firstConnect time.Duration
	fol          follower // with Config.Colocate: this client's thread follows its backend's CPU
	done         int      // transactions finished (for -t)
	aborted      bool

	// Where the last error happened: the command's index in its script and
	// the statement within a compound SQL command.
	failCmd, failQuery int
	// lost is when the connection broke in a transaction, zero once it is
	// connected again (outages).
	lost time.Time
}

func newClient(e *engine, id, ncmds int, offsets []int, rec *metrics.Recorder) *client {
	scripts := e.cfg.Program.Scripts()
	c := &client{
		e: e, id: id, scripts: scripts, offsets: offsets,
		sc:    e.cfg.Program.NewInterp(id),
		rec:   rec,
		rng:   rand.New(rand.NewPCG(e.cfg.Seed, uint64(id)+1)),
		timer: time.NewTimer(time.Hour),
		fol:   follower{fd: -1},
	}
	c.timer.Stop()
	nt := len(e.connCfgs)
	c.conns = make([]*pgconn.PgConn, nt)
	c.lives = make([]atomic.Pointer[pgconn.PgConn], nt)
	c.preps = make([][][]*pgconn.StatementDescription, nt)
	for t := range c.preps {
		c.preps[t] = make([][]*pgconn.StatementDescription, len(scripts))
		for i, s := range scripts {
			c.preps[t][i] = make([]*pgconn.StatementDescription, len(s.Commands))
		}
	}
	c.prepared = c.preps[0]
	if e.cfg.PerCommand {
		c.cmd = make([]metrics.CommandStat, ncmds)
	}
	return c
}

// abort stops the client outside a transaction (it could not connect).
func (c *client) abort(err error) {
	c.aborted = true
	c.report(Failure{Client: c.id, Script: -1, Command: -1, Err: err, Kind: metrics.FailConnection, Abort: true})
}

// report tells of a client error: every one to OnFailure when set,
// aborts only as a one-line event otherwise. An abort under ExitOnAbort
// ends the step.
func (c *client) report(f Failure) {
	if on := c.e.cfg.OnFailure; on != nil {
		on(f)
	} else if f.Abort {
		c.e.events(fmt.Sprintf("client %d aborted: %s", c.id, f.Text()))
	}
	if f.Abort && c.e.cfg.ExitOnAbort {
		c.e.exitOnAbort(c.id)
	}
}

// sleepSchedule waits d unless the step stops first (schedule waits and
// reconnect back-off: nothing is in flight).
func (c *client) sleepSchedule(d time.Duration) bool {
	if d <= 0 {
		return !c.e.stop.Load()
	}
	c.timer.Reset(d)
	select {
	case <-c.timer.C:
		return !c.e.stop.Load()
	case <-c.e.stopCh:
		c.timer.Stop()
		return false
	case <-c.e.ctx.Done():
		c.timer.Stop()
		return false
	}
}

// sleepInTxn is \sleep: it is part of the transaction, so only an interrupt
// cuts it short.
func (c *client) sleepInTxn(d time.Duration) bool {
	c.timer.Reset(d)
	select {
	case <-c.timer.C:
		return true
	case <-c.e.ctx.Done():
		c.timer.Stop()
		return false
	}
}

// interarrival draws the wait before the next scheduled transaction: a
// Poisson process with the client's share of the target rate.
func (c *client) interarrival() time.Duration {
	mean := float64(c.e.cfg.Clients) / c.e.cfg.Rate * float64(time.Second)
	return time.Duration(-math.Log(1-c.rng.Float64()) * mean)
}

// run runs transactions until the step stops (or -t is reached); the
// caller closes the connections after (engine.runClients).
func (c *client) run(start time.Time) {
	cfg := c.e.cfg
	c.sched = start
	yielded, yields := start, 0
	colocate := c.e.pins != nil
	if colocate {
		c.follow()
		defer c.fol.close()
	}
	for !c.e.stop.Load() {
		if cfg.Transactions > 0 && c.done >= cfg.Transactions {
			return
		}
		// pgbench chooses the script first, for skipped transactions too.
		si := c.sc.Choose()
		var begin time.Time
		var lagUS int64
		if cfg.Rate > 0 {
			c.sched = c.sched.Add(c.interarrival())
			if cfg.LatencyLimit > 0 && time.Since(c.sched) > cfg.LatencyLimit {
				// Already later than the limit before it starts: skipped, as pgbench does.
				iv := c.rec.Lock()
				iv.Skipped++
				iv.Scripts[si].Skipped++
				c.rec.Unlock()
				c.done++
				if on := cfg.OnTxn; on != nil {
					on(Txn{Client: c.id, Number: c.done, Script: si, End: time.Now(), Skipped: true})
				}
				continue
			}
			if !c.sleepSchedule(time.Until(c.sched)) {
				return
			}
			begin = c.sched
			lagUS = time.Since(c.sched).Microseconds()
		} else {
			begin = time.Now()
		}
		if t := int(c.e.target.Load()); t != c.cur {
			c.use(t)
		}
		if c.conn == nil && !c.ensureConn() {
			return
		}
		o := c.transaction(si, begin)
		end := time.Now()
		if cfg.Connect {
			c.closeConn()
		}
		if at := c.e.endAt.Load(); at != 0 && end.UnixNano() > at {
			return // finished after the measured window: not counted
		}
		if o.abort {
			// pgbench counts an aborted client's last transaction neither
			// as done nor as failed; its commands' times still count.
			c.aborted = true
			c.recordCommands(nil)
			return
		}
		c.record(o, begin, end, lagUS)
		c.done++
		if on := cfg.OnTxn; on != nil {
			t := Txn{Client: c.id, Number: c.done, Script: si, End: end, Tries: o.tries, Failed: o.failed, Kind: o.kind}
			if !o.failed {
				t.Latency, t.Lag = end.Sub(begin), time.Duration(lagUS)*time.Microsecond
			}
			on(t)
		}
		if c.e.io == IORaw && end.Sub(yielded) >= rawYield {
			yielded = end
			yields++
			yieldRaw(yields, cfg.Companions > 0)
			if colocate {
				c.follow() // the yield may have moved the client to another thread
			}
		}
	}
}

type outcome struct {
	script int
	failed bool
	kind   metrics.FailKind
	tries  int
	abort  bool
}

func (c *client) record(o outcome, begin, end time.Time, lagUS int64) {
	cfg := c.e.cfg
	iv := c.rec.Lock()
	lat := end.Sub(begin)
	if o.failed {
		iv.Failed[o.kind]++
	} else {
		iv.RecordTxn(lat.Microseconds(), lagUS, cfg.LatencyLimit > 0 && lat > cfg.LatencyLimit)
	}
	iv.RecordScript(o.script, lat.Microseconds(), o.failed, o.kind)
	if o.tries > 1 {
		iv.Retried++
		iv.Retries += int64(o.tries - 1)
		iv.Scripts[o.script].Retried++
		iv.Scripts[o.script].Retries += int64(o.tries - 1)
	}
	if c.connUS > 0 {
		iv.Conns++
		iv.ConnSumUS += float64(c.connUS)
		c.connUS = 0
	}
	c.recordCommands(iv)
	c.rec.Unlock()
}

// recordCommands adds this transaction's per-command figures (-r) to iv,
// and clears them. With iv nil (an aborted transaction, whose commands
// that ran still count, as in pgbench) it takes the recorder's lock.
func (c *client) recordCommands(iv *metrics.Interval) {
	if c.cmd == nil {
		return
	}
	if iv == nil {
		iv = c.rec.Lock()
		defer c.rec.Unlock()
	}
	for i := range c.cmd {
		if c.cmd[i] != (metrics.CommandStat{}) {
			d := &iv.Commands[i]
			d.Count += c.cmd[i].Count
			d.SumUS += c.cmd[i].SumUS
			d.Failed += c.cmd[i].Failed
			d.Retries += c.cmd[i].Retries
			c.cmd[i] = metrics.CommandStat{}
		}
	}
}

// transaction runs script si to the end, retrying serialization failures
// and deadlocks up to --max-tries with the same random values (as pgbench).
// sched is its scheduled start: the latency limit counts from it.
func (c *client) transaction(si int, sched time.Time) outcome {
	cfg := c.e.cfg
	c.sc.Begin()
	for try := 1; ; try++ {
		err := c.runScript(si)
		if err == nil {
			return outcome{script: si, tries: try}
		}
		kind := classify(err, c.conn)
		f := Failure{Client: c.id, Script: si, Command: c.failCmd, Query: c.failQuery, Err: err, Kind: kind, Tries: try}
		f.Message = c.e.placedMessage(f)
		c.e.noteMessage(kind, f.Message)
		switch kind {
		case metrics.FailConnection:
			c.lostAt(time.Now())
			c.closeConn()
			c.report(f)
			c.countFailure(si)
			return outcome{script: si, failed: true, kind: kind, tries: try}
		case metrics.FailSerialization, metrics.FailDeadlock:
			if !c.rollback() {
				c.lostAt(time.Now())
				f.Kind = metrics.FailConnection
				c.report(f)
				return outcome{script: si, failed: true, kind: metrics.FailConnection, tries: try}
			}
			f.Elapsed = time.Since(sched)
			canRetry := cfg.MaxTries == 0 || try < cfg.MaxTries
			if cfg.LatencyLimit > 0 && f.Elapsed > cfg.LatencyLimit {
				canRetry = false
			}
			if canRetry && !c.e.stop.Load() {
				f.Retry = true
				c.report(f)
				c.sc.Retry()
				c.countRetry(si)
				continue
			}
			c.report(f)
			c.countFailure(si)
			return outcome{script: si, failed: true, kind: kind, tries: try}
		default:
			if !c.rollback() {
				c.lostAt(time.Now())
				f.Kind = metrics.FailConnection
				c.report(f)
				return outcome{script: si, failed: true, kind: metrics.FailConnection, tries: try}
			}
			if cfg.ContinueOnError {
				c.report(f)
				c.countFailure(si)
				return outcome{script: si, failed: true, kind: kind, tries: try}
			}
			f.Abort = true
			c.report(f)
			return outcome{script: si, failed: true, kind: kind, tries: try, abort: true}
		}
	}
}

// countRetry and countFailure charge a retried or failed try (-r) to the
// command that failed, as pgbench does.
func (c *client) countRetry(si int) {
	if c.cmd != nil {
		c.cmd[c.offsets[si]+c.failCmd].Retries++
	}
}

func (c *client) countFailure(si int) {
	if c.cmd != nil {
		c.cmd[c.offsets[si]+c.failCmd].Failed++
	}
}

// rollback leaves a failed transaction block, if the connection is in one.
// It returns false if the connection is gone.
func (c *client) rollback() bool {
	if c.conn == nil || c.conn.IsClosed() {
		c.closeConn()
		return false
	}
	c.pipe = nil
	if st := c.conn.TxStatus(); st == 'T' || st == 'E' {
		if err := c.conn.Exec(context.Background(), "ROLLBACK").Close(); err != nil {
			c.closeConn()
			return false
		}
	}
	return true
}

// classify says which kind of failure err is.
func classify(err error, conn *pgconn.PgConn) metrics.FailKind {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "40001":
			return metrics.FailSerialization
		case pgErr.Code == "40P01":
			return metrics.FailDeadlock
		case pgErr.Severity == "FATAL" || pgErr.Severity == "PANIC",
			len(pgErr.Code) >= 2 && (pgErr.Code[:2] == "08" || pgErr.Code[:3] == "57P"):
			return metrics.FailConnection
		}
		return metrics.FailOther
	}
	var rt *script.RuntimeError
	if errors.As(err, &rt) {
		return metrics.FailOther
	}
	if conn == nil || conn.IsClosed() {
		return metrics.FailConnection
	}
	return metrics.FailOther
}
