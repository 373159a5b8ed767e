package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/connerr"
	"github.com/pgscale/pgscale/internal/metrics"
)

// ConnectProgressEvery is how often Config.ConnectProgress is called while
// the clients connect.
const ConnectProgressEvery = 250 * time.Millisecond

// defaultConnectTimeout bounds a connection, retries included, when the
// connection config sets none (libpq waits for ever; a benchmark should not).
const defaultConnectTimeout = 30 * time.Second

// connectAll opens every client's first connections before the clock
// starts: at most ConnectConcurrency at once (pgbench's -j threads each
// connect their clients one after another), each retrying refusals that
// may pass (connectRetrying). The first client that cannot connect stops
// the phase, and the connections opened are closed. It returns the phase's
// wall time, pgbench's "initial connection time".
func (e *engine) connectAll() (time.Duration, error) {
	cfg := e.cfg
	n := len(e.clients)
	workers := min(n, cfg.ConnectConcurrency)
	if workers <= 0 {
		workers = min(n, DefaultConnectConcurrency)
	}
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	t0 := time.Now()
	var (
		next, connected atomic.Int64
		firstErr        error
		errOnce         sync.Once
		wg              sync.WaitGroup
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := e.clients[i].connectFirst(ctx); err != nil {
					errOnce.Do(func() {
						if ctx.Err() == nil {
							e.noteError(metrics.FailConnection, err)
						}
						firstErr = fmt.Errorf("client %d: %w", e.clients[i].id, err)
						cancel()
					})
					return
				}
				connected.Add(1)
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	if cfg.ConnectProgress != nil {
		tick := time.NewTicker(ConnectProgressEvery)
	wait:
		for {
			select {
			case <-done:
				break wait
			case <-tick.C:
				cfg.ConnectProgress(int(connected.Load()), n)
			}
		}
		tick.Stop()
		cfg.ConnectProgress(int(connected.Load()), n)
	}
	<-done
	elapsed := time.Since(t0)
	if firstErr == nil && e.parent.Err() != nil {
		firstErr = e.parent.Err()
	}
	if firstErr != nil {
		for _, c := range e.clients {
			c.closeAll()
		}
		return elapsed, firstErr
	}
	return elapsed, nil
}

// connectRetrying opens a connection to cfg, retrying with back-off the
// refusals that may pass (transientConnectError) until cfg's connect timeout
// has passed since the first try. reached says whether another connection
// to the same target has succeeded in this step: then a refused connection
// is a full listen queue, not a server that is not there. The error is
// classified (classifyConnect).
func connectRetrying(ctx context.Context, cfg *pgconn.Config, reached *atomic.Bool) (*pgconn.PgConn, error) {
	timeout := defaultConnectTimeout
	if cfg.ConnectTimeout > 0 {
		timeout = cfg.ConnectTimeout
	}
	t0 := time.Now()
	deadline := t0.Add(timeout)
	backoff := 5 * time.Millisecond
	for {
		actx, cancel := context.WithDeadline(ctx, deadline)
		conn, err := pgconn.ConnectConfig(actx, cfg)
		cancel()
		if err == nil {
			reached.Store(true)
			return conn, nil
		}
		if ctx.Err() != nil || !transientConnectError(err, reached.Load()) {
			return nil, classifyConnect(cfg, err)
		}
		// Jitter spreads the retries of clients refused together; the last
		// waits are shortened so that tries go on until the deadline.
		left := time.Until(deadline)
		if left < 10*time.Millisecond {
			return nil, fmt.Errorf("%w; still refused after %v of retries", classifyConnect(cfg, err), time.Since(t0).Round(time.Millisecond))
		}
		wait := min(backoff/2+rand.N(backoff), left/2)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, classifyConnect(cfg, err)
		}
		backoff = min(backoff*2, time.Second)
	}
}

// transientConnectError says whether a failed connection attempt may
// succeed if tried again soon: the server's or pooler's listen queue was
// full (a unix socket's connect fails with EAGAIN; a TCP one, when the
// kernel aborts on overflow, is refused or reset), or it had no room for
// one more client just then (PostgreSQL's 53300 "too many clients",
// pgbouncer's "no more connections allowed" while it is still closing
// another step's clients, 57P03 while the server starts). A refusal or
// reset counts only when another connection to the same target has
// succeeded (other): otherwise nothing listens there, and retrying would
// only delay the error.
func transientConnectError(err error, other bool) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "53300", pgErr.Code == "57P03":
			return true
		case pgErr.Code == "08P01" && strings.Contains(pgErr.Message, "no more connections allowed"):
			return true
		}
		return false
	}
	switch {
	case errors.Is(err, syscall.EAGAIN):
		return true
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET):
		return other
	}
	return false
}

// classifyConnect gives a connection error its reason and fix. The
// listen-queue case is named here: pgconn reports a unix socket's EAGAIN
// as a timeout, which ClassifyConnectError would call "timed out".
func classifyConnect(cfg *pgconn.Config, err error) error {
	if errors.Is(err, syscall.EAGAIN) {
		return &connerr.Error{Target: connerr.Describe(cfg), Err: err,
			Reason: "its listen queue stayed full", Fix: "connect fewer clients at once, or raise the listen backlog"}
	}
	return connerr.Classify(cfg, err)
}
