package plan

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/pgscale/pgscale/internal/disturb"
	"github.com/pgscale/pgscale/internal/engine"
	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/probe"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/script"
	"github.com/pgscale/pgscale/internal/secret"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
	"github.com/pgscale/pgscale/internal/workload"
)

// prepared is one target while a run lasts: open, its data ready, its
// probes and disturbances set up.
type prepared struct {
	name      string // empty for run's single target
	srv       *target.Server
	data      workload.Prepared
	probes    *probe.Set
	disturber *disturb.Disturber
	meter     *probe.Meter // in an A/B run in slices
	// fallbacks are the statements that run with the simple protocol on
	// this target: the server would not prepare them (CheckPrepare).
	fallbacks []workload.Fallback
	// profileDir, when set, is where this target's pprof files go (each
	// target of an A/B run has its own).
	profileDir string
	// agentSteps holds, with agents, each agent's own steps on this
	// target, for its own result file (agentFiles).
	agentSteps [][]result.Step
}

// unwatch ends the target's probes, meter and disturbances: a suite sets
// them up again for its next cell.
func (p *prepared) unwatch() {
	if p.probes != nil {
		p.probes.Close()
		p.probes = nil
	}
	if p.meter != nil {
		p.meter.Close()
		p.meter = nil
	}
	p.disturber = nil
}

// close ends what watches the target and stops its ephemeral cluster.
func (p *prepared) close() {
	p.unwatch()
	p.srv.Close()
}

// watchers are what watches each of the target's steps.
func (p *prepared) watchers() []observe.Watcher {
	var ws []observe.Watcher
	if p.probes != nil {
		ws = append(ws, p.probes)
	}
	if p.disturber != nil {
		ws = append(ws, p.disturber)
	}
	return ws
}

// named puts a target's name in front of err, keeping its kind.
func named(name string, err error) error {
	if name == "" || err == nil {
		return err
	}
	return usage.Prefix("target "+name+": ", err)
}

// needsPgbenchData says an ephemeral cluster is to get pgbench's data: the
// scripts use its tables (a built-in script, or SQL naming pgbench_...),
// or the set-up SQL or a disturbance does (a --disturb-file's script is
// not read here: with one, the data is made).
func (c *Common) needsPgbenchData(wl *workload.Loaded, setup string) bool {
	if wl.UsesPgbenchTables() || strings.Contains(strings.ToLower(setup), "pgbench_") || len(c.Disturb.Files) > 0 {
		return true
	}
	for _, d := range c.Disturb.Builtins {
		if strings.Contains(strings.ToLower(d), "pgbench_") {
			return true
		}
	}
	return false
}

// needs is what the run asks of the servers it opens.
func (c *Common) needs(ds []disturb.Disturbance, wl *workload.Loaded) target.Needs {
	return target.Needs{DataBytes: workload.DataBytes(c.Data.Init.Scale), Connections: c.Load.maxClients() + disturb.Sessions(ds),
		Clients: c.Load.maxClients(), Prepared: wl.Protocol == engine.Prepared}
}

// prepare gives a target's server the workload's data (a pooler's: the
// server it fronts), and records what the server says of itself; a
// counted server is then restarted under Valgrind (countFromHere).
func (c *Common) prepare(ctx context.Context, p *prepared, wl *workload.Loaded, setup string) error {
	began := time.Now()
	if err := c.makeData(ctx, p, wl, setup); err != nil {
		return err
	}
	return c.countFromHere(ctx, p, time.Since(began))
}

// makeData gives a target's server the workload's data (a pooler's: the
// server it fronts), natively, and records what the server says of
// itself.
func (c *Common) makeData(ctx context.Context, p *prepared, wl *workload.Loaded, setup string) error {
	origin := p.srv.Origin()
	// A counted server makes its data natively, and is counted under
	// Valgrind only from then on (count.go).
	if err := c.native(ctx, p); err != nil {
		return err
	}
	opts := func(s *target.Server) workload.PrepareOptions {
		return workload.PrepareOptions{
			Create: s.Ephemeral() && !c.Data.NoInit && c.needsPgbenchData(wl, setup) || c.Data.Create, Init: c.Data.Init, ScaleGiven: c.Data.ScaleGiven,
			NeedTables: wl.Builtin, Setup: setup, SetupName: c.setupName(), Where: s.Info.Description, Log: c.notice}
	}
	var logFrom int64
	if origin.Cluster != nil {
		logFrom = origin.Cluster.LogSize()
	}
	d, err := workload.Prepare(ctx, origin.Connect, opts(origin))
	if err != nil {
		return blameCrash(p.name, origin, logFrom, named(p.name, err))
	}
	// The same data on every other server a proxy fronts of its own (run
	// --pooler with of: [s1, s2]: shards); another target's is made as
	// that target's.
	for _, f := range p.srv.OwnFronts() {
		if f == origin {
			continue
		}
		if _, err := workload.Prepare(ctx, f.Connect, opts(f)); err != nil {
			return named(p.name, err)
		}
	}
	// Streaming replicas replay the data before the run starts.
	for _, f := range append([]*target.Server{origin}, p.srv.OwnFronts()...) {
		if err := f.CatchUp(ctx); err != nil {
			return named(p.name, err)
		}
	}
	p.data = d
	p.srv.RecordInfo(ctx)
	return c.checkPrepare(ctx, p, wl)
}

