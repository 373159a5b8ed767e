package probe

import (
	"context"
	"fmt"
	"math/bits"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/result"
)

// lockProbe takes a few pg_locks snapshots per step. Reading pg_locks takes
// every lock-manager partition lock, so it is never done often. It shows
// how many weak relation locks each backend holds outside its fast-path
// slots (fast-path exhaustion) and which locks are waited for.
type lockProbe struct {
	conn *sqlConn
	n    int
	// slots is the fast-path slot count per backend, and from where it
	// came (result.Locks.FastPathSlotsFrom): the build, else the version,
	// raised to what was observed when a backend held more.
	slots int
	from  string

	// per step
	snaps   int
	holders int
	maxSlow int
	sumSlow int
	nSlow   int // backend snapshots holding any lock, for the mean
	maxFast int
	// overflow counts, by the fast-path locks held, the backend snapshots
	// that also held weak relation locks in the shared lock table:
	// exhausted once the slot count is known.
	overflow map[int]int
	waiting  map[[2]string]int
	loopErr  error
}

// sqlLocks reads, per client backend, its weak relation locks outside the
// fast path and its fast-path relation locks; then the ungranted locks.
const sqlLocks = `SELECT l.pid,
		count(*) FILTER (WHERE l.locktype = 'relation' AND NOT l.fastpath AND l.granted
			AND l.mode IN ('AccessShareLock', 'RowShareLock', 'RowExclusiveLock')),
		count(*) FILTER (WHERE l.locktype = 'relation' AND l.fastpath),
		0, '', ''
	FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
	WHERE a.backend_type = 'client backend' AND a.application_name IS DISTINCT FROM 'pgscale probe'
	GROUP BY l.pid
	UNION ALL
	SELECT 0, 0, 0, count(*), locktype, mode FROM pg_locks WHERE NOT granted GROUP BY locktype, mode`

func newLockProbe(ctx context.Context, cfg Config) (*lockProbe, error) {
	c, err := newSQLConn(ctx, cfg.conn())
	if err != nil {
		return nil, err
	}
	rows, err := c.query(ctx, "SELECT current_setting('server_version_num'), current_setting('max_locks_per_transaction')")
	if err != nil {
		c.close()
		return nil, err
	}
	ver, _ := strconv.Atoi(string(rows[0][0]))
	mlpt, _ := strconv.Atoi(string(rows[0][1]))
	p := &lockProbe{conn: c, n: cfg.LockSnapshots, slots: FastPathSlots(ver, mlpt), from: SlotsFromVersion}
	// What the build says of the server, not what its version implies.
	if n, ok := cfg.Server.BuildConstant("FP_LOCK_SLOTS_PER_BACKEND"); ok && n > 0 {
		p.slots, p.from = n, SlotsFromBuild
	}
	return p, nil
}

// Where the lock probe's fast-path slot count came from
// (result.Locks.FastPathSlotsFrom).
const (
	SlotsFromBuild    = "build"    // the build's FP_LOCK_SLOTS_PER_BACKEND (Config.FastPathSlots)
	SlotsFromVersion  = "version"  // PostgreSQL's own for the server's version
	SlotsFromObserved = "observed" // a backend held more than the version allows: the most seen
)

// FastPathSlots is the number of fast-path relation lock slots a backend
// has: 16 before PostgreSQL 18; from 18 on, groups of 16, as many groups as
// max_locks_per_transaction / 16 rounded up to a power of two, at most 1024.
func FastPathSlots(serverVersionNum, maxLocksPerTransaction int) int {
	if serverVersionNum < 180000 {
		return 16
	}
	groups := 1
	if want := maxLocksPerTransaction / 16; want > 1 {
		groups = 1 << bits.Len(uint(want-1))
	}
	return 16 * min(groups, 1024)
}

func (p *lockProbe) name() string    { return probeid.Locks.Name }
func (p *lockProbe) backends() []int { return p.conn.backends() }
func (p *lockProbe) queries() int64  { return p.conn.queries() }
func (p *lockProbe) close()          { p.conn.close() }

