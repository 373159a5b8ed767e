package rig

import (
	"context"
	"errors"
	"time"

	"github.com/pgscale/pgscale/internal/engine"
	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/script"
	"github.com/pgscale/pgscale/internal/step"
	"github.com/pgscale/pgscale/internal/workload"
)

// StepOf says which step Step runs: its index in the sweep, its
// clients, the A/B round it is a turn of (0 for a sweep of its own).
// Warmup runs it unwatched and unrecorded, the clients held at the
// window's edges and its progress told as warm-up throughout: a warm-up
// round's step.
type StepOf struct {
	Index, Clients, Round int
	Warmup                bool
}

// Step runs one step on target ti: pgbench's vacuum first (unless -n, or
// without pgbench's tables), then the clients, watched by the target's
// probes and disturbances, its intervals and notices told as events (on
// the agents, when the rig has them). It returns the step (nil when it
// never ran) and why it could not complete; a step a pooler's exit cut
// short says so.
func (r *Rig) Step(ctx context.Context, ti int, s StepOf) (*result.Step, error) {
	t := r.targets[ti]
	if err := r.BeforeStep(ctx, ti); err != nil {
		if cause := step.Cause(ctx); cause != nil {
			err = cause
		}
		return nil, err
	}
	cfg, err := r.stepConfig(t, s)
	if err != nil {
		return nil, err
	}
	st, err := step.Run(ctx, cfg)
	if st == nil {
		return nil, err
	}
	if cause := step.Cause(ctx); err != nil && cause != nil {
		var pe *PoolerExit
		if errors.As(cause, &pe) {
			pe.outage(st)
		}
	}
	if r.coord != nil {
		r.keepAgents(t, st, cfg.Engine.Program, s.Round)
	}
	return st, err
}

// BeforeStep does what pgbench does before each step on target ti: it
// vacuums pgbench's tables and truncates its history (with -v
// pgbench_accounts too), unless -n or the data has no pgbench tables.
func (r *Rig) BeforeStep(ctx context.Context, ti int) error {
	t := r.targets[ti]
	l := r.exp.Load
	if l.NoVacuum || !t.data.Tables {
		return nil
	}
	if err := workload.VacuumBeforeStep(ctx, t.srv.Origin().Connect); err != nil {
		return named(t.name, err)
	}
	if l.VacuumAccounts {
		return named(t.name, workload.VacuumAccounts(ctx, t.srv.Connect))
	}
	return nil
}

// stepConfig is step s on target t as the step package runs it: the
// engine's settings, the program, what watches it, where its events go.
func (r *Rig) stepConfig(t *Target, s StepOf) (step.Config, error) {
	ecfg := r.engine(t, s.Warmup)
	ecfg.Clients = s.Clients
	prog, err := r.program(t, s.Clients)
	if err != nil {
		return step.Config{}, err
	}
	ecfg.Program = prog
	cfg := step.Config{Engine: ecfg, Info: observe.StepInfo{Index: s.Index, Round: s.Round, Clients: s.Clients},
		Events: r.exp.Events(), Target: t.name, Agents: r.coord}
	if !s.Warmup {
		cfg.Watchers, cfg.Transactions = t.watchers(), r.exp.Transactions
	} else {
		cfg.HoldEdges = true
	}
	if r.coord != nil && len(r.targets) > 1 {
		cfg.AgentsTarget = agentTarget(t, "") // each target's step in its turn
	}
	return cfg, nil
}

// SliceOf says which step Slices runs: its index in the sweep, its
// clients, the A/B round; Slice and Settle are the slices' length and
// the part of each not counted, Order the target of each slice.
type SliceOf struct {
	Index, Clients, Round int
	Slice, Settle         time.Duration
	Order                 func(slice int) int
}

// Slices runs one step on every target at once, in slices: every client
// holds a connection to each target and all clients switch target
// together every slice. Each target gets the step's duration of measured
// time, rounded up to whole slices; the warm-up, rounded up to whole
// cycles of one slice per target, runs first, in slices too. It returns
// the step split per target (step.Split, each with what the target's
// meter read of its slices) and the engine's error. Call BeforeStep for
// each target first.
func (r *Rig) Slices(ctx context.Context, s SliceOf) ([]result.Step, error) {
	k := len(r.targets)
	base := r.targets[0]
	cfg := r.engine(base, false)
	cfg.Clients = s.Clients
	// Whole cycles, so every target gets the same number of slices: the
	// warm-up and each target's time are rounded up to them.
	cycle := time.Duration(k) * s.Slice
	cfg.Warmup = step.RoundUp(cfg.Warmup, cycle)
	cfg.Duration = time.Duration(k) * step.RoundUp(cfg.Duration, s.Slice)
	for _, t := range r.targets {
		cfg.Targets = append(cfg.Targets, t.srv.Config)
	}
	cfg.Conn = cfg.Targets[0]
	cfg.SliceMeter = r.sliceMeter()
	cfg.Slice, cfg.Settle, cfg.SliceTarget = s.Slice, s.Settle, s.Order
	prog, err := r.program(base, s.Clients)
	if err != nil {
		return nil, err
	}
	cfg.Program = prog
	return step.RunSlices(ctx, step.Slices{Engine: cfg, Events: r.exp.Events()})
}

