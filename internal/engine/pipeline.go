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

// pgbench's messages for misused pipelines.
var (
	errNotInPipeline     = errors.New("not in pipeline mode")
	errAlreadyInPipeline = errors.New("already in pipeline mode")
	errGsetInPipeline    = errors.New("\\gset is not allowed in pipeline mode")
	errAsetInPipeline    = errors.New("\\aset is not allowed in pipeline mode")
	errPipelineOpen      = errors.New("end of script reached with pipeline open")
)

// startPipeline enters pipeline mode at command pc of script si. In
// prepared mode it first prepares every statement up to \endpipeline, as
// pgbench does.
func (c *client) startPipeline(si, pc int) error {
	if c.pipe != nil {
		return errAlreadyInPipeline
	}
	if c.e.cfg.Protocol == Prepared {
		cmds := c.scripts[si].Commands
		for i := pc + 1; i < len(cmds) && cmds[i].Kind != script.KindEndPipeline; i++ {
			if cmds[i].Kind == script.KindSQL {
				if _, err := c.statement(si, i, cmds[i].SQL); err != nil {
					return err
				}
			}
		}
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
	switch q.Store {
	case script.StoreGset:
		return errGsetInPipeline
	case script.StoreAset:
		return errAsetInPipeline
	}
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
