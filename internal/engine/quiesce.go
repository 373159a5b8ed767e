package engine

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/pgscale/pgscale/internal/metrics"
)

// errWarmUpStuck says a client did not finish its warm-up transaction
// within the grace period.
var errWarmUpStuck = errors.New("a client did not finish its warm-up transaction in time")

// warmUp begins a step whose window's edges are quiesced (Config.Quiesce):
// the warm-up runs as a phase of its own — every client runs transactions
// for Warmup, finishes the one it is in and stops, its connection kept —
// nothing of it is counted, and Quiesce(WindowStart) is called with every
// client idle. With WarmupTransactions the warm-up is that many
// transactions per client instead. Afterwards e.cfg is the window alone: the step without a
// warm-up.
func (e *engine) warmUp() error {
	cfg := *e.cfg
	if cfg.Warmup > 0 || cfg.WarmupTransactions > 0 {
		warm := cfg
		warm.Transactions, warm.Duration, warm.Warmup = 0, cfg.Warmup, 0
		if cfg.WarmupTransactions > 0 {
			warm.Transactions, warm.Duration = cfg.WarmupTransactions, 0
		}
		e.cfg = &warm
		start := time.Now()
		if warm.Duration > 0 {
			e.endAt.Store(start.Add(warm.Duration).UnixNano())
		}
		done := make(chan struct{})
		var running sync.WaitGroup
		for _, c := range e.clients {
			running.Add(1)
			go func(c *client) {
				defer running.Done()
				c.run(start)
			}(c)
		}
		go func() { running.Wait(); close(done) }()
		var timeout <-chan time.Time
		if warm.Duration > 0 {
			t := time.NewTimer(warm.Duration)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-timeout:
		case <-done:
		case <-e.parent.Done():
		}
		e.stop.Store(true)
		close(e.stopCh)
		e.waitClients(done)
		if err := e.parent.Err(); err != nil {
			return err
		}
		if e.ctx.Err() != nil {
			return errWarmUpStuck
		}
		// What the warm-up recorded is dropped: the window starts empty.
		ncmds, nscripts := 0, len(cfg.Program.Scripts())
		for _, s := range cfg.Program.Scripts() {
			ncmds += len(s.Commands)
		}
		for _, r := range e.recs {
			r.Swap(metrics.NewInterval(ncmds, nscripts))
		}
		e.stop.Store(false)
		e.stopCh = make(chan struct{})
		e.endAt.Store(0)
		for _, c := range e.clients {
			c.done = 0
		}
	}
	cfg.Warmup = 0
	e.cfg = &cfg
	if cfg.Quiesce != nil {
		if err := cfg.Quiesce(WindowStart); err != nil {
			return fmt.Errorf("at the start of the measured window: %w", err)
		}
	}
	return nil
}

// stopped ends a step that stopped before its window began: the clients
// disconnect, and res says why.
func (e *engine) stopped(res *Result, err error) (*Result, error) {
	for _, c := range e.clients {
		c.closeAll()
	}
	res.Errors = e.errorList()
	if perr := e.parent.Err(); perr != nil {
		res.Incomplete = "interrupted"
		return res, perr
	}
	res.Incomplete = err.Error()
	return res, err
}
