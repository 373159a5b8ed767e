package probe

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/spf13/pflag"

	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/result"
)

// waitProbe profiles the wait events of the client backends. With the
// pg_wait_sampling extension it resets the in-server profile at the start
// of the window and reads it at the end: the server samples every backend
// every 10 ms at almost no cost. Otherwise it samples pg_stat_activity from
// its own connection, 20 times a second by default.
type waitProbe struct {
	source   string
	note     string // why the fallback, when it is one
	conn     *sqlConn
	hz       float64
	periodMs float64

	// prepared is the connection the pg_stat_activity sample is prepared
	// on: once per connection, as a second Prepare of the name fails
	// (SQLSTATE 42P05), and again after a reconnect.
	prepared *pgconn.PgConn

	// pg_stat_activity sampling, per step
	counts  map[[2]string]int64
	cpu     int64
	idle    int64
	loopErr error
	paused  time.Duration // sampling stopped while the server was away
	// pg_wait_sampling, per step: backends seen in pg_stat_activity
	snaps   []map[int]backendInfo
	profile map[int]map[[2]string]int64
}

type backendInfo struct {
	kind  string // backend_type
	probe bool
}

const (
	sqlActivitySample = `SELECT coalesce(wait_event_type, ''), coalesce(wait_event, ''), state = 'idle', count(*)
		FROM pg_stat_activity
		WHERE backend_type = 'client backend' AND application_name IS DISTINCT FROM 'pgscale probe' AND state IS NOT NULL
		GROUP BY 1, 2, 3`
	sqlBackends       = `SELECT pid, coalesce(backend_type, ''), application_name = 'pgscale probe' FROM pg_stat_activity`
	sqlProfile        = `SELECT pid, coalesce(event_type, ''), coalesce(event, ''), sum(count) FROM pg_wait_sampling_profile GROUP BY 1, 2, 3`
	activityStatement = "pgscale_wait_sample"
)

func newWaitProbe(ctx context.Context, cfg Config) (*waitProbe, error) {
	c, err := newSQLConn(ctx, cfg.conn())
	if err != nil {
		return nil, err
	}
	p := &waitProbe{conn: c, hz: cfg.WaitHz}
	switch cfg.WaitSource {
	case WaitSourceStatActivity:
		p.source = WaitSourceStatActivity
	case WaitSourceWaitSampling, WaitSourceAuto:
		err := p.useWaitSampling(ctx, cfg)
		switch {
		case err == nil:
			p.source = WaitSourceWaitSampling
		case cfg.WaitSource == WaitSourceWaitSampling:
			c.close()
			return nil, err
		default:
			p.source = WaitSourceStatActivity
			p.note = "pg_wait_sampling not used: " + err.Error()
		}
	default:
		c.close()
		return nil, fmt.Errorf("unknown wait-event source %q (want auto, pg_wait_sampling or pg_stat_activity)", cfg.WaitSource)
	}
	if p.source == WaitSourceStatActivity {
		p.periodMs = 1000 / p.hz
	}
	return p, nil
}

func (p *waitProbe) useWaitSampling(ctx context.Context, cfg Config) error {
	if cfg.ConnectPerTransaction {
		return errors.New("its per-backend profile cannot attribute backends that live for one transaction (-C)")
	}
	if err := p.conn.hasExtension(ctx, "pg_wait_sampling", cfg.Server.Ephemeral(), true); err != nil {
		return err
	}
	rows, err := p.conn.query(ctx, `SELECT current_setting('pg_wait_sampling.profile_pid'), current_setting('pg_wait_sampling.profile_period')`)
	if err != nil {
		return err
	}
	if string(rows[0][0]) != "on" {
		return errors.New("pg_wait_sampling.profile_pid is off, so samples cannot be told apart by backend")
	}
	p.periodMs = atof(rows[0][1])
	return nil
}

func (p *waitProbe) name() string     { return probeid.Waits.Name }
func (p *waitProbe) backends() []int  { return p.conn.backends() }
func (p *waitProbe) queries() int64   { return p.conn.queries() }
func (p *waitProbe) close()           { p.conn.close() }
func (p *waitProbe) usesServer() bool { return p.source == WaitSourceWaitSampling }