// checkPrepare finds the statements the target's server (through its
// pooler, if it has one) will not prepare, which then run with the
// simple protocol there, and says so the first time.
func (c *Common) checkPrepare(ctx context.Context, p *prepared, wl *workload.Loaded) error {
	if wl.Protocol != engine.Prepared || !wl.ProtocolDefault {
		return nil
	}
	fbs, err := workload.CheckPrepare(ctx, p.srv.Connect, wl.Scripts)
	if err != nil {
		return named(p.name, err)
	}
	if len(p.fallbacks) == 0 { // said once, not again for a re-created cluster
		for _, f := range fbs {
			c.notice(prefixed(p.name, workload.FallbackNotice(wl.Scripts[f.Script], f)))
		}
	}
	p.fallbacks = fbs
	return nil
}

// prefixed puts a target's name in front of a notice, when it has one.
func prefixed(name, s string) string {
	if name == "" {
		return s
	}
	return "target " + name + ": " + s
}

// setupName names the setup SQL in errors.
func (c *Common) setupName() string {
	if c.Data.Setup != "" {
		return "--setup " + c.Data.Setup
	}
	return "the suite's setup"
}

// watch sets up the target's probes (with probes true and any chosen) and
// its disturbances. Both watch the server, behind the pooler if there is
// one; each probe asks the target for what it needs (target.Server.Watch).
func (c *Common) watch(ctx context.Context, p *prepared, wl *workload.Loaded, ds []disturb.Disturbance, probes bool) error {
	origin := p.srv.Origin()
	if probes && c.Probes.Any() {
		cfg := probe.Config{Options: *c.Probes, Server: p.srv.Watch(), ConnectPerTransaction: c.Load.Connect, Log: c.notice}
		if p.profileDir != "" {
			cfg.ProfileDir = p.profileDir
		}
		// Under Valgrind a probe's connection may take many seconds to
		// start on a loaded machine, and is tried again (probe's
		// connectTries): a probe that gives up loses the layout's count.
		timeout := 30 * time.Second
		if c.counting() {
			timeout = 2 * time.Minute
		}
		pctx, cancel := context.WithTimeout(ctx, timeout)
		set, err := probe.New(pctx, cfg)
		cancel()
		if err != nil {
			return named(p.name, fmt.Errorf("probes: %w", err))
		}
		p.probes = set
	}
	if len(ds) > 0 {
		dt, err := disturb.New(ctx, ds, disturb.Config{Conn: origin.Config, Scale: p.data.Scale, Seed: wl.Seed,
			Defines: wl.Defines, Events: c.notice}, origin.Connect)
		if err != nil {
			return named(p.name, err)
		}
		p.disturber = dt
	}
	return nil
}

// sweep is the workload's sweep on p: the engine's settings, the program,
// the watchers, pgbench's vacuum before each step (unless -n, or without
// pgbench's tables), and the engine's intervals and notices as events.
func (c *Common) sweep(p *prepared, wl *workload.Loaded) *Sweep {
	l := c.Load
	settings := l.Settings
	if settings.Interval <= 0 {
		settings.Interval = time.Second
	}
	obs := c.observer()
	told := c.countProgress(p.name)
	sw := &Sweep{
		agentSteps: &p.agentSteps,
		Watchers:   p.watchers(),
		Clients:    l.Clients,
		Engine: engine.Config{
			Settings: settings, Conn: p.srv.Config, Protocol: wl.Protocol, SimpleCommands: workload.SimpleCommands(wl.Scripts, p.fallbacks),
			Seed: wl.Seed, SourceAddr: net.ParseIP(l.SourceAddress),
			Events: func(s string) { obs.Observe(observe.Notice{Text: s}) },
			Progress: func(pr engine.Progress) {
				obs.Observe(c.interval(pr, p))
				told(pr)
			},
		},
		Connecting: func(e observe.Connecting) {
			e.Target = p.name
			obs.Observe(e)
		},
		Program: func(clients int) (*script.Program, error) {
			shOut, shErr := c.shellWriters()
			return script.NewProgram(wl.Scripts, script.Options{Scale: p.data.Scale, RandomSeed: wl.Seed,
				Defines: wl.Defines, Clients: clients, DebugOutput: noticeWriter{obs}, Threads: l.Threads, ShellStdout: shOut, ShellStderr: shErr})
		},
	}
	if c.counting() {
		// Every window counted starts from the same state: the warm-up
		// is as many transactions as the window (docs/counting-instructions.md).
		sw.Engine.WarmupTransactions = l.Transactions
	}
	if !l.NoVacuum && p.data.Tables {
		sw.BeforeStep = func(ctx context.Context, _, _ int) error {
			return named(p.name, workload.VacuumBeforeStep(ctx, p.srv.Origin().Connect))
		}
	}
	c.extend(sw, p)
	return sw
}

