package probe

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/result"
)

// checkpointProbe reads the checkpointer's, the background writer's and
// the WAL's cumulative statistics and the WAL insert position at the
// window's edges, two queries a step, and records their differences: a
// checkpoint during the step, the full-page images after it, backends
// writing buffers themselves explain a dip in throughput. The views and
// columns are found when it opens, so a figure the server's version does
// not have is absent from the evidence, never zero.
type checkpointProbe struct {
	conn *sqlConn
	// figures are the figures the server has, in the order of the
	// query's columns; resets the views' stats_reset columns after them.
	figures []cpFigure
	resets  []string
	sql     string

	first, last [][]byte // a reading: figures, resets, the insert position; nil is NULL
}

// cpFigure is one figure of the evidence: the view and column it is read
// from on this server.
type cpFigure struct {
	name string // the evidence's figure (cpFigures' key)
	view string // the view's alias in the query
	col  string
}

// cpSources are, for each figure of the evidence, the views and columns
// that hold it, the first one the server has being read: the checkpointer's
// figures moved from pg_stat_bgwriter to pg_stat_checkpointer in
// PostgreSQL 17 (where the backends' writes and fsyncs went to pg_stat_io),
// pg_stat_wal came in 14 (its writes and syncs went to pg_stat_io in 18).
var cpSources = []struct {
	name string
	from [][2]string // view, column
}{
	{"checkpoints_timed", [][2]string{{"pg_stat_checkpointer", "num_timed"}, {"pg_stat_bgwriter", "checkpoints_timed"}}},
	{"checkpoints_req", [][2]string{{"pg_stat_checkpointer", "num_requested"}, {"pg_stat_bgwriter", "checkpoints_req"}}},
	{"checkpoint_write_ms", [][2]string{{"pg_stat_checkpointer", "write_time"}, {"pg_stat_bgwriter", "checkpoint_write_time"}}},
	{"checkpoint_sync_ms", [][2]string{{"pg_stat_checkpointer", "sync_time"}, {"pg_stat_bgwriter", "checkpoint_sync_time"}}},
	{"buffers_checkpoint", [][2]string{{"pg_stat_checkpointer", "buffers_written"}, {"pg_stat_bgwriter", "buffers_checkpoint"}}},
	{"buffers_clean", [][2]string{{"pg_stat_bgwriter", "buffers_clean"}}},
	{"buffers_backend", [][2]string{{"pg_stat_bgwriter", "buffers_backend"}}},
	{"buffers_backend_fsync", [][2]string{{"pg_stat_bgwriter", "buffers_backend_fsync"}}},
	{"buffers_alloc", [][2]string{{"pg_stat_bgwriter", "buffers_alloc"}}},
	{"wal_records", [][2]string{{"pg_stat_wal", "wal_records"}}},
	{"wal_fpi", [][2]string{{"pg_stat_wal", "wal_fpi"}}},
	{"wal_bytes", [][2]string{{"pg_stat_wal", "wal_bytes"}}},
	{"wal_buffers_full", [][2]string{{"pg_stat_wal", "wal_buffers_full"}}},
	{"wal_write", [][2]string{{"pg_stat_wal", "wal_write"}}},
	{"wal_sync", [][2]string{{"pg_stat_wal", "wal_sync"}}},
}

// cpViews are the views the figures come from.
var cpViews = []string{"pg_stat_bgwriter", "pg_stat_checkpointer", "pg_stat_wal"}

// insertLSN is the WAL insert position, NULL on a server in recovery
// (where the function fails): the figure is then absent.
const insertLSN = "CASE WHEN pg_is_in_recovery() THEN NULL ELSE pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0') END"