func (p *waitProbe) begin(ctx context.Context, st *stepState) (func(<-chan struct{}), error) {
	p.counts, p.cpu, p.idle, p.loopErr, p.snaps, p.paused = map[[2]string]int64{}, 0, 0, nil, nil, 0
	if p.source == WaitSourceWaitSampling {
		if _, err := p.conn.query(ctx, "SELECT pg_wait_sampling_reset_profile()"); err != nil {
			return nil, err
		}
		times := snapshotTimes(st.window, st.info.Duration, []float64{0.1, 0.5, 0.9}, time.Second)
		return func(stop <-chan struct{}) {
			every(ctx, times, stop, func() error {
				m, err := p.backendList(ctx)
				if err == nil {
					p.snaps = append(p.snaps, m)
				}
				return err
			}, &p.loopErr)
		}, nil
	}
	if err := p.ready(ctx); err != nil {
		return nil, err
	}
	period := time.Duration(float64(time.Second) / p.hz)
	return func(stop <-chan struct{}) {
		t := time.NewTicker(period)
		defer t.Stop()
		var lostAt time.Time // when the server dropped the connection, until it is made again
		for {
			select {
			case <-stop:
				if !lostAt.IsZero() {
					p.paused += time.Since(lostAt)
				}
				return
			case <-t.C:
			}
			if !lostAt.IsZero() {
				// The server went away (a restart): sample again once it
				// is back, on a new connection.
				if p.ready(ctx) != nil {
					continue
				}
				p.paused += time.Since(lostAt)
				lostAt = time.Time{}
			}
			if err := p.sampleActivity(ctx); err != nil {
				if p.conn.lost() {
					lostAt = time.Now()
					continue
				}
				p.loopErr = err
				return
			}
		}
	}, nil
}

// ready connects (again, after the server dropped the connection) and
// prepares the pg_stat_activity sample on the connection.
func (p *waitProbe) ready(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := p.conn.ensure(cctx); err != nil {
		return err
	}
	if p.prepared != p.conn.conn {
		if _, err := p.conn.conn.Prepare(cctx, activityStatement, probeMarker+sqlActivitySample, nil); err != nil {
			return fmt.Errorf("prepare the pg_stat_activity sample: %w", err)
		}
		p.prepared = p.conn.conn
	}
	return nil
}

// sampleActivity takes one pg_stat_activity sample.
func (p *waitProbe) sampleActivity(ctx context.Context) error {
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	p.conn.n.Add(1)
	res := p.conn.conn.ExecPrepared(qctx, activityStatement, nil, nil, nil).Read()
	if res.Err != nil {
		return res.Err
	}
	for _, r := range res.Rows {
		n := atoi64(r[3])
		switch {
		case string(r[2]) == "t":
			p.idle += n
		case len(r[0]) == 0:
			p.cpu += n
		default:
			p.counts[[2]string{string(r[0]), string(r[1])}] += n
		}
	}
	return nil
}

func (p *waitProbe) backendList(ctx context.Context) (map[int]backendInfo, error) {
	rows, err := p.conn.query(ctx, sqlBackends)
	if err != nil {
		return nil, err
	}
	m := make(map[int]backendInfo, len(rows))
	for _, r := range rows {
		m[int(atoi64(r[0]))] = backendInfo{kind: string(r[1]), probe: string(r[2]) == "t"}
	}
	return m, nil
}

func (p *waitProbe) capture(ctx context.Context, _ *stepState) error {
	if p.source != WaitSourceWaitSampling {
		return nil
	}
	rows, err := p.conn.query(ctx, sqlProfile)
	if err != nil {
		return fmt.Errorf("read pg_wait_sampling_profile: %w", err)
	}
	p.profile = map[int]map[[2]string]int64{}
	for _, r := range rows {
		pid := int(atoi64(r[0]))
		if p.profile[pid] == nil {
			p.profile[pid] = map[[2]string]int64{}
		}
		p.profile[pid][[2]string{string(r[1]), string(r[2])}] += atoi64(r[3])
	}
	return nil
}

func (p *waitProbe) report(_ context.Context, _ *stepState, out *result.Probes) error {
	w := &result.Waits{Source: p.source, PeriodMs: p.periodMs, Note: p.note}
	if p.source == WaitSourceStatActivity {
		if p.loopErr != nil {
			return fmt.Errorf("pg_stat_activity sampling stopped: %w", p.loopErr)
		}
		w.CPUSamples, w.IdleSamples = p.cpu, p.idle
		w.PausedS = p.paused.Seconds()
		w.Events = sortedEvents(p.counts)
		w.Samples = w.CPUSamples + sumEvents(w.Events)
		out.SetWaits(w)
		return nil
	}
	if p.loopErr != nil && len(p.snaps) == 0 {
		return fmt.Errorf("listing backends: %w", p.loopErr)
	}
	attributeWaitSampling(w, p.profile, p.snaps)
	p.profile = nil
	out.SetWaits(w)
	return nil
}

