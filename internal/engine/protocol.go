package engine

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/pgscale/pgscale/internal/script"
)

// The per-transaction protocol exchange. pgconn opens, authenticates,
// prepares and closes connections; each statement of a script is sent
// through pgconn's own Frontend and its answer read with ReceiveMessage,
// the low-level path pgconn offers for this. Its query helpers cost a
// timer reset and stop per query (its guard against write/read deadlock),
// a copy of the field descriptions and a string per command tag; this path
// allocates nothing per statement. Pipelines still use pgconn.Pipeline.

// exchange holds a client's reusable protocol messages and result scratch.
type exchange struct {
	bind     pgproto3.Bind
	parse    pgproto3.Parse
	query    pgproto3.Query
	describe pgproto3.Describe
	execute  pgproto3.Execute
	sync     pgproto3.Sync
	copyFail pgproto3.CopyFail

	names    []string // the current result's column names
	lastRow  [][]byte // \gset on a compound statement: the newest row of the newest result
	lastBuf  []byte
	lastName []string
}

// sendSQL queues statement pc of script si the way the protocol mode says
// and flushes it.
func (c *client) sendSQL(si, pc int, q *script.SQL) error {
	x := &c.x
	fe := c.conn.Frontend()
	proto := c.e.cfg.Protocol
	if q.Statements > 1 || c.e.cfg.SimpleCommands != nil && c.e.cfg.SimpleCommands[si][pc] {
		// The extended protocol takes one statement: a compound command
		// (\;) goes as one simple query, variables substituted into its
		// text, as pgbench's default -M simple sends it; so does a
		// statement the server would not prepare (Config.SimpleCommands).
		proto = Simple
	}
	switch proto {
	case Simple:
		buf, err := c.sc.AppendSimple(c.sqlBuf[:0], q)
		c.sqlBuf = buf
		if err != nil {
			return err
		}
		x.query.String = unsafeString(buf)
		fe.SendQuery(&x.query)
	case Extended:
		params, err := c.sc.Params(q, c.params)
		c.params = params
		if err != nil {
			return err
		}
		x.parse.Query = q.Prepared
		fe.SendParse(&x.parse)
		x.bind.PreparedStatement, x.bind.Parameters = "", params
		fe.SendBind(&x.bind)
		x.describe.ObjectType = 'P'
		fe.SendDescribe(&x.describe)
		fe.SendExecute(&x.execute)
		fe.SendSync(&x.sync)
	default:
		sd, err := c.statement(si, pc, q)
		if err != nil {
			return err
		}
		params, err := c.sc.Params(q, c.params)
		c.params = params
		if err != nil {
			return err
		}
		x.bind.PreparedStatement, x.bind.Parameters = sd.Name, params
		fe.SendBind(&x.bind)
		fe.SendExecute(&x.execute)
		fe.SendSync(&x.sync)
		x.names = x.names[:0]
		for i := range sd.Fields {
			x.names = append(x.names, sd.Fields[i].Name)
		}
	}
	if err := fe.Flush(); err != nil {
		c.closeConn()
		return fmt.Errorf("send: %w", err)
	}
	return nil
}

// receiveSQL reads the answer to the statement just sent, up to and
// including ReadyForQuery, storing rows for \gset and \aset as pgbench does:
// \aset stores every row of every result; \gset needs exactly one row in
// the last result (a statement without rows counts as none).
func (c *client) receiveSQL(si int, cmd *script.Command) error {
	x := &c.x
	q := cmd.SQL
	var firstErr error
	rows, lastRows, results := 0, 0, 0
	gsetCompound := q.Store == script.StoreGset && q.Statements > 1
	for {
		msg, err := c.conn.ReceiveMessage(context.Background())
		if err != nil {
			return err // FATAL errors and lost connections; pgconn has closed the connection
		}
		switch m := msg.(type) {
		case *pgproto3.RowDescription:
			x.names = x.names[:0]
			for i := range m.Fields {
				x.names = append(x.names, string(m.Fields[i].Name))
			}
		case *pgproto3.DataRow:
			if firstErr == nil {
				switch {
				case q.Store == script.StoreAset:
					firstErr = c.sc.Store(q, x.names, m.Values)
				case gsetCompound:
					x.keepRow(m.Values)
				case q.Store == script.StoreGset && rows == 0:
					firstErr = c.sc.Store(q, x.names, m.Values)
				}
			}
			rows++
		case *pgproto3.CommandComplete, *pgproto3.EmptyQueryResponse:
			results++
			lastRows, rows = rows, 0
		case *pgproto3.ErrorResponse:
			if firstErr == nil {
				firstErr = pgconn.ErrorResponseToPgError(m)
				c.failQuery = results
			}
		case *pgproto3.CopyInResponse:
			x.copyFail.Message = "COPY FROM STDIN is not supported in benchmark scripts"
			c.conn.Frontend().Send(&x.copyFail)
			if err := c.conn.Frontend().Flush(); err != nil {
				c.closeConn()
				return err
			}
		case *pgproto3.ReadyForQuery:
			if firstErr != nil {
				return firstErr
			}
			if q.Store == script.StoreGset {
				if results == 0 || lastRows != 1 {
					c.failQuery = max(results-1, 0)
					return script.RowCountError(c.scripts[si], cmd, lastRows)
				}
				if gsetCompound {
					return c.sc.Store(q, x.lastName, x.lastRow)
				}
			}
			return nil
		}
	}
}

// keepRow copies a row (and the current column names) for a \gset whose
// statement is compound: only the last result's row is stored, and which
// result is last is known only at ReadyForQuery.
func (x *exchange) keepRow(values [][]byte) {
	x.lastBuf = x.lastBuf[:0]
	x.lastRow = x.lastRow[:0]
	for _, v := range values {
		if v == nil {
			x.lastRow = append(x.lastRow, nil)
			continue
		}
		start := len(x.lastBuf)
		x.lastBuf = append(x.lastBuf, v...)
		x.lastRow = append(x.lastRow, x.lastBuf[start:len(x.lastBuf):len(x.lastBuf)])
	}
	x.lastName = append(x.lastName[:0], x.names...)
}
