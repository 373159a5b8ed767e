package disturb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"

	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/script"
	"github.com/pgscale/pgscale/internal/secret"
	"github.com/pgscale/pgscale/internal/target"
)

// session is one connection running a disturbance's script in a loop. It
// shares nothing with the workload's clients: its transactions are counted
// here and only here.
type session struct {
	cfg  *pgconn.Config
	s    *script.Script
	sc   *script.Interp
	hold bool
	conn *pgconn.PgConn

	buf   []byte
	names []string
	timer *time.Timer

	iterations, errors, cutOff int64
	errs                       map[string]*result.Error
}

// errCutOff says the window ended in the middle of an iteration.
var errCutOff = errors.New("cut off by the end of the window")

// maxErrorMessages bounds the distinct error messages kept per session.
const maxErrorMessages = 20

func newSession(cfg *pgconn.Config, s *script.Script, sc *script.Interp, hold bool) *session {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &session{cfg: cfg, s: s, sc: sc, hold: hold, timer: t, errs: map[string]*result.Error{}}
}

// sessionConfig returns a copy of cfg for disturbance sessions: named so
// that server-side views tell them from the workload, and cancelling a
// query in flight with a cancel request rather than by breaking the
// connection, so that a window's end stops the server's work too.
func sessionConfig(cfg *pgconn.Config, name string) *pgconn.Config {
	c := cfg.Copy()
	if c.RuntimeParams == nil {
		c.RuntimeParams = map[string]string{}
	}
	c.RuntimeParams["application_name"] = "pgscale disturbance " + name
	c.BuildContextWatcherHandler = func(pc *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: pc, DeadlineDelay: 2 * time.Second}
	}
	return c
}

func (s *session) connect(ctx context.Context) error {
	timeout := 30 * time.Second
	if s.cfg.ConnectTimeout > 0 {
		timeout = s.cfg.ConnectTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := pgconn.ConnectConfig(cctx, s.cfg)
	if err != nil {
		return target.ClassifyConnectError(s.cfg, err)
	}
	s.conn = conn
	return nil
}

func (s *session) close() {
	s.timer.Stop()
	if s.conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	s.conn.Close(ctx)
	cancel()
	s.conn = nil
}

// loop runs the script until ctx ends: in a loop, or once and then held
// open with hold. Failed iterations are counted and the loop goes on, after
// a back-off that grows while failures repeat, reconnecting when the
// connection was lost.
func (s *session) loop(ctx context.Context) {
	backoff := time.Duration(0)
	for ctx.Err() == nil {
		if s.conn == nil {
			if err := s.connect(ctx); err != nil {
				if ctx.Err() != nil {
					return
				}
				s.fail(err)
				backoff = s.pause(ctx, backoff)
				continue
			}
		}
		err := s.iterate(ctx)
		switch {
		case err == nil:
			s.iterations++
			backoff = 0
			if s.hold {
				<-ctx.Done()
				return // close() rolls the open transaction back
			}
			s.rollback(ctx)
		case ctx.Err() != nil || errors.Is(err, errCutOff):
			s.cutOff++
			return
		default:
			s.fail(err)
			s.rollback(ctx)
			backoff = s.pause(ctx, backoff)
		}
	}
}

// pause sleeps after a failure: 10 ms, doubling up to 1 s while failures
// repeat, so a script that always fails does not spin.
func (s *session) pause(ctx context.Context, prev time.Duration) time.Duration {
	d := min(max(2*prev, 10*time.Millisecond), time.Second)
	s.sleep(ctx, d)
	return d
}

func (s *session) sleep(ctx context.Context, d time.Duration) bool {
	s.timer.Reset(d)
	select {
	case <-s.timer.C:
		return true
	case <-ctx.Done():
		s.timer.Stop()
		return false
	}
}

func (s *session) fail(err error) {
	s.errors++
	msg := secret.Redact(err.Error())
	if e, ok := s.errs[msg]; ok {
		e.Count++
		return
	}
	if len(s.errs) < maxErrorMessages {
		kind := "other"
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) {
			kind = "sql " + pgErr.Code
		} else if s.conn == nil || s.conn.IsClosed() {
			kind = "connection"
		}
		s.errs[msg] = &result.Error{Kind: kind, Message: msg, Count: 1}
	}
}