// interval is the progress event of one engine interval on p.
func (c *Common) interval(pr engine.Progress, p *prepared) observe.Interval {
	e := observe.Interval{Clients: pr.Clients, Target: p.name, Elapsed: pr.Elapsed, Length: pr.Length, Warmup: pr.Warmup,
		Transactions: pr.Counts.Transactions, Failed: pr.Counts.FailedTotal(),
		LatMeanMs: pr.Latency.MeanMs, LatStddevMs: pr.Latency.StddevMs,
		Skipped: pr.Counts.Skipped, Retried: pr.Counts.Retried, Retries: pr.Counts.Retries,
		Rate: c.Load.Rate > 0, Limit: c.Load.LatencyLimit > 0, Tries: c.Load.MaxTries != 1}
	if pr.Counts.Transactions > 0 {
		e.LagMeanMs = pr.Counts.LagSumUS / float64(pr.Counts.Transactions) / 1000
	}
	if p.disturber != nil {
		to := pr.Start + pr.Length
		e.Edges = p.disturber.Edges(pr.Start, to, pr.Elapsed-to)
	}
	return e
}

// noticeWriter turns the scripts' debug output (\shell, -d) into notices,
// a line at a time.
type noticeWriter struct{ obs observe.Observer }

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

// newFile returns a result file holding everything known before the run:
// command, start time, environment and workload.
func (c *Common) newFile(wl *workload.Loaded, started time.Time) *result.File {
	l := c.Load
	interval := l.Interval
	if interval <= 0 {
		interval = time.Second
	}
	return &result.File{
		Schema:      result.Schema,
		Version:     result.Version,
		Pgscale:     c.Version,
		Command:     secret.RedactAll(c.Argv),
		Started:     started,
		Expect:      c.Expect,
		Environment: result.CollectEnvironment(),
		Workload: result.Workload{
			Name: wl.Name, Scripts: wl.ResultScripts(), Defines: wl.Defines, Protocol: wl.Protocol.String(),
			Connect: l.Connect, RateTPS: l.Rate, LatencyLimitMs: float64(l.LatencyLimit.Microseconds()) / 1000,
			MaxTries: l.MaxTries, DurationS: l.Duration.Seconds(), Transactions: l.Transactions,
			WarmupS: l.Warmup.Seconds(), RandomSeed: wl.Seed, ContinueOnError: l.ContinueOnError, IntervalS: interval.Seconds(),
		},
	}
}

// relativeProfiles records each step's pprof file as the result file's
// contract has it (result.Profile): relative to the directory of the
// result file at resultPath when the pprof file is inside it, so that the
// directory can be moved or copied whole, else as an absolute path. The
// probe names the file relative to the directory pgscale runs in.
func relativeProfiles(steps []result.Step, resultPath string) {
	dir, err := filepath.Abs(filepath.Dir(resultPath))
	if err != nil {
		return
	}
	for i := range steps {
		p := steps[i].Probes
		if p == nil {
			continue
		}
		profiles := []*result.Profile{p.Profile()}
		if p.Instructions() != nil {
			profiles = append(profiles, p.Instructions().PoolerProfile) // a pooler counted under Valgrind
		}
		for _, pr := range profiles {
			if pr == nil || pr.File == "" {
				continue
			}
			abs, err := filepath.Abs(pr.File)
			if err != nil {
				continue
			}
			pr.File = abs
			if rel, err := filepath.Rel(dir, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				pr.File = rel
			}
		}
	}
}

// fileName keeps a workload name usable in a file name.
func fileName(s string) string {
	b := []byte(s)
	for i, r := range b {
		if r == '/' || r == ' ' || r == ':' {
			b[i] = '_'
		}
	}
	return string(b)
}
