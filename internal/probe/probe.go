// Package probe gathers server-side evidence beside each step of a sweep:
// per-process CPU, run-queue wait and context switches from /proc, hardware
// counters, wait events, lock-table snapshots, statement statistics and an
// optional CPU profile. Each probe is cheap by default, can be turned off,
// and reports what it cost.
package probe

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/probeopt"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/watch"
)

// Wait-event sources.
const (
	WaitSourceAuto         = probeopt.WaitSourceAuto         // pg_wait_sampling when usable, else pg_stat_activity
	WaitSourceWaitSampling = probeopt.WaitSourceWaitSampling // the extension's in-server profile
	WaitSourceStatActivity = probeopt.WaitSourceStatActivity // sampled from a connection of the probe's own
)

const (
	// probeApplicationName tags the probes' connections, so that they
	// leave each other out of what they observe.
	probeApplicationName = "pgscale probe"
	// probeMarker starts every probe statement, so that the statement
	// probe leaves them out of pg_stat_statements' figures.
	probeMarker              = "/* pgscale probe */ "
	defaultWaitHz            = probeopt.DefaultWaitHz
	defaultLockSnapshots     = probeopt.DefaultLockSnapshots
	defaultSnapshotEveryNoT  = 2 * time.Second // snapshots with -t (no planned duration)
	defaultProfileFrequency  = 99              // Hz: not a multiple of common timer ticks
	defaultStatementsTopSize = 10
	// captureLead is how long before the planned end of the window the
	// last snapshots are taken (at most a twentieth of the window), so
	// that they see the clients' backends before they disconnect.
	captureLead = 100 * time.Millisecond
)

// Config is what the probes need at run time: the user's choice of probes
// (Options), the server they watch, which each probe asks for what it
// needs (its connection, processes, build, Valgrind, upstreams, pooler),
// and how the load runs.
type Config struct {
	Options
	// Server is the server the probes watch: behind a pooler, the server
	// it fronts (target.Server.Watch).
	Server watch.Server
	// ConnectPerTransaction (-C) makes backends come and go, which
	// pg_wait_sampling's per-pid profile cannot attribute: the wait probe
	// then samples pg_stat_activity.
	ConnectPerTransaction bool
	// Log receives one-line notices (a probe unavailable).
	Log func(string)
}

// conn is the watched server's connection config.
func (c Config) conn() *pgconn.Config { return c.Server.Conn() }

// poolerPID is the pooler accounted apart from the server: --pooler-pid's,
// else the target's own pooler's (0: none).
func (c Config) poolerPID() int {
	if c.PoolerPID != 0 {
		return c.PoolerPID
	}
	if pl := c.Server.Pooler(); pl != nil {
		return pl.PID()
	}
	return 0
}

// Callgrind reaches a process tree run under Valgrind's callgrind
// (internal/watch's).
type Callgrind = watch.Callgrind

// Upstream is one server behind a target (internal/watch's).
type Upstream = watch.Upstream

// DefaultConfig is every default probe (all but the profile) with its
// default settings.
func DefaultConfig() Config { return Config{Options: DefaultOptions()} }

// probe is one kind of evidence. begin takes the first snapshot at the
// start of the measured window; capture the last one at its end, while the
// clients' backends are still there; report turns them into the result
// after the step. All three are timed for the probe's cost.
type probe interface {
	name() string
	// begin may return a loop to run in its own goroutine until stop is
	// closed (at the end of the window).
	begin(ctx context.Context, st *stepState) (loop func(stop <-chan struct{}), err error)
	capture(ctx context.Context, st *stepState) error
	report(ctx context.Context, st *stepState, out *result.Probes) error
	// backends are the server pids of the probe's connections.
	backends() []int
	close()
}

// stepState is what the probes share within one step.
type stepState struct {
	info observe.StepInfo
	// window and end bound the probes' window: from the start of the
	// measured window to the last snapshot.
	window, end time.Time
	step        *result.Step
	failed      map[string]error // probes that failed in begin or capture
}

// Set runs the chosen probes beside every step. It is an observe.Watcher:
// Start at each step's start, Stop after it, the evidence written into the
// step's result.Probes.
type Set struct {
	cfg         Config
	probes      []probe
	proc        *procProbe // nil when off
	unavailable []result.ProbeUnavailable
	costs       map[string]*cost

	mu     sync.Mutex
	cur    *stepState
	done   chan struct{} // closed when the window's last snapshots are taken
	stopCh chan struct{} // closed by Stop
	endCh  chan struct{} // closed by End; nil once it is
}

