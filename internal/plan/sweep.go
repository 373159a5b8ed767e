package plan

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
	"github.com/pgscale/pgscale/internal/script"
)

// Sweep runs the same workload at each client count in turn, on one
// target whose data is ready: the building block of both runners.
type Sweep struct {
	// Watchers watch every step (probes, disturbances), in order.
	Watchers []observe.Watcher
	Clients  []int
	Engine   engine.Config // a template; Clients and Program are set per step
	// Program builds the scripts' program for a step (pgbench seeds each
	// client's random state from one sequence, so it depends on the count).
	Program func(clients int) (*script.Program, error)
	// BeforeStep, when set, runs before each step (pgbench's pre-run vacuum).
	BeforeStep func(ctx context.Context, i, clients int) error
	// AfterStep, when set, sees each step as soon as it is done.
	AfterStep func(i int, s result.Step)
	// Round is the A/B round the sweep is a turn of (1-based), told to
	// the watchers; 0 for a sweep of its own.
	Round int
	// Connecting, when set, is told how far each step's connection phase
	// has come, once a second while it lasts more than one
	// (connectReporter).
	Connecting func(observe.Connecting)
	// Transactions, when set, receives every transaction as it ends.
	Transactions observe.TxnSink
	// HoldEdges holds the clients at the window's edges even when no
	// watcher acts there, so that the warm-up and the window run the
	// same transactions as a step whose edges are watched (AB's
	// WarmupRound).
	HoldEdges bool
	// Agents, when set, runs each step's clients on the coordinator's
	// agents instead of in this process; each step then lists them.
	// AgentsTarget, when set, is the target as the agents reach it, told
	// to the coordinator before each step (an A/B's targets take turns on
	// one coordinator).
	Agents       *agent.Coordinator
	AgentsTarget string
	// agentSteps, when set, receives with Agents each agent's own steps,
	// for its own result file (the target's prepared.agentSteps).
	agentSteps *[][]result.Step
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

// stopCause is why ctx was cancelled when that was not an interrupt: the
// cause given to context.WithCancelCause, or nil.
func stopCause(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
		return cause
	}
	return nil
}

// ErrAborted is returned (wrapped) when clients of a step aborted on
// errors: the step, and so the run, is incomplete, as pgbench says its
// results are then.
var ErrAborted = errors.New("clients aborted")

// Run runs the sweep and returns the steps done. On an interrupt or a step
// that could not complete it stops and returns the steps so far (the last
// one marked incomplete) with the error. Each step's disturbance windows
// get their effect on the workload, and the steps their speedup.
func (sw *Sweep) Run(ctx context.Context) ([]result.Step, error) {
	var steps []result.Step
	for i, n := range sw.Clients {
		if sw.BeforeStep != nil {
			if err := sw.BeforeStep(ctx, i, n); err != nil {
				if cause := stopCause(ctx); cause != nil {
					err = cause
				}
				return steps, err
			}
		}
		cfg := sw.Engine
		cfg.Clients = n
		if sw.Agents == nil {
			cfg.Companions += sw.companions()
		}
		prog, err := sw.Program(n)
		if err != nil {
			return steps, err
		}
		cfg.Program = prog
		if sw.Connecting != nil {
			cfg.ConnectProgress = connectReporter(sw.Connecting)
		}
		var started []observe.Watcher
		var startErr error
		var info observe.StepInfo // as the watchers were told at the start
		connected := false
		cfg.Quiesce = sw.edges(ctx, observe.StepInfo{Index: i, Round: sw.Round, Clients: n})
		if cfg.Quiesce == nil && sw.HoldEdges {
			cfg.Quiesce = func(engine.Edge) error { return nil }
		}
		if sink := sw.Transactions; sink != nil {
			cfg.OnTxn = txnHook(sink)
		}
		if cfg.Duration <= 0 && sw.Agents == nil && sw.endWatched() {
			// No planned end: the watchers' last look is when the
			// clients have run their transactions, before they go.
			cfg.AtEnd = func() {
				for _, o := range started {
					if e, ok := o.(observe.EndWatcher); ok {
						e.End(context.WithoutCancel(ctx), info)
					}
				}
			}
		}
		cfg.OnStart = func(start, window time.Time) {
			connected = true
			if sink := sw.Transactions; sink != nil {
				sink.StartStep(txnStep(prog, n, start))
			}
			info = observe.StepInfo{Index: i, Round: sw.Round, Clients: n, Start: start, Window: window, Duration: cfg.Duration}
			for _, o := range sw.Watchers {
				if err := o.Start(ctx, info); err != nil {
					startErr = err
					return
				}
				started = append(started, o)
			}
		}
		var r *engine.Result
		if sw.Agents != nil {
			if sw.AgentsTarget != "" {
				sw.Agents.Retarget(sw.AgentsTarget)
			}
			r, err = sw.Agents.Step(ctx, cfg)
		} else {
			r, err = engine.Run(ctx, cfg)
		}
		if err == nil && startErr != nil {
			err = startErr
		}
		if r != nil && (r.Elapsed > 0 || err != nil) {
			s := StepResult(r, cfg.Program.Scripts())
			if sw.Agents != nil {
				sw.keepAgents(&s, cfg)
			}
			if err == nil && s.Summary.Aborted > 0 {
				err = fmt.Errorf("%w: %d of %d clients stopped on errors: %s", ErrAborted, s.Summary.Aborted, n, firstError(s.Errors))
			}
			if err != nil && s.Complete {
				s.Complete, s.Reason = false, err.Error()
			}
			if cause := stopCause(ctx); err != nil && cause != nil {
				// The step was stopped for a reason of the run's own (a
				// pooler it started exited): that is the step's reason.
				err = cause
				s.Complete, s.Reason = false, cause.Error()
				if !connected {
					s.Reason += ", before every client had connected"
				}
				var pe *poolerExited
				if errors.As(cause, &pe) {
					blameOutage(&s, pe)
				}
			}
			for _, o := range started {
				if oerr := o.Stop(context.WithoutCancel(ctx), &s); oerr != nil && err == nil {
					err = oerr
				}
			}
			diagnose.DisturbanceEffects(&s, diagnose.EffectOptions{})
			steps = append(steps, s)
			diagnose.Scaling(steps)
			if sw.AfterStep != nil {
				sw.AfterStep(i, steps[len(steps)-1])
			}
		}
		if err != nil {
			return steps, err
		}
	}
	return steps, nil
}