func newCheckpointProbe(ctx context.Context, cfg Config) (*checkpointProbe, error) {
	c, err := newSQLConn(ctx, cfg.conn())
	if err != nil {
		return nil, err
	}
	rows, err := c.query(ctx, `SELECT c.relname, a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
		WHERE c.oid IN (to_regclass('pg_catalog.pg_stat_bgwriter'), to_regclass('pg_catalog.pg_stat_checkpointer'),
			to_regclass('pg_catalog.pg_stat_wal')) AND a.attnum > 0 AND NOT a.attisdropped`)
	if err != nil {
		c.close()
		return nil, fmt.Errorf("find the statistics views: %w", err)
	}
	has := map[[2]string]bool{} // view, column
	for _, r := range rows {
		has[[2]string{string(r[0]), string(r[1])}] = true
	}
	p, err := checkpointQuery(has)
	if err != nil {
		c.close()
		return nil, err
	}
	p.conn = c
	return p, nil
}

// checkpointQuery makes the probe's query from the views' columns the
// server has (has: view and column): each figure from the first of its
// sources there, then the views' stats_reset, then the WAL insert
// position.
func checkpointQuery(has map[[2]string]bool) (*checkpointProbe, error) {
	p := &checkpointProbe{}
	there := map[string]bool{}
	for k := range has {
		there[k[0]] = true
	}
	alias := map[string]string{}
	var from []string
	for i, v := range cpViews {
		if !there[v] {
			continue
		}
		a := fmt.Sprintf("v%d", i)
		alias[v] = a
		from = append(from, v+" "+a)
	}
	if alias["pg_stat_bgwriter"] == "" {
		return nil, fmt.Errorf("pg_stat_bgwriter cannot be read on this server")
	}
	var cols []string
	for _, s := range cpSources {
		for _, src := range s.from {
			if has[src] {
				p.figures = append(p.figures, cpFigure{name: s.name, view: alias[src[0]], col: src[1]})
				cols = append(cols, alias[src[0]]+"."+src[1])
				break
			}
		}
	}
	for _, v := range cpViews {
		if a := alias[v]; a != "" && has[[2]string{v, "stats_reset"}] {
			p.resets = append(p.resets, v)
			cols = append(cols, a+".stats_reset")
		}
	}
	cols = append(cols, insertLSN)
	p.sql = "SELECT " + strings.Join(cols, ", ") + " FROM " + strings.Join(from, ", ")
	return p, nil
}

func (p *checkpointProbe) name() string    { return probeid.Checkpoints.Name }
func (p *checkpointProbe) backends() []int { return p.conn.backends() }
func (p *checkpointProbe) queries() int64  { return p.conn.queries() }
func (p *checkpointProbe) close()          { p.conn.close() }

func (p *checkpointProbe) read(ctx context.Context) ([][]byte, error) {
	rows, err := p.conn.query(ctx, p.sql)
	if err != nil {
		return nil, fmt.Errorf("read the checkpointer's and the WAL's statistics: %w", err)
	}
	if len(rows) != 1 {
		return nil, fmt.Errorf("read the checkpointer's and the WAL's statistics: %d rows, want 1", len(rows))
	}
	if want := len(p.figures) + len(p.resets) + 1; len(rows[0]) != want {
		return nil, fmt.Errorf("read the checkpointer's and the WAL's statistics: %d columns, want %d", len(rows[0]), want)
	}
	return rows[0], nil
}

func (p *checkpointProbe) begin(ctx context.Context, _ *stepState) (func(<-chan struct{}), error) {
	var err error
	p.last = nil
	p.first, err = p.read(ctx)
	return nil, err
}

func (p *checkpointProbe) capture(ctx context.Context, _ *stepState) error {
	var err error
	p.last, err = p.read(ctx)
	return err
}

func (p *checkpointProbe) report(_ context.Context, st *stepState, out *result.Probes) error {
	a, b := p.first, p.last
	p.first, p.last = nil, nil
	if a == nil || b == nil {
		return fmt.Errorf("missing a reading")
	}
	var window float64
	var load int64
	if st != nil {
		window = st.end.Sub(st.window).Seconds()
		if st.step != nil {
			load = int64(math.Round(st.step.Summary.TPS * window))
		}
	}
	ev, err := p.difference(a, b, window, load)
	if err != nil {
		return err
	}
	out.SetCheckpoints(ev)
	return nil
}