func (p *lockProbe) begin(ctx context.Context, st *stepState) (func(<-chan struct{}), error) {
	p.snaps, p.holders, p.maxSlow, p.sumSlow, p.nSlow, p.maxFast = 0, 0, 0, 0, 0, 0
	p.overflow, p.waiting, p.loopErr = map[int]int{}, map[[2]string]int{}, nil
	if err := p.conn.ensure(ctx); err != nil {
		return nil, err
	}
	fr := make([]float64, p.n)
	for i := range fr {
		fr[i] = float64(i+1) / float64(p.n+1)
	}
	times := snapshotTimes(st.window, st.info.Duration, fr, defaultSnapshotEveryNoT)
	return func(stop <-chan struct{}) {
		every(ctx, times, stop, func() error { return p.snapshot(ctx) }, &p.loopErr)
	}, nil
}

// emptyRereads is how many times a snapshot that finds no client backend
// holding a lock reads pg_locks again, emptyPause apart, before it counts
// as empty: a backend between two short transactions holds nothing, and
// with 20 % of its time in a transaction (32 partitions' count(*) on a
// loaded machine) the 8 snapshots of two 2 s steps missed every lock one
// time in six. Once any lock is held the first read counts.
const (
	emptyRereads = 5
	emptyPause   = 10 * time.Millisecond
)

func (p *lockProbe) snapshot(ctx context.Context) error {
	var rows [][][]byte
	for try := 0; ; try++ {
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		r, err := p.conn.query(qctx, sqlLocks)
		cancel()
		if err != nil {
			return err
		}
		rows = r
		if try == emptyRereads || slices.ContainsFunc(rows, func(r [][]byte) bool { return atoi64(r[0]) != 0 }) {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(emptyPause):
		}
	}
	p.snaps++
	holders := 0
	for _, r := range rows {
		if pid := atoi64(r[0]); pid != 0 {
			slow, fast := int(atoi64(r[1])), int(atoi64(r[2]))
			holders++
			p.maxSlow = max(p.maxSlow, slow)
			p.maxFast = max(p.maxFast, fast)
			p.sumSlow += slow
			p.nSlow++
			if slow > 0 {
				p.overflow[fast]++
			}
			continue
		}
		p.waiting[[2]string{string(r[4]), string(r[5])}] += int(atoi64(r[3]))
	}
	p.holders = max(p.holders, holders)
	return nil
}

func (p *lockProbe) capture(context.Context, *stepState) error { return nil }

func (p *lockProbe) report(_ context.Context, _ *stepState, out *result.Probes) error {
	if p.loopErr != nil && p.snaps == 0 {
		return fmt.Errorf("pg_locks snapshot: %w", p.loopErr)
	}
	// A backend never holds more fast-path locks than it has slots: more
	// than the version allows means a build with more, at least as many
	// as seen (the build's own figure, when known, is not second-guessed).
	if p.from != SlotsFromBuild && p.maxFast > p.slots {
		p.slots, p.from = p.maxFast, SlotsFromObserved
	}
	exhausted := 0
	for fast, n := range p.overflow {
		if fast >= p.slots {
			exhausted += n
		}
	}
	l := &result.Locks{Snapshots: p.snaps, Backends: p.holders, MaxSlowWeak: p.maxSlow, MaxFastPath: p.maxFast,
		FastPathSlots: p.slots, FastPathSlotsFrom: p.from, Exhausted: exhausted}
	if p.nSlow > 0 {
		l.MeanSlowWeak = float64(p.sumSlow) / float64(p.nSlow)
	}
	for k, n := range p.waiting {
		l.Waiting = append(l.Waiting, result.LockWait{LockType: k[0], Mode: k[1], Count: n})
	}
	sort.Slice(l.Waiting, func(i, j int) bool {
		a, b := l.Waiting[i], l.Waiting[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.LockType+a.Mode < b.LockType+b.Mode
	})
	out.SetLocks(l)
	return nil
}

func init() { register(locksDef) }

var locksDef = def{
	id: probeid.Locks, on: true, flag: "no-locks", evidence: "pg_locks snapshots",
	flags: func(fs *pflag.FlagSet, o *Options) {
		fs.IntVar(&o.LockSnapshots, "lock-snapshots", defaultLockSnapshots, "pg_locks snapshots per step")
	},
	open: func(ctx context.Context, cfg Config, _ *Set) (probe, error) {
		p, err := newLockProbe(ctx, cfg)
		if err != nil {
			return nil, err
		}
		return p, nil
	},
}