// cost is the CPU a probe's own threads used in this process.
type cost struct {
	mu    sync.Mutex
	local time.Duration
}

func (c *cost) add(d time.Duration) {
	c.mu.Lock()
	c.local += d
	c.mu.Unlock()
}

func (c *cost) take() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.local
	c.local = 0
	return d
}

var _ observe.CompanionWatcher = (*Set)(nil)

// Companions is the one P the probes' goroutines share during a step
// (observe.CompanionWatcher): their samples and snapshots are taken at
// their own times, not when a client happens to yield. Without it, at one
// client of SELECT pg_sleep(0.01) on raw I/O, every pg_stat_activity
// sample ran in the client's gap between two transactions and found its
// backend idle: 37 of 37 samples said Client:ClientRead for a backend
// asleep 98 % of the time.
func (s *Set) Companions() int {
	if len(s.probes) == 0 {
		return 0
	}
	return 1
}

// New prepares the probes: connects, checks which extensions are there
// (creating them on an ephemeral cluster), finds the server's processes.
// A probe that cannot run is reported in every step's Unavailable with the
// reason rather than failing the run. Close releases the connections.
func New(ctx context.Context, cfg Config) (*Set, error) {
	if cfg.Server == nil || cfg.Server.Conn() == nil {
		return nil, errors.New("probe: no server to watch")
	}
	cfg.Options = cfg.Options.WithDefaults()
	s := &Set{cfg: cfg, costs: map[string]*cost{}}
	for _, d := range defs {
		if !cfg.On(d.id.Name) {
			continue
		}
		p, err := d.open(ctx, cfg, s)
		if err != nil {
			s.unavailable = append(s.unavailable, result.ProbeUnavailable{Probe: d.id.Name, Reason: err.Error()})
			if cfg.Log != nil {
				cfg.Log(fmt.Sprintf("probe %s unavailable: %v", d.id.Name, err))
			}
			continue
		}
		if p == nil {
			continue // nothing for it to watch on this target
		}
		s.probes = append(s.probes, p)
		s.costs[d.id.Name] = &cost{}
	}
	if s.proc != nil {
		s.proc.probePIDs = s.probeBackends
	}
	return s, nil
}

// Unavailable lists the probes asked for that cannot run, and why.
func (s *Set) Unavailable() []result.ProbeUnavailable { return s.unavailable }

// probeBackends maps each probe connection's backend pid to its probe.
func (s *Set) probeBackends() map[int]string {
	m := map[int]string{}
	for _, p := range s.probes {
		for _, pid := range p.backends() {
			m[pid] = p.name()
		}
	}
	return m
}

// Close releases the probes' connections and counters.
func (s *Set) Close() {
	for _, p := range s.probes {
		p.close()
	}
}

// Start begins watching a step: at the start of its measured window the
// probes take their first snapshots and sample in the background; at its
// planned end, or at End in a step without one (or when Stop comes first),
// they take their last ones.
func (s *Set) Start(ctx context.Context, info observe.StepInfo) error {
	st := &stepState{info: info, failed: map[string]error{}}
	done, stopCh, endCh := make(chan struct{}), make(chan struct{}), make(chan struct{})
	s.mu.Lock()
	s.cur, s.done, s.stopCh, s.endCh = st, done, stopCh, endCh
	s.mu.Unlock()
	go s.watch(context.WithoutCancel(ctx), st, done, stopCh, endCh)
	return nil
}

var _ observe.EndWatcher = (*Set)(nil)

// End takes the step's last snapshots now, with the clients still
// connected, and returns once they are taken (observe.EndWatcher). A step
// run for a number of transactions has no planned end, and its last
// snapshots were taken at Stop, after the clients had gone: a counted
// step of 50 transactions (0.1 s) named no client backend in its server
// line, its backend "exited during the step". Only the first call of a
// step acts (a counted step's end edge calls it, then the engine).
func (s *Set) End(context.Context, observe.StepInfo) {
	s.mu.Lock()
	endCh, done := s.endCh, s.done
	s.endCh = nil
	s.mu.Unlock()
	if endCh == nil {
		return
	}
	close(endCh)
	<-done
}