// difference is the evidence of the readings a and b, taken window
// seconds apart, while the load ran load transactions.
func (p *checkpointProbe) difference(a, b [][]byte, window float64, load int64) (*result.Checkpoints, error) {
	n := len(p.figures)
	for i, v := range p.resets {
		if !bytes.Equal(a[n+i], b[n+i]) || (a[n+i] == nil) != (b[n+i] == nil) {
			return nil, fmt.Errorf("%s was reset during the step, by pg_stat_reset_shared or a restart after a crash (stats_reset %s, then %s): no difference to take",
				v, nullText(a[n+i]), nullText(b[n+i]))
		}
	}
	ev := &result.Checkpoints{WindowS: window, LoadTransactions: load}
	figs := map[string]float64{}
	for i, f := range p.figures {
		if a[i] == nil || b[i] == nil {
			continue
		}
		x, errA := strconv.ParseFloat(string(a[i]), 64)
		y, errB := strconv.ParseFloat(string(b[i]), 64)
		if errA != nil || errB != nil {
			return nil, fmt.Errorf("%s: %q then %q, not numbers", f.col, a[i], b[i])
		}
		if y < x {
			return nil, fmt.Errorf("%s went back during the step (%s, then %s): the statistics were reset or the server restarted", f.col, a[i], b[i])
		}
		figs[f.name] = y - x
	}
	count := func(name string) *int64 {
		if v, ok := figs[name]; ok {
			n := int64(math.Round(v))
			return &n
		}
		return nil
	}
	ms := func(name string) *float64 {
		if v, ok := figs[name]; ok {
			return &v
		}
		return nil
	}
	perTxn := func(v int64) *float64 {
		if load <= 0 {
			return nil
		}
		x := float64(v) / float64(load)
		return &x
	}
	ev.Timed, ev.Requested = count("checkpoints_timed"), count("checkpoints_req")
	ev.WriteMs, ev.SyncMs = ms("checkpoint_write_ms"), ms("checkpoint_sync_ms")
	ev.BuffersCheckpoint, ev.BuffersClean = count("buffers_checkpoint"), count("buffers_clean")
	ev.BuffersBackend, ev.BuffersBackendFsync = count("buffers_backend"), count("buffers_backend_fsync")
	ev.BuffersAlloc = count("buffers_alloc")
	records, fpi, size, full := count("wal_records"), count("wal_fpi"), count("wal_bytes"), count("wal_buffers_full")
	if records != nil && fpi != nil && size != nil && full != nil {
		ev.WAL = &result.WALStats{Records: *records, FPI: *fpi, Bytes: *size, BuffersFull: *full,
			Writes: count("wal_write"), Syncs: count("wal_sync"), FPIPerTxn: perTxn(*fpi)}
	}
	lsn := len(a) - 1
	if a[lsn] != nil && b[lsn] != nil {
		x, errA := strconv.ParseFloat(string(a[lsn]), 64)
		y, errB := strconv.ParseFloat(string(b[lsn]), 64)
		if errA == nil && errB == nil && y >= x {
			n := int64(y - x)
			ev.InsertedBytes, ev.BytesPerTxn = &n, perTxn(n)
		}
	}
	return ev, nil
}

// nullText writes a reading's value, NULL as "none".
func nullText(v []byte) string {
	if v == nil {
		return "none"
	}
	return string(v)
}

func init() { register(checkpointsDef) }

var checkpointsDef = def{
	id: probeid.Checkpoints, on: true, flag: "no-checkpoints",
	evidence: "checkpoints, buffers written and WAL over each step (pg_stat_bgwriter, pg_stat_wal)",
	open: func(ctx context.Context, cfg Config, _ *Set) (probe, error) {
		if cfg.Server.Callgrind() != nil {
			// A counted server: the probe's backend would run under
			// callgrind, a cost every counted step pays (about a sixth
			// of a bisect step's), and its write and sync times would
			// tell Valgrind's pace. A native run has the figures.
			return nil, nil
		}
		p, err := newCheckpointProbe(ctx, cfg)
		if err != nil {
			return nil, err
		}
		return p, nil
	},
}