// edges is the engine's Quiesce for a step whose watchers act at its
// window's edges (observe.EdgeWatcher), nil when none does.
func (sw *Sweep) edges(ctx context.Context, info observe.StepInfo) func(engine.Edge) error {
	var ws []observe.EdgeWatcher
	for _, w := range sw.Watchers {
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
func (sw *Sweep) endWatched() bool {
	for _, w := range sw.Watchers {
		if _, ok := w.(observe.EndWatcher); ok {
			return true
		}
	}
	return false
}

// companions is the goroutines the watchers run beside the clients, each
// needing a P of its own (observe.CompanionWatcher).
func (sw *Sweep) companions() int {
	n := 0
	for _, w := range sw.Watchers {
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

// txnHook passes the engine's transactions on to sink.
func txnHook(sink observe.TxnSink) func(engine.Txn) {
	return func(t engine.Txn) {
		o := observe.Txn{Client: t.Client, Number: t.Number, Script: t.Script, End: t.End,
			LatencyUS: t.Latency.Microseconds(), LagUS: t.Lag.Microseconds(), Tries: t.Tries, Skipped: t.Skipped, Failed: t.Failed}
		if t.Failed {
			o.Kind = t.Kind.String()
		}
		sink.Txn(o)
	}
}

// txnStep tells a transaction sink how the step's clients are dealt to
// pgbench's threads, and gives it each thread's sampling sequence.
func txnStep(prog *script.Program, clients int, start time.Time) observe.TxnStep {
	st := observe.TxnStep{Clients: clients, Threads: prog.Threads(), Thread: prog.Thread, Start: start}
	for t := 0; t < st.Threads; t++ {
		st.Sample = append(st.Sample, prog.SampleRand(t))
	}
	return st
}

// keepAgents lists the agents of step s, and keeps each one's own step (an
// agent without clients in the step has none).
func (sw *Sweep) keepAgents(s *result.Step, cfg engine.Config) {
	o := sw.Agents.Last()
	if o == nil {
		return
	}
	s.Agents = o.Agents
	keep := sw.agentSteps
	if keep == nil {
		return
	}
	if len(*keep) < len(o.Results) {
		*keep = append(*keep, make([][]result.Step, len(o.Results)-len(*keep))...)
	}
	for i, r := range o.Results {
		if r.Clients == 0 {
			continue
		}
		as := StepResult(r, cfg.Program.Scripts())
		as.Round = sw.Round
		(*keep)[i] = append((*keep)[i], as)
	}
}
