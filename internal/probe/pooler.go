package probe

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/watch"
)

// poolerEvery is how often the probe reads the console: the load's
// interval, so that the waiting clients line up with its throughput.
const poolerEvery = time.Second

func init() { register(poolerDef) }

var poolerDef = def{
	id: probeid.Pooler, on: true, flag: "no-pooler",
	evidence: "samples of the pooler's admin console once a second (its definition's admin:, the built-in pgbouncer:'s own): clients active and waiting, server connections, the longest wait, wait per transaction, what it counted, per pool",
	open: func(ctx context.Context, cfg Config, _ *Set) (probe, error) {
		pl := cfg.Server.Pooler()
		if pl == nil || pl.Admin() == nil {
			return nil, nil // no pooler, or no console named
		}
		if pl.Callgrind() != nil {
			// Under callgrind its answers would be counted as the
			// pooler's work per transaction.
			return nil, fmt.Errorf("%s runs under Valgrind, where the console's queries would count as its instructions", pl.Program())
		}
		return newPoolerProbe(ctx, pl.Program(), pl.Admin(), cfg.Server.Conn())
	},
}

// poolerProbe reads a pooler's admin console at the start of each step's
// window, every poolerEvery during it, and at its end.
type poolerProbe struct {
	program string
	admin   *watch.Admin
	// own says the console is one of the pooler's client sessions (its
	// database is the clients'): its own connection is taken off.
	own    bool
	ownKey []string // the values the probe's own session's pool may have
	conn   *pgconn.PgConn
	n      atomic.Int64 // queries since the last call to queries

	mu      sync.Mutex
	window  time.Time
	samples []poolerSample
	err     error // the first failed sample of the step
}

// poolerSample is the console at one moment: each pool's figures.
type poolerSample struct {
	at    time.Time
	pools []poolRow
}

// poolRow is one pool in a sample: the values of the columns naming it
// (in the order they were first seen) and its figures.
type poolRow struct {
	cols, vals []string
	figs       map[string]float64
}

// name is the pool's name: its columns' values, "pgbench/postgres".
func (r poolRow) name() string { return strings.Join(r.vals, "/") }

// newPoolerProbe connects to the console and runs each command once, so
// that a mapping naming a column the pooler does not have is said before
// the run rather than as figures that are missing.
func newPoolerProbe(ctx context.Context, program string, admin *watch.Admin, server *pgconn.Config) (*poolerProbe, error) {
	p := &poolerProbe{program: program, admin: admin}
	if server != nil && admin.Conn.Database == server.Database {
		p.own = true
		p.ownKey = []string{admin.Conn.Database, admin.Conn.User, ""}
	}
	if err := p.ensure(ctx); err != nil {
		return nil, err
	}
	for _, c := range admin.Commands {
		res, err := p.exec(ctx, c.Command)
		if err != nil {
			p.close()
			return nil, err
		}
		var cols []string
		for _, f := range res.FieldDescriptions {
			cols = append(cols, f.Name)
		}
		for _, col := range slices.Concat(c.Pool, slices.Collect(maps.Values(c.Columns)), matchColumns(c.Count)) {
			if !slices.Contains(cols, col) {
				p.close()
				return nil, fmt.Errorf("%s's %s has no column %q (it has %s): see its definition's admin:", program, c.Command, col, strings.Join(cols, ", "))
			}
		}
	}
	return p, nil
}

func matchColumns(m map[string]watch.RowMatch) []string {
	var out []string
	for _, r := range m {
		out = append(out, r.Column)
	}
	return out
}

// ensure connects when there is no live connection.
func (p *poolerProbe) ensure(ctx context.Context) error {
	if p.conn != nil && !p.conn.IsClosed() {
		return nil
	}
	cfg := p.admin.Conn.Copy()
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	cfg.RuntimeParams["application_name"] = probeApplicationName
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgconn.ConnectConfig(cctx, cfg)
	if err != nil {
		return fmt.Errorf("%s's admin console: %w", p.program, err)
	}
	p.conn = conn
	return nil
}

