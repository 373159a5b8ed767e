package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/connerr"
	"github.com/pgscale/pgscale/internal/metrics"
)

// connectFirst opens the client's connections (one per target) before the
// clock starts, retrying refusals that may pass.
func (c *client) connectFirst(ctx context.Context) error {
	t0 := time.Now()
	for t := range c.conns {
		c.use(t)
		if err := c.connect(ctx, true); err != nil {
			return err
		}
		if c.e.cfg.Connect {
			c.closeConn() // with -C every transaction opens its own
		}
	}
	c.firstConnect = time.Since(t0) / time.Duration(len(c.conns))
	c.use(0)
	return nil
}

// use makes target t's connection the current one.
func (c *client) use(t int) {
	c.cur = t
	c.conn = c.conns[t]
	c.prepared = c.preps[t]
}

// connect opens the current target's connection. With retry, refusals
// that may pass are retried within the connect timeout (the first
// connection); otherwise the caller's own loop retries (ensureConn).
func (c *client) connect(ctx context.Context, retry bool) error {
	cfg := c.e.connCfgs[c.cur]
	var conn *pgconn.PgConn
	var err error
	if retry {
		conn, err = connectRetrying(ctx, cfg, &c.e.reached[c.cur])
	} else {
		timeout := defaultConnectTimeout
		if cfg.ConnectTimeout > 0 {
			timeout = cfg.ConnectTimeout
		}
		cctx, cancel := context.WithTimeout(ctx, timeout)
		conn, err = pgconn.ConnectConfig(cctx, cfg)
		cancel()
		err = classifyConnect(cfg, err)
	}
	if err != nil {
		return err
	}
	c.conn = conn
	c.conns[c.cur] = conn
	c.lives[c.cur].Store(conn)
	for _, p := range c.prepared {
		clear(p)
	}
	return nil
}

// closeConn closes the current target's connection.
func (c *client) closeConn() {
	c.pipe = nil
	if c.conn == nil {
		return
	}
	c.lives[c.cur].Store(nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	c.conn.Close(ctx)
	cancel()
	c.conn = nil
	c.conns[c.cur] = nil
}

// closeAll closes every target's connection.
func (c *client) closeAll() {
	for t := range c.conns {
		c.use(t)
		c.closeConn()
	}
}

// interrupt breaks the client's connections from another goroutine, waking
// a client blocked in a read.
func (c *client) interrupt() {
	for t := range c.lives {
		if conn := c.lives[t].Load(); conn != nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = conn.CancelRequest(ctx)
			cancel()
			_ = conn.Conn().Close()
		}
	}
}

// ensureConn reconnects with back-off until it succeeds, the step stops, or
// reconnecting has failed for longer than ReconnectTimeout.
func (c *client) ensureConn() bool {
	backoff := 10 * time.Millisecond
	var firstFail time.Time
	for {
		t0 := time.Now()
		err := c.connect(c.e.ctx, false)
		if err == nil {
			c.connUS += time.Since(t0).Microseconds()
			c.reconnected(time.Now())
			return true
		}
		var ce *connerr.Error
		if errors.As(err, &ce) && ce.Remedy == connerr.FixAddress && c.e.reached[c.cur].Load() {
			// The address is right: it took connections in this step.
			ce.Remedy, ce.Fix = connerr.NoRemedy, "connections to it succeeded earlier in the step: it has stopped or is restarting"
		}
		c.e.noteError(metrics.FailConnection, err)
		if errors.As(err, &ce) && ce.Usage {
			c.abort(err)
			return false
		}
		if firstFail.IsZero() {
			firstFail = t0
		} else if time.Since(firstFail) > c.e.cfg.ReconnectTimeout {
			c.abort(fmt.Errorf("gave up reconnecting after %v: %w", c.e.cfg.ReconnectTimeout, err))
			return false
		}
		if !c.sleepSchedule(backoff) {
			return false
		}
		backoff = min(backoff*2, time.Second)
	}
}
