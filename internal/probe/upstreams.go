package probe

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/result"
)

func init() { register(upstreamsDef) }

var upstreamsDef = def{
	id: probeid.Upstreams, on: true, flag: "no-upstreams",
	evidence: "each server behind the target when there are several (shards, replicas): its share of the work, replicas' lag",
	open: func(ctx context.Context, cfg Config, _ *Set) (probe, error) {
		ups := cfg.Server.Upstreams()
		if len(ups) < 2 {
			return nil, nil // nothing to split
		}
		return newUpstreamsProbe(ctx, ups, cfg.Server.Ephemeral())
	},
}

// upstreamsProbe reads, at the start and the end of each step, every
// upstream's transactions (pg_stat_database) and statements
// (pg_stat_statements), and its WAL position: written on a primary,
// replayed on a replica.
type upstreamsProbe struct {
	ups         []Upstream
	conns       []*sqlConn
	statements  []bool // pg_stat_statements is there
	first, last []upSample
	replayLag   []float64 // a primary's largest replay_lag at the end, ms; -1 unknown
}

// upSample is one upstream at one moment.
type upSample struct {
	ok         bool
	xacts      int64
	statements int64  // -1 when pg_stat_statements could not be read
	lsn        uint64 // current (primary) or replayed (replica) WAL position
}

// newUpstreamsProbe connects to every upstream; on ephemeral ones it
// creates pg_stat_statements where it is preloaded (a replica gets it from
// its primary, once replayed).
func newUpstreamsProbe(ctx context.Context, ups []Upstream, ephemeral bool) (*upstreamsProbe, error) {
	p := &upstreamsProbe{ups: ups}
	for _, u := range ups {
		c, err := newSQLConn(ctx, u.Conn)
		if err != nil {
			p.close()
			return nil, fmt.Errorf("upstream %s: %w", u.Name, err)
		}
		p.conns = append(p.conns, c)
		if u.Role == "primary" {
			_ = c.hasExtension(ctx, "pg_stat_statements", ephemeral, true)
		}
	}
	for i, c := range p.conns {
		ok := false
		// On a replica, the view made on its primary may not be replayed
		// yet (undefined_table): waited for up to replayWait, as a loaded
		// machine replays late. Any other error (not preloaded) is final.
		for end := time.Now().Add(replayWait); ; time.Sleep(100 * time.Millisecond) {
			_, err := c.value(ctx, "SELECT 1 FROM pg_stat_statements LIMIT 1")
			var pgErr *pgconn.PgError
			if err == nil {
				ok = true
			} else if p.ups[i].Role == "replica" && errors.As(err, &pgErr) && pgErr.Code == "42P01" && time.Now().Before(end) {
				continue
			}
			break
		}
		p.statements = append(p.statements, ok)
	}
	return p, nil
}

// replayWait is how long a replica is given to replay pg_stat_statements
// made on its primary (it was 2 s).
const replayWait = 15 * time.Second

func (p *upstreamsProbe) name() string { return probeid.Upstreams.Name }

func (p *upstreamsProbe) backends() []int { return nil } // on other servers, or not the clients'

func (p *upstreamsProbe) close() {
	for _, c := range p.conns {
		c.close()
	}
}

func (p *upstreamsProbe) begin(ctx context.Context, _ *stepState) (func(<-chan struct{}), error) {
	p.first = p.sample(ctx)
	return nil, nil
}

func (p *upstreamsProbe) capture(ctx context.Context, _ *stepState) error {
	p.last = p.sample(ctx)
	p.replayLag = make([]float64, len(p.ups))
	for i, u := range p.ups {
		p.replayLag[i] = -1
		if u.Role != "primary" {
			continue
		}
		v, err := p.conns[i].value(ctx, "SELECT coalesce(max(extract(epoch FROM replay_lag)), 0)::text FROM pg_stat_replication")
		if n, perr := strconv.ParseFloat(v, 64); err == nil && perr == nil && p.hasReplicas(i) {
			p.replayLag[i] = n * 1000
		}
	}
	return nil
}

func (p *upstreamsProbe) hasReplicas(i int) bool {
	for _, u := range p.ups {
		if u.Primary == i {
			return true
		}
	}
	return false
}