// exec runs one admin command as a simple query (the only protocol
// PgBouncer's console speaks).
func (p *poolerProbe) exec(ctx context.Context, command string) (*pgconn.Result, error) {
	if err := p.ensure(ctx); err != nil {
		return nil, err
	}
	p.n.Add(1)
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	res, err := p.conn.Exec(qctx, command).ReadAll()
	if err == nil && len(res) > 0 && res[0].Err != nil {
		err = res[0].Err
	}
	if err != nil {
		p.conn.Close(context.Background())
		return nil, fmt.Errorf("%s's %s: %w", p.program, command, err)
	}
	if len(res) != 1 {
		return nil, fmt.Errorf("%s's %s: %d results, want one", p.program, command, len(res))
	}
	return res[0], nil
}

func (p *poolerProbe) name() string { return probeid.Pooler.Name }

func (p *poolerProbe) backends() []int { return nil } // the pooler's, not the server's

func (p *poolerProbe) queries() int64 { return p.n.Swap(0) }

func (p *poolerProbe) close() {
	if p.conn != nil {
		p.conn.Close(context.Background())
	}
}

func (p *poolerProbe) begin(ctx context.Context, _ *stepState) (func(<-chan struct{}), error) {
	p.mu.Lock()
	p.window, p.samples, p.err = time.Now(), nil, nil
	p.mu.Unlock()
	if err := p.sample(ctx); err != nil {
		return nil, err
	}
	return func(stop <-chan struct{}) {
		t := time.NewTicker(poolerEvery)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if err := p.sample(ctx); err != nil {
					p.mu.Lock()
					if p.err == nil {
						p.err = err
					}
					p.mu.Unlock()
				}
			}
		}
	}, nil
}

func (p *poolerProbe) capture(ctx context.Context, _ *stepState) error {
	if err := p.sample(ctx); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// sample reads every command once and keeps the pools they name.
func (p *poolerProbe) sample(ctx context.Context) error {
	at := time.Now()
	var pools []poolRow
	for _, c := range p.admin.Commands {
		res, err := p.exec(ctx, c.Command)
		if err != nil {
			return err
		}
		rows, err := commandRows(c, res, p.admin.Conn.Database, p.own)
		if err != nil {
			return fmt.Errorf("%s's %s: %w", p.program, c.Command, err)
		}
		pools = mergePools(pools, rows)
	}
	if p.own {
		takeOwn(pools, p.ownKey)
	}
	p.mu.Lock()
	p.samples = append(p.samples, poolerSample{at: at, pools: pools})
	p.mu.Unlock()
	return nil
}

// commandRows turns one command's result into pools: the rows naming the
// same pool add up (PgCat's SHOW STATS has one per server; pgpool-II's
// SHOW POOL_PROCESSES one per process), but the longest wait is the
// longest of them. The console's own pool (PgBouncer's "pgbouncer"
// database) is left out unless the console is the clients' database.
func commandRows(c watch.AdminCommand, res *pgconn.Result, adminDB string, own bool) ([]poolRow, error) {
	idx := map[string]int{}
	for i, f := range res.FieldDescriptions {
		idx[f.Name] = i
	}
	col := func(name string) (int, error) {
		i, ok := idx[name]
		if !ok {
			return 0, fmt.Errorf("no column %q", name)
		}
		return i, nil
	}
	var out []poolRow
	for _, row := range res.Rows {
		key := make([]string, len(c.Pool))
		for i, name := range c.Pool {
			j, err := col(name)
			if err != nil {
				return nil, err
			}
			key[i] = string(row[j])
		}
		if !own && adminDB != "" && slices.Contains(key, adminDB) {
			continue
		}
		figs := map[string]float64{}
		for fig, name := range c.Columns {
			j, err := col(name)
			if err != nil {
				return nil, err
			}
			s := strings.TrimSpace(string(row[j]))
			if s == "" {
				continue // pgpool-II leaves a free process's columns empty
			}
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, fmt.Errorf("%s (%s) is %q, not a number", name, fig, s)
			}
			if f, ok := c.Scale[fig]; ok {
				v *= f
			}
			figs[fig] = v
		}
		for fig, m := range c.Count {
			j, err := col(m.Column)
			if err != nil {
				return nil, err
			}
			if (strings.TrimSpace(string(row[j])) == m.Value) != m.Not {
				figs[fig]++
			} else if _, ok := figs[fig]; !ok {
				figs[fig] = 0
			}
		}
		r := poolRow{cols: c.Pool, vals: key, figs: figs}
		if i := slices.IndexFunc(out, func(o poolRow) bool { return slices.Equal(o.vals, key) }); i >= 0 {
			addFigures(out[i].figs, figs)
		} else {
			out = append(out, r)
		}
	}
	return out, nil
}

