// Package step runs one step of load — on one target, or on several in
// slices — with what watches it, and turns what the engine measured into
// the result file's step. It knows neither targets nor schedules: the
// rig gives it the engine's settings, the program and the watchers, and
// a schedule decides which steps run when.
package step

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pgscale/pgscale/internal/agent"
	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/engine"
	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/result"
)

// Config is one step of load on one target.
type Config struct {
	// Engine is the engine's run of the step, whole: its settings, the
	// connection, the program and the clients.
	Engine engine.Config
	// Info says which step it is, as its watchers are told: its index in
	// the sweep, the A/B round it is a turn of (0 for a sweep of its
	// own), its clients.
	Info observe.StepInfo
	// Watchers watch the step (probes, disturbances), in order; those
	// that run goroutines beside the clients get a P of their own each
	// (observe.CompanionWatcher), unless the agents run the clients.
	// HoldEdges holds the clients at the window's edges even when no
	// watcher acts there, so that a warm-up runs the same transactions as
	// a step whose edges are watched.
	Watchers  []observe.Watcher
	HoldEdges bool
	// Transactions, when set, receives every transaction as it ends.
	Transactions observe.TxnSink
	// Events, when set, is told how far the connection phase has come
	// (observe.Connecting, naming Target), once a second while it lasts
	// more than one.
	Events observe.Observer
	Target string
	// Agents, when set, runs the step's clients on the coordinator's
	// agents instead of in this process; AgentsTarget, when set, is the
	// target as they reach it (an A/B's targets take turns on one
	// coordinator).
	Agents       *agent.Coordinator
	AgentsTarget string
}

// ErrAborted is returned (wrapped) when clients of a step aborted on
// errors: the step, and so the run, is incomplete, as pgbench says its
// results are then.
var ErrAborted = errors.New("clients aborted")

// Run runs the step and returns it, nil when nothing ran; a step that
// could not complete comes back marked so, with the error. When ctx was
// stopped for a reason of the run's own (context.WithCancelCause: a
// pooler it started exited), that reason is the step's and the error.
// The step gets its disturbance windows' effect on the workload.
func Run(ctx context.Context, cfg Config) (*result.Step, error) {
	ecfg := cfg.Engine
	n := ecfg.Clients
	prog := ecfg.Program
	if cfg.Events != nil {
		events, name := cfg.Events, cfg.Target
		ecfg.ConnectProgress = connectReporter(func(e observe.Connecting) {
			e.Target = name
			events.Observe(e)
		})
	}
	if cfg.Agents == nil {
		ecfg.Companions += companions(cfg.Watchers)
	}
	var started []observe.Watcher
	var startErr error
	var info observe.StepInfo // as the watchers were told at the start
	connected := false
	ecfg.Quiesce = edges(ctx, cfg.Watchers, cfg.Info)
	if ecfg.Quiesce == nil && cfg.HoldEdges {
		ecfg.Quiesce = func(engine.Edge) error { return nil }
	}
	if sink := cfg.Transactions; sink != nil {
		ecfg.OnTxn = txnHook(sink)
	}
	if ecfg.Duration <= 0 && cfg.Agents == nil && endWatched(cfg.Watchers) {
		// No planned end: the watchers' last look is when the clients
		// have run their transactions, before they go.
		ecfg.AtEnd = func() {
			for _, o := range started {
				if e, ok := o.(observe.EndWatcher); ok {
					e.End(context.WithoutCancel(ctx), info)
				}
			}
		}
	}
	ecfg.OnStart = func(start, window time.Time) {
		connected = true
		if sink := cfg.Transactions; sink != nil {
			sink.StartStep(txnStep(prog, n, start))
		}
		info = cfg.Info
		info.Start, info.Window, info.Duration = start, window, ecfg.Duration
		for _, o := range cfg.Watchers {
			if err := o.Start(ctx, info); err != nil {
				startErr = err
				return
			}
			started = append(started, o)
		}
	}
	var r *engine.Result
	var err error
	if cfg.Agents != nil {
		if cfg.AgentsTarget != "" {
			cfg.Agents.Retarget(cfg.AgentsTarget)
		}
		r, err = cfg.Agents.Step(ctx, ecfg)
	} else {
		r, err = engine.Run(ctx, ecfg)
	}
	if err == nil && startErr != nil {
		err = startErr
	}
	if r == nil || (r.Elapsed <= 0 && err == nil) {
		return nil, err
	}
	s := Result(r, prog.Scripts())
	if err == nil && s.Summary.Aborted > 0 {
		err = fmt.Errorf("%w: %d of %d clients stopped on errors: %s", ErrAborted, s.Summary.Aborted, n, firstError(s.Errors))
	}
	if err != nil && s.Complete {
		s.Complete, s.Reason = false, err.Error()
	}
	if cause := Cause(ctx); err != nil && cause != nil {
		// The step was stopped for a reason of the run's own (a pooler it
		// started exited): that is the step's reason.
		err = cause
		s.Complete, s.Reason = false, cause.Error()
		if !connected {
			s.Reason += ", before every client had connected"
		}
	}
	for _, o := range started {
		if oerr := o.Stop(context.WithoutCancel(ctx), &s); oerr != nil && err == nil {
			err = oerr
		}
	}
	diagnose.DisturbanceEffects(&s, diagnose.EffectOptions{})
	return &s, err
}

