package probe

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/result"
)

// statementProbe diffs pg_stat_statements between the step's edges (it
// never resets it): each top-level statement's calls, time and rows. The
// probes' own statements carry a marker comment and are left out.
type statementProbe struct {
	conn              *sqlConn
	toplevel          bool // pg_stat_statements has the toplevel column (1.9+)
	info              bool // pg_stat_statements_info exists (1.9+)
	first, last       map[string]stmtRow
	dealloc, dealloc2 int64
}

type stmtRow struct {
	queryID string
	query   string
	calls   int64
	ms      float64
	rows    int64
}

func newStatementProbe(ctx context.Context, cfg Config) (*statementProbe, error) {
	c, err := newSQLConn(ctx, cfg.conn())
	if err != nil {
		return nil, err
	}
	if err := c.hasExtension(ctx, "pg_stat_statements", cfg.Server.Ephemeral(), true); err != nil {
		c.close()
		return nil, err
	}
	rows, err := c.query(ctx, `SELECT
		EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'pg_stat_statements'::regclass AND attname = 'toplevel'),
		to_regclass('pg_stat_statements_info') IS NOT NULL`)
	if err != nil {
		c.close()
		return nil, err
	}
	return &statementProbe{conn: c, toplevel: string(rows[0][0]) == "t", info: string(rows[0][1]) == "t"}, nil
}

func (p *statementProbe) name() string    { return probeid.Statements.Name }
func (p *statementProbe) backends() []int { return p.conn.backends() }
func (p *statementProbe) queries() int64  { return p.conn.queries() }
func (p *statementProbe) close()          { p.conn.close() }

func (p *statementProbe) read(ctx context.Context) (map[string]stmtRow, int64, error) {
	where := ""
	if p.toplevel {
		where = "WHERE toplevel"
	}
	rows, err := p.conn.query(ctx, fmt.Sprintf(`SELECT userid, dbid, queryid, calls, total_exec_time + total_plan_time, rows,
		left(query, 300) FROM pg_stat_statements %s`, where))
	if err != nil {
		return nil, 0, fmt.Errorf("read pg_stat_statements: %w", err)
	}
	m := make(map[string]stmtRow, len(rows))
	for _, r := range rows {
		q := string(r[6])
		if strings.Contains(q, strings.TrimSpace(probeMarker)) {
			continue
		}
		key := string(r[0]) + "/" + string(r[1]) + "/" + string(r[2])
		m[key] = stmtRow{queryID: string(r[2]), query: q, calls: atoi64(r[3]), ms: atof(r[4]), rows: atoi64(r[5])}
	}
	var dealloc int64
	if p.info {
		v, err := p.conn.value(ctx, "SELECT dealloc FROM pg_stat_statements_info")
		if err != nil {
			return nil, 0, err
		}
		dealloc = atoi64([]byte(v))
	}
	return m, dealloc, nil
}

func (p *statementProbe) begin(ctx context.Context, _ *stepState) (func(<-chan struct{}), error) {
	var err error
	p.first, p.dealloc, err = p.read(ctx)
	return nil, err
}

func (p *statementProbe) capture(ctx context.Context, _ *stepState) error {
	var err error
	p.last, p.dealloc2, err = p.read(ctx)
	return err
}

func (p *statementProbe) report(_ context.Context, _ *stepState, out *result.Probes) error {
	b := p.last
	if p.first == nil || b == nil {
		return fmt.Errorf("missing a snapshot")
	}
	s := &result.Statements{Dealloc: p.dealloc2 != p.dealloc}
	var all []result.Statement
	for k, v := range b {
		a := p.first[k]
		if v.calls < a.calls { // evicted and re-entered
			a = stmtRow{}
		}
		d := result.Statement{QueryID: v.queryID, Query: oneLine(v.query), Calls: v.calls - a.calls,
			TotalMs: v.ms - a.ms, Rows: v.rows - a.rows}
		if d.Calls <= 0 {
			continue
		}
		s.Calls += d.Calls
		s.ServerMs += d.TotalMs
		all = append(all, d)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].TotalMs != all[j].TotalMs {
			return all[i].TotalMs > all[j].TotalMs
		}
		return all[i].QueryID < all[j].QueryID
	})
	if len(all) > defaultStatementsTopSize {
		all = all[:defaultStatementsTopSize]
	}
	s.Top = all
	p.first, p.last = nil, nil
	out.SetStatements(s)
	return nil
}

// oneLine folds a statement's white space so it fits on a report line.
func oneLine(q string) string { return strings.Join(strings.Fields(q), " ") }

func init() { register(statementsDef) }

var statementsDef = def{
	id: probeid.Statements, on: true, flag: "no-statements", evidence: "pg_stat_statements differences",
	open: func(ctx context.Context, cfg Config, _ *Set) (probe, error) {
		p, err := newStatementProbe(ctx, cfg)
		if err != nil {
			return nil, err
		}
		return p, nil
	},
}