// addFigures adds one row's figures to a pool's: counts and totals add,
// the longest wait is the longest.
func addFigures(to, from map[string]float64) {
	for fig, v := range from {
		if fig == watch.MaxWaitSeconds || fig == watch.MaxWaitMicros {
			continue // below, as one wait
		}
		to[fig] += v
	}
	if waitMs(from) > waitMs(to) {
		delete(to, watch.MaxWaitSeconds)
		delete(to, watch.MaxWaitMicros)
		for _, fig := range []string{watch.MaxWaitSeconds, watch.MaxWaitMicros} {
			if v, ok := from[fig]; ok {
				to[fig] = v
			}
		}
	}
}

// waitMs is a pool's longest wait in milliseconds, from its whole seconds
// and its microseconds (PgBouncer's maxwait and maxwait_us); -1 when
// neither is mapped.
func waitMs(figs map[string]float64) float64 {
	s, okS := figs[watch.MaxWaitSeconds]
	us, okU := figs[watch.MaxWaitMicros]
	if !okS && !okU {
		return -1
	}
	return s*1000 + us/1000
}

// mergePools adds one command's pools to those of the commands before:
// a pool named by fewer columns (SHOW STATS' database) joins the one pool
// that agrees on them (SHOW POOLS' database and user); one that agrees
// with none, or with several, is a pool of its own.
func mergePools(pools, rows []poolRow) []poolRow {
	for _, r := range rows {
		match := -1
		for i, p := range pools {
			if agrees(p, r) {
				if match >= 0 {
					match = -2 // several
					break
				}
				match = i
			}
		}
		if match < 0 {
			pools = append(pools, r)
			continue
		}
		p := &pools[match]
		for fig, v := range r.figs {
			if fig == watch.MaxWaitSeconds || fig == watch.MaxWaitMicros {
				if _, had := p.figs[fig]; had {
					p.figs[fig] = max(p.figs[fig], v)
					continue
				}
			}
			p.figs[fig] = v
		}
		for i, c := range r.cols {
			if !slices.Contains(p.cols, c) {
				p.cols, p.vals = append(slices.Clone(p.cols), c), append(slices.Clone(p.vals), r.vals[i])
			}
		}
	}
	return pools
}

// agrees says whether two pools name the same values for the columns
// they share, sharing at least one (or both naming none).
func agrees(a, b poolRow) bool {
	shared := 0
	for i, c := range b.cols {
		if j := slices.Index(a.cols, c); j >= 0 {
			if a.vals[j] != b.vals[i] {
				return false
			}
			shared++
		}
	}
	return shared > 0 || (len(a.cols) == 0 && len(b.cols) == 0)
}

// takeOwn takes the probe's own session off a sample of a console reached
// through the clients' database: one active client and one active server
// connection, in the pool its session belongs to (or the one pool naming
// none).
func takeOwn(pools []poolRow, ownKey []string) {
	for i := range pools {
		p := &pools[i]
		mine := true
		for _, v := range p.vals {
			if !slices.Contains(ownKey, v) {
				mine = false
			}
		}
		if !mine || p.figs[watch.ClientsActive] < 1 {
			continue
		}
		p.figs[watch.ClientsActive]--
		if _, ok := p.figs[watch.ServersActive]; ok && p.figs[watch.ServersActive] >= 1 {
			p.figs[watch.ServersActive]--
		}
		return
	}
}

