package engine

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/script"
)

var errInterrupted = errors.New("interrupted")

// runScript runs script si once.
func (c *client) runScript(si int) error {
	s := c.scripts[si]
	cmds := s.Commands
	off := c.offsets[si]
	var t0 time.Time
	c.failQuery = 0
	for pc := 0; pc < len(cmds); {
		if c.cmd != nil {
			t0 = time.Now()
		}
		cur := pc
		cmd := cmds[pc]
		var err error
		switch cmd.Kind {
		case script.KindSQL:
			err = c.execSQL(si, pc, cmd)
			pc++
		case script.KindStartPipeline:
			err = c.startPipeline(si, pc)
			pc++
		case script.KindSyncPipeline:
			err = c.syncPipeline()
			pc++
		case script.KindEndPipeline:
			err = c.endPipeline()
			pc++
		default:
			var sleep time.Duration
			pc, sleep, err = c.sc.Meta(s, pc)
			if err == nil && sleep > 0 && !c.sleepInTxn(sleep) {
				err = errInterrupted
			}
		}
		if c.cmd != nil && err == nil {
			st := &c.cmd[off+cur]
			st.Count++
			st.SumUS += float64(time.Since(t0).Nanoseconds()) / 1000
		}
		if err != nil {
			c.failCmd = cur
			return placed(s, cmd, err)
		}
	}
	c.failCmd, c.failQuery = len(cmds)-1, 0
	if c.pipe != nil {
		return placed(s, cmds[len(cmds)-1], errPipelineOpen)
	}
	if st := c.conn.TxStatus(); st == 'T' || st == 'E' {
		return placed(s, cmds[len(cmds)-1], errOpenTransaction)
	}
	return nil
}

var errOpenTransaction = errors.New("end of script reached without completing the last transaction")

// ScriptError is an error the engine found in a script as it ran, with its
// place: a pipeline command misused, or the end of the script reached
// inside a transaction or a pipeline.
type ScriptError struct {
	Script string
	Line   int
	// Verb names the misused command as pgbench does ("startpipeline",
	// "gset"...); empty when the end of the script was reached.
	Verb string
	Err  error
}

func (e *ScriptError) Error() string { return fmt.Sprintf("%s:%d: %v", e.Script, e.Line, e.Err) }

// Unwrap returns the error without its place.
func (e *ScriptError) Unwrap() error { return e.Err }

// placed gives an engine-side error the script line it happened at; server
// and interpreter errors already say what they are.
func placed(s *script.Script, cmd *script.Command, err error) error {
	verb := cmd.Kind.String()
	switch err {
	case errGsetInPipeline:
		verb = "gset"
	case errAsetInPipeline:
		verb = "aset"
	case errPipelineOpen, errOpenTransaction:
		verb = ""
	case errNotInPipeline, errAlreadyInPipeline:
	default:
		return err
	}
	return &ScriptError{Script: s.Name, Line: cmd.Line, Verb: verb, Err: err}
}

// unsafeString views b as a string without copying; pgconn copies the query
// into its send buffer before returning, and b is not changed until then.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

func (c *client) execSQL(si, pc int, cmd *script.Command) error {
	if c.pipe != nil {
		return c.pipeSQL(si, pc, cmd)
	}
	if err := c.sendSQL(si, pc, cmd.SQL); err != nil {
		return err
	}
	return c.receiveSQL(si, cmd)
}

// statement returns the prepared statement for command pc of script si,
// preparing it on first use on this connection (as pgbench 15 does).
func (c *client) statement(si, pc int, q *script.SQL) (*pgconn.StatementDescription, error) {
	if sd := c.prepared[si][pc]; sd != nil {
		return sd, nil
	}
	sd, err := c.conn.Prepare(context.Background(), c.e.stmtName(si, pc), q.Prepared, nil)
	if err != nil {
		return nil, err
	}
	c.prepared[si][pc] = sd
	return sd, nil
}

// readResult reads one statement's result, storing rows for \gset/\aset.
func (c *client) readResult(rr *pgconn.ResultReader, si int, cmd *script.Command, last bool) error {
	q := cmd.SQL
	rows := 0
	for rr.NextRow() {
		if q.Store == script.StoreAset || (q.Store == script.StoreGset && last && rows == 0) {
			if err := c.store(q, rr); err != nil {
				rr.Close()
				return err
			}
		}
		rows++
	}
	if _, err := rr.Close(); err != nil {
		return err
	}
	if q.Store == script.StoreGset && last && rows != 1 {
		return script.RowCountError(c.scripts[si], cmd, rows)
	}
	return nil
}

func (c *client) store(q *script.SQL, rr *pgconn.ResultReader) error {
	fds := rr.FieldDescriptions()
	c.names = c.names[:0]
	for i := range fds {
		c.names = append(c.names, fds[i].Name)
	}
	return c.sc.Store(q, c.names, rr.Values())
}