// watch is one step's timeline: wait for the window, begin, wait for its
// end, capture.
func (s *Set) watch(ctx context.Context, st *stepState, done chan<- struct{}, stopCh, endCh <-chan struct{}) {
	defer close(done)
	wait := func(at time.Time) bool { // false: Stop or End came first
		d := time.Until(at)
		if d <= 0 {
			select {
			case <-stopCh:
				return false
			case <-endCh:
				return false
			default:
				return true
			}
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-stopCh:
			return false
		case <-endCh:
			return false
		}
	}
	if !wait(st.info.Window) {
		return
	}
	st.window = time.Now()
	loopStop := make(chan struct{})
	var loops sync.WaitGroup
	for _, p := range s.probes {
		c := s.costs[p.name()]
		var loop func(<-chan struct{})
		err := timed(c, func() error {
			var err error
			loop, err = p.begin(ctx, st)
			return err
		})
		if err != nil {
			st.failed[p.name()] = err
			continue
		}
		if loop != nil {
			loops.Add(1)
			go func() {
				defer loops.Done()
				timed(c, func() error { loop(loopStop); return nil })
			}()
		}
	}
	if st.info.Duration > 0 {
		// A little before the planned end, so that the last snapshots see
		// the clients' backends before they disconnect.
		lead := min(captureLead, st.info.Duration/20)
		wait(st.info.Window.Add(st.info.Duration - lead))
	} else {
		select {
		case <-stopCh:
		case <-endCh:
		}
	}
	close(loopStop)
	loops.Wait()
	st.end = time.Now()
	for _, p := range s.probes {
		if st.failed[p.name()] != nil {
			continue
		}
		if err := timed(s.costs[p.name()], func() error { return p.capture(ctx, st) }); err != nil {
			st.failed[p.name()] = err
		}
	}
}

// Stop waits for the step's last snapshots and writes what the probes saw
// into step.Probes. A probe that failed during the step is listed as
// unavailable for that step; the run goes on.
func (s *Set) Stop(ctx context.Context, step *result.Step) error {
	s.mu.Lock()
	st, done, stopCh := s.cur, s.done, s.stopCh
	s.cur, s.endCh = nil, nil
	s.mu.Unlock()
	if st == nil {
		return nil
	}
	close(stopCh)
	<-done
	out := &result.Probes{Unavailable: append([]result.ProbeUnavailable(nil), s.unavailable...)}
	step.Probes = out
	if st.window.IsZero() {
		out.Unavailable = append(out.Unavailable, result.ProbeUnavailable{Probe: "all", Reason: "the step ended before its measured window began"})
		return nil
	}
	st.step = step
	out.ElapsedS = st.end.Sub(st.window).Seconds()
	for _, p := range s.probes {
		err := st.failed[p.name()]
		if err == nil {
			err = p.report(ctx, st, out) // after the window: not part of the cost
		}
		if err != nil {
			out.Unavailable = append(out.Unavailable, result.ProbeUnavailable{Probe: p.name(), Reason: err.Error()})
		}
	}
	if s.proc != nil && s.proc.restarted[0] != 0 && len(step.Outages) > 0 {
		// The clients' last outage is when the server restarted.
		o := &step.Outages[len(step.Outages)-1]
		o.PostmasterBefore, o.PostmasterAfter = s.proc.restarted[0], s.proc.restarted[1]
	}
	var serverCPU map[string]float64
	serverKnown := false
	if s.proc != nil && out.Process() != nil && out.Process().Server != nil {
		serverCPU, serverKnown = s.proc.lastProbeCPU, true
	}
	for _, p := range s.probes {
		d := s.costs[p.name()].take()
		pc := result.ProbeCost{Probe: p.name(), LocalCPUS: d.Seconds(), InProcessS: d.Seconds(), ServerKnown: serverKnown}
		if q, ok := p.(interface{ queries() int64 }); ok {
			pc.Queries = q.queries()
		}
		if serverKnown {
			pc.ServerCPUS = serverCPU[p.name()]
		}
		if pp, ok := p.(*profileProbe); ok {
			pc.LocalCPUS += pp.lastPerfCPU.Seconds() // perf record, a process of its own
		}
		if wp, ok := p.(*waitProbe); ok && wp.usesServer() && serverKnown {
			pc.ServerCPUS += s.proc.lastCollectorCPU // pg_wait_sampling's collector
		}
		out.Costs = append(out.Costs, pc)
	}
	return nil
}