// Cause is why ctx was cancelled when that was not an interrupt: the
// cause given to context.WithCancelCause, or nil.
func Cause(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
		return cause
	}
	return nil
}

// Fail marks s, a step that ended on err, incomplete: the reason is ctx's
// cause (Cause) when it has one, else err's.
func Fail(ctx context.Context, s *result.Step, err error) {
	if err == nil {
		return
	}
	if s.Complete {
		s.Complete, s.Reason = false, err.Error()
	}
	if cause := Cause(ctx); cause != nil {
		s.Complete, s.Reason = false, cause.Error()
	}
}

// edges is the engine's Quiesce for a step whose watchers act at its
// window's edges (observe.EdgeWatcher), nil when none does.
func edges(ctx context.Context, watchers []observe.Watcher, info observe.StepInfo) func(engine.Edge) error {
	var ws []observe.EdgeWatcher
	for _, w := range watchers {
		if e, ok := w.(observe.EdgeWatcher); ok && e.Edges() {
			ws = append(ws, e)
		}
	}
	if len(ws) == 0 {
		return nil
	}
	return func(edge engine.Edge) error {
		for _, w := range ws {
			if err := w.Edge(context.WithoutCancel(ctx), info, edge == engine.WindowStart); err != nil {
				return err
			}
		}
		return nil
	}
}

// endWatched says a watcher takes its last look at a step's end
// (observe.EndWatcher).
func endWatched(watchers []observe.Watcher) bool {
	for _, w := range watchers {
		if _, ok := w.(observe.EndWatcher); ok {
			return true
		}
	}
	return false
}

// companions is the goroutines the watchers run beside the clients, each
// needing a P of its own (observe.CompanionWatcher).
func companions(watchers []observe.Watcher) int {
	n := 0
	for _, w := range watchers {
		if c, ok := w.(observe.CompanionWatcher); ok {
			n += c.Companions()
		}
	}
	return n
}

// firstError is the most frequent of a step's errors (they are sorted so).
func firstError(errs []result.Error) string {
	if len(errs) == 0 {
		return "unknown error"
	}
	return errs[0].Message
}

// connectingAfter is how long a step's connection phase lasts before it is
// reported, and then how often: a phase of a second or less (a few hundred
// clients) says nothing.
const connectingAfter = time.Second

// connectReporter returns an engine ConnectProgress for one step's
// connection phase, which begins now: it passes on a report once a second
// from connectingAfter on, and the first report of every client connected.
func connectReporter(report func(observe.Connecting)) func(connected, total int) {
	began := time.Now()
	var last time.Duration
	all := false
	return func(connected, total int) {
		el := time.Since(began)
		if el < connectingAfter || all {
			return
		}
		if connected < total && last > 0 && el-last < connectingAfter {
			return
		}
		last, all = el, connected == total
		report(observe.Connecting{Clients: total, Connected: connected, Elapsed: el})
	}
}