// rollback leaves a transaction the script left open or failed in, and
// drops a connection that is gone.
func (s *session) rollback(ctx context.Context) {
	if s.conn == nil {
		return
	}
	if s.conn.IsClosed() {
		s.close()
		return
	}
	if st := s.conn.TxStatus(); st == 'T' || st == 'E' {
		if err := s.conn.Exec(ctx, "ROLLBACK").Close(); err != nil {
			s.close()
		}
	}
}

// iterate runs the script once, with the simple query protocol (variables
// substituted into the text, as pgbench -M simple).
func (s *session) iterate(ctx context.Context) error {
	cmds := s.s.Commands
	s.sc.Begin()
	for pc := 0; pc < len(cmds); {
		cmd := cmds[pc]
		if cmd.Kind == script.KindSQL {
			if err := s.execSQL(ctx, cmd); err != nil {
				return err
			}
			pc++
			continue
		}
		next, d, err := s.sc.Meta(s.s, pc)
		if err != nil {
			return err
		}
		if d > 0 && !s.sleep(ctx, d) {
			if next >= len(cmds) {
				return nil // cut short in its final \sleep: the work was done
			}
			return errCutOff
		}
		pc = next
	}
	return nil
}

func (s *session) execSQL(ctx context.Context, cmd *script.Command) error {
	q := cmd.SQL
	buf, err := s.sc.AppendSimple(s.buf[:0], q)
	s.buf = buf
	if err != nil {
		return err
	}
	mrr := s.conn.Exec(ctx, string(buf))
	n := 0
	var firstErr error
	for mrr.NextResult() {
		n++
		rr := mrr.ResultReader()
		last := q.Statements <= n
		rows := 0
		for rr.NextRow() {
			if firstErr == nil && (q.Store == script.StoreAset || q.Store == script.StoreGset && last && rows == 0) {
				fds := rr.FieldDescriptions()
				s.names = s.names[:0]
				for i := range fds {
					s.names = append(s.names, fds[i].Name)
				}
				firstErr = s.sc.Store(q, s.names, rr.Values())
			}
			rows++
		}
		if _, err := rr.Close(); err != nil && firstErr == nil {
			firstErr = err
		}
		if firstErr == nil && q.Store == script.StoreGset && last && rows != 1 {
			firstErr = script.RowCountError(s.s, cmd, rows)
		}
	}
	if err := mrr.Close(); err != nil {
		return err
	}
	return firstErr
}

// errorList merges the sessions' distinct errors, most frequent first.
func errorList(ss []*session) []result.Error {
	m := map[string]*result.Error{}
	for _, s := range ss {
		for msg, e := range s.errs {
			if t, ok := m[msg]; ok {
				t.Count += e.Count
			} else {
				c := *e
				m[msg] = &c
			}
		}
	}
	out := make([]result.Error, 0, len(m))
	for _, e := range m {
		out = append(out, *e)
	}
	result.SortErrors(out)
	return out
}

// CheckScript rejects what a disturbance session cannot run.
func CheckScript(s *script.Script) error {
	for _, c := range s.Commands {
		switch c.Kind {
		case script.KindStartPipeline, script.KindSyncPipeline, script.KindEndPipeline:
			return fmt.Errorf("%s:%d: \\%s: a disturbance script runs with the simple query protocol, without pipelines", s.Name, c.Line, c.Kind)
		}
	}
	if len(s.Commands) == 0 {
		return fmt.Errorf("%s: the script has no command", s.Name)
	}
	return nil
}