func (p *poolerProbe) report(_ context.Context, st *stepState, out *result.Probes) error {
	p.mu.Lock()
	samples := p.samples
	window := p.window
	p.mu.Unlock()
	if len(samples) < 2 {
		return fmt.Errorf("%d samples of %s's admin console, want at least the start's and the end's", len(samples), p.program)
	}
	first, last := samples[0], samples[len(samples)-1]
	ev := &result.Pools{Program: p.program, Samples: len(samples), WindowS: last.at.Sub(first.at).Seconds(), OwnConnection: p.own}
	for _, c := range p.admin.Commands {
		ev.Commands = append(ev.Commands, c.Command)
	}
	if st != nil && st.step != nil {
		ev.LoadTransactions = int64(math.Round(st.step.Summary.TPS * ev.WindowS))
	}
	// The pools in the order first seen, over every sample.
	var names []string
	for _, s := range samples {
		for _, r := range s.pools {
			if !slices.Contains(names, r.name()) {
				names = append(names, r.name())
			}
		}
	}
	total := func(s poolerSample) map[string]float64 {
		t := map[string]float64{}
		for _, r := range s.pools {
			addFigures(t, r.figs)
		}
		return t
	}
	of := func(s poolerSample, name string) map[string]float64 {
		for _, r := range s.pools {
			if r.name() == name {
				return r.figs
			}
		}
		return nil
	}
	ev.Total = poolFigures("", samples, total)
	if len(names) > 1 || (len(names) == 1 && names[0] != "") {
		for _, name := range names {
			ev.Pools = append(ev.Pools, poolFigures(name, samples, func(s poolerSample) map[string]float64 { return of(s, name) }))
		}
	}
	var prev map[string]float64
	for _, s := range samples {
		t := total(s)
		ps := result.PoolSample{TS: s.at.Sub(window).Seconds(), ClientsActive: present(t, watch.ClientsActive),
			ClientsWaiting: present(t, watch.ClientsWaiting), ServersActive: present(t, watch.ServersActive),
			ServersIdle: present(t, watch.ServersIdle), ServersUsed: present(t, watch.ServersUsed)}
		if w := waitMs(t); w >= 0 {
			ps.MaxWaitMs = &w
		}
		if prev != nil {
			ps.Transactions, ps.Queries = countDelta(prev, t, watch.Transactions), countDelta(prev, t, watch.Queries)
			ps.WaitUS = poolDelta(prev, t, watch.WaitMicroTotals)
		}
		ev.Series = append(ev.Series, ps)
		prev = t
	}
	out.SetPooler(ev)
	return nil
}

// poolFigures are one pool's figures over the samples (figs of a sample
// nil: the pool was not there then).
func poolFigures(name string, samples []poolerSample, figs func(poolerSample) map[string]float64) result.PoolFigures {
	pf := result.PoolFigures{Pool: name}
	gauge := func(fig string) *result.Gauge {
		var sum, top float64
		n := 0
		for _, s := range samples {
			if v, ok := figs(s)[fig]; ok {
				sum, top, n = sum+v, max(top, v), n+1
			}
		}
		if n == 0 {
			return nil
		}
		return &result.Gauge{Mean: sum / float64(n), Max: top}
	}
	pf.ClientsActive, pf.ClientsWaiting = gauge(watch.ClientsActive), gauge(watch.ClientsWaiting)
	pf.ServersActive, pf.ServersIdle, pf.ServersUsed = gauge(watch.ServersActive), gauge(watch.ServersIdle), gauge(watch.ServersUsed)
	longest := -1.0
	for _, s := range samples {
		longest = max(longest, waitMs(figs(s)))
	}
	if longest >= 0 {
		pf.MaxWaitMs = &longest
	}
	a, b := figs(samples[0]), figs(samples[len(samples)-1])
	if a != nil && b != nil {
		pf.Transactions, pf.Queries = countDelta(a, b, watch.Transactions), countDelta(a, b, watch.Queries)
		pf.WaitUS, pf.XactUS, pf.QueryUS = poolDelta(a, b, watch.WaitMicroTotals), poolDelta(a, b, watch.TransactionUS), poolDelta(a, b, watch.QueryUS)
		if pf.WaitUS != nil && pf.Transactions != nil && *pf.Transactions > 0 {
			w := *pf.WaitUS / float64(*pf.Transactions)
			pf.WaitPerTxnUS = &w
		}
	}
	return pf
}

// present is a figure of a sample, nil when the mapping has none.
func present(figs map[string]float64, fig string) *float64 {
	if v, ok := figs[fig]; ok {
		return &v
	}
	return nil
}

// poolDelta is how much a running total grew between two samples (nil when
// either lacks it; 0 when it went back, as a pooler restarted would).
func poolDelta(a, b map[string]float64, fig string) *float64 {
	x, okA := a[fig]
	y, okB := b[fig]
	if !okA || !okB {
		return nil
	}
	d := max(y-x, 0)
	return &d
}

func countDelta(a, b map[string]float64, fig string) *int64 {
	d := poolDelta(a, b, fig)
	if d == nil {
		return nil
	}
	n := int64(math.Round(*d))
	return &n
}
