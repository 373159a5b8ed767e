package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/script"
)

// pipeline is a client's state between \startpipeline and \endpipeline:
// commands are sent without waiting, their results read at the end.
type pipeline struct {
	p       *pgconn.Pipeline
	pending []pending
}

type pendingKind uint8

const (
	pendingPrepare pendingKind = iota
	pendingQuery
	pendingSync
)

type pending struct {
	kind   pendingKind
	si, pc int
	cmd    *script.Command
}

var errNotInPipeline = errors.New("not in a pipeline")

func (c *client) startPipeline() error {
	if c.pipe != nil {
		return errors.New("already in a pipeline")
	}
	if c.pipeState.pending == nil {
		c.pipeState.pending = make([]pending, 0, 16)
	}
	c.pipeState.p = c.conn.StartPipeline(context.Background())
	c.pipeState.pending = c.pipeState.pending[:0]
	c.pipe = &c.pipeState
	return nil
}

func (c *client) pipeSQL(si, pc int, cmd *script.Command) error {
	q := cmd.SQL
	params, err := c.sc.Params(q, c.params)
	c.params = params
	if err != nil {
		return err
	}
	pl := c.pipe
	if c.e.cfg.Protocol == Prepared {
		name := c.e.stmtName(si, pc)
		if c.prepared[si][pc] == nil && !pl.preparing(si, pc) {
			pl.p.SendPrepare(name, q.Prepared, nil)
			pl.pending = append(pl.pending, pending{kind: pendingPrepare, si: si, pc: pc})
		}
		pl.p.SendQueryPrepared(name, params, nil, nil)
	} else {
		pl.p.SendQueryParams(q.Prepared, params, nil, nil, nil)
	}
	pl.pending = append(pl.pending, pending{kind: pendingQuery, si: si, pc: pc, cmd: cmd})
	return nil
}

func (pl *pipeline) preparing(si, pc int) bool {
	for _, p := range pl.pending {
		if p.kind == pendingPrepare && p.si == si && p.pc == pc {
			return true
		}
	}
	return false
}

func (c *client) syncPipeline() error {
	if c.pipe == nil {
		return errNotInPipeline
	}
	c.pipe.p.SendPipelineSync()
	c.pipe.pending = append(c.pipe.pending, pending{kind: pendingSync})
	return c.pipe.p.Flush()
}

// endPipeline syncs, reads every pending result in order and leaves
// pipeline mode. The first error is returned, after the rest is drained.
func (c *client) endPipeline() error {
	pl := c.pipe
	if pl == nil {
		return errNotInPipeline
	}
	c.pipe = nil
	if err := pl.p.Sync(); err != nil {
		pl.p.Close()
		return err
	}
	pl.pending = append(pl.pending, pending{kind: pendingSync})
	var first error
	for _, item := range pl.pending {
		res, err := pl.p.GetResults()
		if err != nil {
			first = err
			break
		}
		switch r := res.(type) {
		case *pgconn.StatementDescription:
			if item.kind == pendingPrepare {
				c.prepared[item.si][item.pc] = r
			}
		case *pgconn.ResultReader:
			if err := c.readResult(r, item.si, item.cmd, true); err != nil && first == nil {
				first = err
			}
		case *pgconn.PipelineSync:
		case nil:
			first = fmt.Errorf("pipeline: missing result")
		}
		if first != nil {
			break
		}
	}
	if err := pl.p.Close(); err != nil && first == nil {
		first = err
	}
	return first
}