// sliceMeter is the engine's slice meter over the targets' meters; nil
// when no target has one.
func (r *Rig) sliceMeter() func(int) map[string]float64 {
	some := false
	for _, t := range r.targets {
		some = some || t.meter != nil
	}
	if !some {
		return nil
	}
	return func(ti int) map[string]float64 {
		if m := r.targets[ti].meter; m != nil {
			return m.Read()
		}
		return nil
	}
}

// engine is the engine's settings for a step on t: the load's, the
// target's connection, the workload's protocol and seed, the scripts'
// statements the server would not prepare, and the engine's intervals
// and notices as events (with warmup, every interval told as warm-up).
// The step adds the companions its watchers run (step.Run).
func (r *Rig) engine(t *Target, warmup bool) engine.Config {
	c := r.exp
	l := c.Load
	wl := c.Workload
	settings := l.Settings
	if settings.Interval <= 0 {
		settings.Interval = time.Second
	}
	obs := c.Events()
	told := func(engine.Progress) {}
	if c.Counting() {
		told = step.CountProgress(t.name, l.Transactions, c.Notice)
	}
	cfg := engine.Config{
		Settings: settings, Conn: t.srv.Config, Protocol: wl.Protocol, SimpleCommands: workload.SimpleCommands(wl.Scripts, t.fallbacks),
		Seed: wl.Seed, SourceAddr: l.SourceAddress,
		Events: func(s string) { obs.Observe(observe.Notice{Text: s}) },
		Progress: func(pr engine.Progress) {
			pr.Warmup = pr.Warmup || warmup
			obs.Observe(r.interval(pr, t))
			told(pr)
		},
	}
	cfg.ExitOnAbort = l.ExitOnAbort
	step.Notices(&cfg, obs, l.VerboseErrors)
	if c.Counting() {
		// Every window counted starts from the same state: the warm-up
		// is as many transactions as the window (docs/counting-instructions.md).
		cfg.WarmupTransactions = l.Transactions
	}
	return cfg
}

// program builds the scripts' program for a step of clients on t
// (pgbench seeds each client's random state from one sequence, so it
// depends on the count).
func (r *Rig) program(t *Target, clients int) (*script.Program, error) {
	c := r.exp
	wl := c.Workload
	return script.NewProgram(wl.Scripts, script.Options{Scale: t.data.Scale, RandomSeed: wl.Seed,
		Defines: wl.Defines, Clients: clients, DebugOutput: noticeWriter{c.Events()}, Threads: c.Load.Threads,
		ShellStdout: c.ShellOut, ShellStderr: c.ShellErr})
}

// interval is the progress event of one engine interval on t.
func (r *Rig) interval(pr engine.Progress, t *Target) observe.Interval {
	l := r.exp.Load
	e := observe.Interval{Clients: pr.Clients, Target: t.name, Elapsed: pr.Elapsed, Length: pr.Length, Warmup: pr.Warmup,
		Transactions: pr.Counts.Transactions, Failed: pr.Counts.FailedTotal(),
		LatMeanMs: pr.Latency.MeanMs, LatStddevMs: pr.Latency.StddevMs,
		Skipped: pr.Counts.Skipped, Retried: pr.Counts.Retried, Retries: pr.Counts.Retries,
		Rate: l.Rate > 0, Limit: l.LatencyLimit > 0, Tries: l.MaxTries != 1}
	if pr.Counts.Transactions > 0 {
		e.LagMeanMs = pr.Counts.LagSumUS / float64(pr.Counts.Transactions) / 1000
	}
	if t.disturber != nil {
		to := pr.Start + pr.Length
		e.Edges = t.disturber.Edges(pr.Start, to, pr.Elapsed-to)
	}
	return e
}

// noticeWriter turns the scripts' debug output (\shell, -d) into notices,
// a line at a time.
type noticeWriter struct{ obs observe.Observer }

// Write observes each line of b as a notice.
func (w noticeWriter) Write(b []byte) (int, error) {
	for _, l := range splitLines(string(b)) {
		w.obs.Observe(observe.Notice{Text: l})
	}
	return len(b), nil
}

func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != '\n' {
			i++
		}
		out = append(out, s[:i])
		if i < len(s) {
			i++
		}
		s = s[i:]
	}
	return out
}