// sample reads every upstream; one that cannot be read is not ok.
func (p *upstreamsProbe) sample(ctx context.Context) []upSample {
	out := make([]upSample, len(p.ups))
	for i, u := range p.ups {
		c := p.conns[i]
		var s upSample
		x, err := c.value(ctx, "SELECT (xact_commit + xact_rollback)::text FROM pg_stat_database WHERE datname = current_database()")
		if err != nil {
			out[i] = s
			continue
		}
		s.xacts, _ = strconv.ParseInt(x, 10, 64)
		if p.statements[i] {
			// A read that failed is no count, not a count of zero: taken
			// as 0 at the end of a step, it said the upstream got no
			// statement at all (share 0.00).
			s.statements = -1
			v, err := c.value(ctx, "SELECT coalesce(sum(calls), 0)::text FROM pg_stat_statements WHERE query NOT LIKE $1",
				"%"+strings.TrimSpace(probeMarker)+"%")
			if n, perr := strconv.ParseInt(v, 10, 64); err == nil && perr == nil {
				s.statements = n
			}
		}
		fn := "pg_current_wal_lsn()"
		if u.Role == "replica" {
			fn = "pg_last_wal_replay_lsn()"
		}
		if v, err := c.value(ctx, "SELECT coalesce("+fn+"::text, '0/0')"); err == nil {
			s.lsn = parseLSN(v)
		}
		s.ok = true
		out[i] = s
	}
	return out
}

// parseLSN reads a WAL position written as "16/B374D848".
func parseLSN(s string) uint64 {
	hi, lo, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return 0
	}
	h, err1 := strconv.ParseUint(hi, 16, 32)
	l, err2 := strconv.ParseUint(lo, 16, 32)
	if err1 != nil || err2 != nil {
		return 0
	}
	return h<<32 | l
}

func (p *upstreamsProbe) report(_ context.Context, _ *stepState, out *result.Probes) error {
	if len(p.first) != len(p.ups) || len(p.last) != len(p.ups) {
		return fmt.Errorf("missing a sample")
	}
	u := &result.Upstreams{}
	var totalX, totalS int64
	allStatements := true
	for i, up := range p.ups {
		a, b := p.first[i], p.last[i]
		st := result.UpstreamStat{Name: up.Name, Role: up.Role, Host: fmt.Sprintf("%s:%d", up.Conn.Host, up.Conn.Port)}
		if a.ok && b.ok {
			// Each sample's first query is a transaction of the probe's own.
			st.Transactions = max(b.xacts-a.xacts-countedQueries(p.statements[i]), 0)
			if p.statements[i] && a.statements >= 0 && b.statements >= 0 {
				n := max(b.statements-a.statements, 0)
				st.Statements = &n
			}
		}
		if st.Statements == nil {
			allStatements = false
		}
		if up.Role == "replica" && up.Primary >= 0 && a.ok && b.ok {
			pa, pb := p.first[up.Primary], p.last[up.Primary]
			lag := max(lagOf(pa.lsn, a.lsn), lagOf(pb.lsn, b.lsn))
			st.LagBytes = &lag
		}
		if i < len(p.replayLag) && p.replayLag[i] >= 0 {
			ms := p.replayLag[i]
			st.ReplayLagMs = &ms
		}
		totalX += st.Transactions
		if st.Statements != nil {
			totalS += *st.Statements
		}
		u.Servers = append(u.Servers, st)
	}
	for i := range u.Servers {
		s := &u.Servers[i]
		switch {
		case allStatements && totalS > 0:
			s.Share = float64(*s.Statements) / float64(totalS)
		case totalX > 0:
			s.Share = float64(s.Transactions) / float64(totalX)
		}
	}
	out.SetUpstreams(u)
	return nil
}

// countedQueries is how many of a sample's own queries pg_stat_database
// counts as transactions between two samples: the queries of one sample
// (each its own transaction), as the end sample's are not yet flushed
// when it reads while the start's are.
func countedQueries(statements bool) int64 {
	n := int64(2) // transactions, and the WAL position
	if statements {
		n++
	}
	return n
}

// lagOf is how far a replica's replayed position is behind its primary's
// written one.
func lagOf(primary, replica uint64) int64 {
	if primary == 0 || replica == 0 || replica >= primary {
		return 0
	}
	return int64(primary - replica)
}