// attributeWaitSampling turns pg_wait_sampling's per-pid profile into the
// client backends' profile. pg_wait_sampling 1.1 records nothing for a
// backend that has no wait event, so on-CPU samples are derived: the
// collector's rounds (the most samples any process has, reached by
// processes that always wait, like the checkpointer) minus the backend's
// wait samples, for backends present from the first to the last
// pg_stat_activity snapshot of the step.
func attributeWaitSampling(w *result.Waits, profile map[int]map[[2]string]int64, snaps []map[int]backendInfo) {
	var rounds int64
	for _, ev := range profile {
		var n int64
		for _, c := range ev {
			n += c
		}
		rounds = max(rounds, n)
	}
	client, background := map[[2]string]int64{}, map[[2]string]int64{}
	churned := 0
	for pid, ev := range profile {
		info, seen := backendInfo{}, false
		for _, s := range snaps {
			if b, ok := s[pid]; ok {
				info, seen = b, true
			}
		}
		if info.probe {
			continue
		}
		isClient := info.kind == "client backend"
		if !seen {
			for k := range ev {
				if k[0] == "Client" {
					isClient = true
				}
			}
		}
		into := background
		if isClient {
			into = client
		}
		var n int64
		for k, c := range ev {
			into[k] += c
			n += c
		}
		if !isClient {
			continue
		}
		stable := len(snaps) > 0
		if stable {
			_, inFirst := snaps[0][pid]
			_, inLast := snaps[len(snaps)-1][pid]
			stable = inFirst && inLast
		}
		if stable {
			w.CPUSamples += max(rounds-n, 0)
		} else {
			churned++
		}
	}
	// Client backends that never waited are in no profile row.
	if len(snaps) > 0 {
		for pid, b := range snaps[0] {
			if _, ok := profile[pid]; !ok && !b.probe && b.kind == "client backend" {
				if _, inLast := snaps[len(snaps)-1][pid]; inLast {
					w.CPUSamples += rounds
				}
			}
		}
	}
	w.Events = sortedEvents(client)
	w.Background = sortedEvents(background)
	w.Samples = w.CPUSamples + sumEvents(w.Events)
	notes := []string{fmt.Sprintf("on-CPU samples derived from %d collector rounds minus each backend's wait samples", rounds)}
	if churned > 0 {
		notes = append(notes, fmt.Sprintf("%d backends came or went during the step: their waits are counted, their time on CPU is not", churned))
	}
	w.Note = strings.Join(notes, "; ")
}

func sortedEvents(m map[[2]string]int64) []result.WaitEvent {
	var out []result.WaitEvent
	for k, n := range m {
		if n > 0 {
			out = append(out, result.WaitEvent{Type: k[0], Event: k[1], Samples: n})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Samples != out[j].Samples {
			return out[i].Samples > out[j].Samples
		}
		return out[i].Type+out[i].Event < out[j].Type+out[j].Event
	})
	return out
}

func sumEvents(evs []result.WaitEvent) int64 {
	var n int64
	for _, e := range evs {
		n += e.Samples
	}
	return n
}

// snapshotTimes spreads snapshots over the planned window at the given
// fractions of it; with no planned length (-t) it takes one every
// fallback, up to an hour.
func snapshotTimes(window time.Time, d time.Duration, fractions []float64, fallback time.Duration) []time.Time {
	var out []time.Time
	if d > 0 {
		for _, f := range fractions {
			out = append(out, window.Add(time.Duration(f*float64(d))))
		}
		return out
	}
	for t := fallback; t <= time.Hour; t += fallback {
		out = append(out, window.Add(t))
	}
	return out
}

// every calls f at each time until stop is closed; the first error ends
// the loop and is kept in *errp.
func every(ctx context.Context, times []time.Time, stop <-chan struct{}, f func() error, errp *error) {
	for _, at := range times {
		t := time.NewTimer(time.Until(at))
		select {
		case <-stop:
			t.Stop()
			return
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if err := f(); err != nil {
			*errp = err
			return
		}
	}
}

func init() { register(waitsDef) }

var waitsDef = def{
	id: probeid.Waits, on: true, flag: "no-waits", evidence: "wait-event sampling",
	flags: func(fs *pflag.FlagSet, o *Options) {
		fs.StringVar(&o.WaitSource, "wait-source", WaitSourceAuto, "wait events from pg_wait_sampling, pg_stat_activity, or auto (the first when installed)")
		fs.Float64Var(&o.WaitHz, "wait-hz", defaultWaitHz, "pg_stat_activity samples per second when that is the wait-event source")
	},
	open: func(ctx context.Context, cfg Config, _ *Set) (probe, error) {
		p, err := newWaitProbe(ctx, cfg)
		if err != nil {
			return nil, err
		}
		return p, nil
	},
}
