package probe

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"golang.org/x/sys/unix"
)

// sqlConn is one probe's own connection, tagged with application_name so
// that the probes can leave each other and themselves out. It reconnects
// when the server went away between steps.
type sqlConn struct {
	cfg  *pgconn.Config
	conn *pgconn.PgConn
	pid  atomic.Int64 // the backend's pid, read by other probes' goroutines
	n    atomic.Int64 // queries since the last call to queries
}

func newSQLConn(ctx context.Context, base *pgconn.Config) (*sqlConn, error) {
	cfg := base.Copy()
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	cfg.RuntimeParams["application_name"] = probeApplicationName
	c := &sqlConn{cfg: cfg}
	if err := c.ensure(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// connectTries are the timeouts of a probe's attempts to connect: a
// connection that timed out is tried again, given longer, while the
// caller's context lasts. A server under Valgrind on a loaded machine
// forks and initialises each backend 20 to 50 times slower, and one
// attempt of 10 s lost a round's count there ("connect: ... context
// deadline exceeded").
var connectTries = []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second}

// ensure connects when there is no live connection.
func (c *sqlConn) ensure(ctx context.Context) error {
	if c.conn != nil && !c.conn.IsClosed() {
		return nil
	}
	var err error
	for _, timeout := range connectTries {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		var conn *pgconn.PgConn
		conn, err = pgconn.ConnectConfig(cctx, c.cfg)
		cancel()
		if err == nil {
			c.conn = conn
			c.pid.Store(int64(conn.PID()))
			return nil
		}
		if ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
			break
		}
	}
	return fmt.Errorf("connect: %w", err)
}

// query runs sql with text parameters and returns the rows as text. A
// connection the server dropped (it restarted) is made again and the
// query tried once more.
func (c *sqlConn) query(ctx context.Context, sql string, args ...string) ([][][]byte, error) {
	params := make([][]byte, len(args))
	for i, a := range args {
		params[i] = []byte(a)
	}
	for try := 0; ; try++ {
		if err := c.ensure(ctx); err != nil {
			return nil, err
		}
		c.n.Add(1)
		res := c.conn.ExecParams(ctx, probeMarker+sql, params, nil, nil, nil).Read()
		if res.Err == nil {
			return res.Rows, nil
		}
		if try > 0 || !c.lost() {
			return nil, res.Err
		}
	}
}

// lost says the connection is gone after an error: the server closed it
// (a restart, an administrator's command); ensure makes a new one.
func (c *sqlConn) lost() bool {
	if c.conn == nil || c.conn.IsClosed() {
		return true
	}
	return false
}

// value runs a one-value query.
func (c *sqlConn) value(ctx context.Context, sql string, args ...string) (string, error) {
	rows, err := c.query(ctx, sql, args...)
	if err != nil {
		return "", err
	}
	if len(rows) == 0 || len(rows[0]) == 0 {
		return "", nil
	}
	return string(rows[0][0]), nil
}

func (c *sqlConn) queries() int64 { return c.n.Swap(0) }

func (c *sqlConn) backends() []int {
	if pid := c.pid.Load(); pid != 0 {
		return []int{int(pid)}
	}
	return nil
}

func (c *sqlConn) close() {
	if c != nil && c.conn != nil {
		c.pid.Store(0)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c.conn.Close(ctx)
		cancel()
	}
}

// hasExtension makes sure extension ext is usable: created already, or
// created now when allowed and its library is preloaded (when it needs to
// be).
func (c *sqlConn) hasExtension(ctx context.Context, ext string, mayCreate, needsPreload bool) error {
	v, err := c.value(ctx, "SELECT count(*) FROM pg_extension WHERE extname = $1", ext)
	if err != nil {
		return err
	}
	if v != "0" {
		return nil
	}
	if needsPreload {
		pre, err := c.value(ctx, "SELECT current_setting('shared_preload_libraries')")
		if err != nil {
			return err
		}
		if !preloaded(pre, ext) {
			// Not installed at all is the likelier cause on a server
			// built from source, which has only what was built for it.
			if n, err := c.value(ctx, "SELECT count(*) FROM pg_available_extensions WHERE name = $1", ext); err == nil && n == "0" {
				return fmt.Errorf("%s is not installed for this server (a server built from source has it when built with it: src:...,ext=PATH)", ext)
			}
			return fmt.Errorf("%s is not in shared_preload_libraries", ext)
		}
	}
	if !mayCreate {
		return fmt.Errorf("extension %s is not created in this database (CREATE EXTENSION %s to use it)", ext, ext)
	}
	if _, err := c.query(ctx, "CREATE EXTENSION IF NOT EXISTS "+ext); err != nil {
		return fmt.Errorf("create extension %s: %w", ext, err)
	}
	return nil
}

func preloaded(list, lib string) bool {
	for _, f := range strings.Split(list, ",") {
		if strings.Trim(strings.TrimSpace(f), `"`) == lib {
			return true
		}
	}
	return false
}

func atoi64(b []byte) int64 {
	n, _ := strconv.ParseInt(string(b), 10, 64)
	return n
}

func atof(b []byte) float64 {
	f, _ := strconv.ParseFloat(string(b), 64)
	return f
}

// threadCPU is the CPU time of the calling OS thread.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// timed runs f on a locked OS thread and adds the thread's CPU time to c.
func timed(c *cost, f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0 := threadCPU()
	err := f()
	c.add(threadCPU() - t0)
	return err
}
