package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/engine"
	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/plan"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/script"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/workload"
)

type runOptions struct {
	target   targetFlags
	workload workloadFlags
	init     initFlags
	probes   probeFlags
	disturb  disturbFlags

	clients      []int
	jobs         int
	duration     time.Duration
	transactions int
	warmup       time.Duration
	connect      bool
	rate         float64
	latencyLimit time.Duration
	maxTries     int
	progress     time.Duration
	perCommand   bool
	noVacuum     bool
	doInit       bool
	setup        string
	out          string
	io           string
	describe     bool
	contOnError  bool
	scaleSet     bool // -s was given
}

func newRunCmd(argv []string, stdout, stderr io.Writer) *cobra.Command {
	o := &runOptions{clients: []int{1, 2, 4, 8}, duration: 10 * time.Second, maxTries: 1}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run a workload over a client sweep and write a result file",
		Long: `Run a pgbench-compatible workload at each client count of a sweep, print
progress each interval and a summary table, and write a result file.

With no --dsn (and no PGHOST-style environment), pgscale starts a throw-away
PostgreSQL cluster, creates the data the workload needs, runs, and removes it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("progress") && isTerminal(stderr) {
				o.progress = time.Second
			}
			o.scaleSet = cmd.Flags().Changed("scale")
			if cmd.Flags().Changed("transactions") && !cmd.Flags().Changed("time") {
				o.duration = 0
			}
			return o.run(cmd.Context(), argv, stdout, stderr)
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	o.registerLoad(fs, "result file (default results/<workload>-<UTC time>.json)")
	o.target.register(fs)
	return cmd
}

// registerLoad registers the flags that say what load runs and how: all of
// run's flags but the target's. ab shares them.
func (o *runOptions) registerLoad(fs *pflag.FlagSet, outHelp string) {
	fs.VarP(intList{&o.clients}, "client", "c", "client counts to sweep, e.g. 1,2,4,8")
	fs.IntVarP(&o.jobs, "jobs", "j", 0, "accepted for pgbench compatibility; each client has its own goroutine and connection")
	fs.VarP(seconds{&o.duration}, "time", "T", "measured duration of each step (seconds, or 10s, 1m)")
	fs.IntVarP(&o.transactions, "transactions", "t", 0, "transactions per client instead of a duration")
	fs.Var(seconds{&o.warmup}, "warmup", "run this long before measuring each step")
	o.workload.register(fs)
	fs.BoolVarP(&o.connect, "connect", "C", false, "open a new connection for every transaction")
	fs.Float64VarP(&o.rate, "rate", "R", 0, "target rate in transactions per second over all clients (Poisson schedule)")
	fs.VarP(millis{&o.latencyLimit}, "latency-limit", "L", "count transactions over this latency as late (ms); with --rate, skip those already late")
	fs.IntVar(&o.maxTries, "max-tries", 1, "tries per transaction on serialization failure or deadlock (0: unlimited, needs -T or -L)")
	fs.BoolVar(&o.contOnError, "continue-on-error", false, "keep a client going after other SQL errors (pgbench aborts it)")
	fs.VarP(seconds{&o.progress}, "progress", "P", "print progress every interval (default 1 s on a terminal)")
	fs.BoolVarP(&o.perCommand, "report-per-command", "r", false, "report each command's latency")
	fs.BoolVarP(&o.noVacuum, "no-vacuum", "n", false, "do not vacuum pgbench's tables and truncate its history before each step")
	fs.StringVar(&o.out, "out", "", outHelp)
	fs.StringVar(&o.io, "io", "auto", "client socket I/O: auto, raw or netpoll")
	fs.BoolVar(&o.describe, "describe", false, "print the scripts as understood and run nothing")
	fs.BoolVar(&o.doInit, "init", false, "(re)create pgbench's data on a --dsn target before running")
	fs.StringVar(&o.setup, "setup", "", "SQL file run once on the target before the sweep (custom tables)")
	o.init.register(fs, false)
	o.probes.register(fs)
	o.disturb.register(fs)
}

func (o *runOptions) validate() error {
	if err := o.validateLoad(); err != nil {
		return err
	}
	if o.doInit && o.target.ephemeral() {
		return Usagef("--init applies to --dsn targets; an ephemeral cluster is always initialised")
	}
	return o.target.validate()
}

// validateLoad checks the flags registerLoad registers.
func (o *runOptions) validateLoad() error {
	switch {
	case o.duration > 0 && o.transactions > 0:
		return Usagef("-T and -t are exclusive: give a duration or a transaction count")
	case o.duration <= 0 && o.transactions <= 0:
		return Usagef("-T must be positive (or give -t)")
	case o.rate < 0:
		return Usagef("--rate must be positive")
	case o.maxTries < 0:
		return Usagef("--max-tries must be at least 0")
	case o.maxTries == 0 && o.duration <= 0 && o.latencyLimit <= 0:
		return Usagef("--max-tries 0 (unlimited) needs -T or -L")
	case o.latencyLimit > 0 && o.rate == 0 && o.maxTries == 0:
		// fine: latency limit bounds retries
	case o.jobs < 0:
		return Usagef("-j must be positive")
	}
	if _, err := engine.ParseIOMode(o.io); err != nil {
		return Usagef("--io: %v", err)
	}
	if err := o.init.validate(); err != nil {
		return err
	}
	return o.disturb.validate(o.duration, o.transactions)
}

func maxOf(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

func (o *runOptions) run(ctx context.Context, argv []string, stdout, stderr io.Writer) (err error) {
	if err := o.validate(); err != nil {
		return err
	}
	wl, setupSQL, described, err := o.loadWorkload(stdout)
	if err != nil || described {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	file := o.newFile(argv, wl)
	tgt, err := o.target.open(ctx, workload.DataBytes(o.init.opts.Scale), maxOf(o.clients)+o.disturb.sessions(), stderr)
	if err != nil {
		return err
	}
	defer tgt.Close()
	defer func() {
		if r := recover(); r != nil {
			tgt.Close()
			panic(r)
		}
	}()
	file.Target = tgt.Info

	scale, hasTables, err := o.prepareData(ctx, tgt, wl, setupSQL, stderr)
	if err != nil {
		return err
	}
	file.Workload.Scale = scale
	recordServerInfo(ctx, tgt, &file.Target)
	sw, err := o.newSweep(tgt, wl, scale, hasTables, stderr)
	defer o.probes.close()
	if err != nil {
		return err
	}
	file.Workload.IntervalS = sw.Engine.Interval.Seconds()
	total := len(o.clients)
	vacuum := sw.BeforeStep
	sw.BeforeStep = func(ctx context.Context, i, clients int) error {
		fmt.Fprintf(stderr, "step %d/%d: %d client%s\n", i+1, total, clients, plural(clients))
		return vacuum(ctx, i, clients)
	}
	sw.AfterStep = func(_ int, s result.Step) {
		fmt.Fprintln(stdout, plan.DescribeStep(s))
		if len(s.Scripts) > 1 {
			printScripts(stdout, s)
		}
		if o.perCommand {
			printCommands(stdout, s)
		}
		printDisturbances(stdout, s)
	}
	steps, runErr := sw.Run(ctx)
	file.Steps = steps
	file.Finished = time.Now().UTC()
	file.Complete = runErr == nil
	if runErr != nil {
		file.Reason = runErr.Error()
		if ctx.Err() != nil {
			file.Reason = "interrupted"
		}
	}
	fmt.Fprintln(stdout)
	printSweepTable(stdout, steps)
	if file.Diagnosis = diagnose.Sweep(file); file.Diagnosis != nil {
		report.Diagnosis(stdout, file.Diagnosis)
	}
	path := o.out
	if path == "" {
		path = filepath.Join("results", fmt.Sprintf("%s-%s.json", sanitize(wl.Name), file.Started.Format("20060102T150405Z")))
	}
	if werr := result.Write(path, file); werr != nil {
		return errors.Join(runErr, fmt.Errorf("write result file: %w", werr))
	}
	status := ""
	if !file.Complete {
		status = " (incomplete)"
	}
	fmt.Fprintf(stdout, "result: %s%s\n", path, status)
	if runErr != nil {
		if ctx.Err() != nil {
			return &IncompleteError{Err: errors.New("interrupted; the steps done so far are in the result file")}
		}
		var ue *UsageError
		if errors.As(runErr, &ue) {
			return runErr
		}
		return &IncompleteError{Err: runErr}
	}
	return nil
}

// loadWorkload parses the scripts and reads --setup. With --describe it
// prints the scripts as understood instead, and reports that it did: the
// caller then runs nothing.
func (o *runOptions) loadWorkload(stdout io.Writer) (wl *loaded, setupSQL string, described bool, err error) {
	if wl, err = o.workload.load(); err != nil {
		return nil, "", false, err
	}
	if o.describe {
		for _, s := range wl.Scripts {
			s.Describe(stdout)
		}
		return wl, "", true, nil
	}
	if o.setup != "" {
		b, err := os.ReadFile(o.setup)
		if err != nil {
			return nil, "", false, Usagef("--setup: %v", err)
		}
		setupSQL = string(b)
	}
	return wl, setupSQL, false, nil
}

// newFile returns a result file holding everything known before the run:
// command, start time, environment and workload.
func (o *runOptions) newFile(argv []string, wl *loaded) *result.File {
	return &result.File{
		Pgscale:     Version,
		Command:     redactArgs(argv),
		Started:     time.Now().UTC(),
		Environment: result.CollectEnvironment(),
		Workload: result.Workload{
			Name: wl.Name, Scripts: wl.resultScripts(), Defines: o.workload.defines, Protocol: wl.Protocol.String(),
			Connect: o.connect, RateTPS: o.rate, LatencyLimitMs: float64(o.latencyLimit.Microseconds()) / 1000,
			MaxTries: o.maxTries, DurationS: o.duration.Seconds(), Transactions: o.transactions,
			WarmupS: o.warmup.Seconds(), RandomSeed: wl.Seed, ContinueOnError: o.contOnError,
		},
	}
}

// recordServerInfo adds the server's version and settings to t, when the
// server tells them.
func recordServerInfo(ctx context.Context, tgt *openTarget, t *result.Target) {
	if conn, err := tgt.Connect(ctx); err == nil {
		if info, err := target.ServerInfo(ctx, conn); err == nil {
			t.ServerVersion, t.Settings = info.Version, info.Settings
		}
		conn.Close(context.Background())
	}
}

// newSweep returns the sweep of the workload over o.clients on tgt: engine
// settings, program, probes and disturbances, pgbench's vacuum before each
// step (unless -n or without pgbench's tables), and progress lines on
// stderr with -P. The probes it starts are the last ones o.probes.close
// closes; a caller with several targets closes the Sweep's observers itself.
func (o *runOptions) newSweep(tgt *openTarget, wl *loaded, scale int, hasTables bool, stderr io.Writer) (*plan.Sweep, error) {
	ioMode, _ := engine.ParseIOMode(o.io)
	interval := o.progress
	if interval <= 0 {
		interval = time.Second
	}
	sw := &plan.Sweep{
		Clients: o.clients,
		Engine: engine.Config{
			Conn: tgt.Config, Duration: o.duration, Transactions: o.transactions, Warmup: o.warmup,
			Protocol: wl.Protocol, Reconnect: o.connect, Rate: o.rate, LatencyLimit: o.latencyLimit,
			MaxTries: engineTries(o.maxTries), ContinueOnError: o.contOnError, Interval: interval, PerCommand: o.perCommand,
			IO: ioMode, Companions: o.disturb.sessions(), Seed: wl.Seed,
			Events: func(s string) { fmt.Fprintln(stderr, s) },
		},
		Program: func(clients int) (*script.Program, error) {
			return script.NewProgram(wl.Scripts, script.Options{Scale: scale, RandomSeed: wl.Seed,
				Defines: o.workload.defines, Clients: clients, DebugOutput: stderr})
		},
	}
	o.disturb.scale, o.disturb.seed, o.disturb.defines, o.disturb.log = scale, wl.Seed, o.workload.defines, stderr
	for _, f := range []func(*openTarget) ([]observe.Watcher, error){o.probes.observers, o.disturb.observers} {
		obs, err := f(tgt)
		if err != nil {
			return sw, err
		}
		sw.Observers = append(sw.Observers, obs...)
	}
	sw.BeforeStep = func(ctx context.Context, _, _ int) error {
		if o.noVacuum || !hasTables {
			return nil
		}
		return vacuumBeforeStep(ctx, tgt)
	}
	if o.progress > 0 {
		sw.Engine.Progress = func(p engine.Progress) { fmt.Fprintln(stderr, progressLine(p, o)+o.disturb.markers(p)) }
	}
	return sw, nil
}

// engineTries maps --max-tries (0 = unlimited, as in pgbench) to the engine's
// convention (negative = unlimited).
func engineTries(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' || r == ':' {
			return '_'
		}
		return r
	}, s)
}

// prepareData makes sure the data the workload needs is there, and returns
// the scale (read from the data, as pgbench does) and whether pgbench's
// tables exist.
func (o *runOptions) prepareData(ctx context.Context, tgt *openTarget, wl *loaded, setupSQL string, log io.Writer) (int, bool, error) {
	conn, err := tgt.Connect(ctx)
	if err != nil {
		return 0, false, err
	}
	defer conn.Close(context.Background())
	data, err := workload.Inspect(ctx, conn)
	if err != nil {
		return 0, false, &IncompleteError{Err: err}
	}
	ephemeral := tgt.Cluster != nil
	if ephemeral || o.doInit {
		fmt.Fprintf(log, "creating pgbench data, scale %d...\n", o.init.opts.Scale)
		if _, err := workload.Init(ctx, tgt.Connect, o.init.opts, io.Discard); err != nil {
			return 0, false, &IncompleteError{Err: fmt.Errorf("init: %w", err)}
		}
		if data, err = workload.Inspect(ctx, conn); err != nil {
			return 0, false, &IncompleteError{Err: err}
		}
	} else if !data.Complete() && wl.Builtin {
		return 0, false, Usagef("%s has no pgbench tables (missing %s): run `pgscale init --dsn ...` first, or pass --init to create them",
			tgt.Info.Description, strings.Join(data.Missing, ", "))
	}
	if setupSQL != "" {
		if err := conn.Exec(ctx, setupSQL).Close(); err != nil {
			return 0, false, Usagef("--setup %s: %v", o.setup, err)
		}
	}
	scale := data.Scale
	if !data.Complete() || scale == 0 {
		scale = o.init.opts.Scale
	} else if o.scaleSet && scale != o.init.opts.Scale {
		fmt.Fprintf(log, "warning: -s %d ignored, using the scale of the data (%d branches), as pgbench does\n", o.init.opts.Scale, scale)
	}
	return scale, data.Complete(), nil
}

// vacuumBeforeStep does what pgbench does before a run unless -n: vacuum the
// small tables and empty the history.
func vacuumBeforeStep(ctx context.Context, tgt *openTarget) error {
	conn, err := tgt.Connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	for _, sql := range []string{"VACUUM pgbench_branches", "VACUUM pgbench_tellers", "TRUNCATE pgbench_history"} {
		if err := conn.Exec(ctx, sql).Close(); err != nil {
			return &IncompleteError{Err: fmt.Errorf("%s: %w", sql, err)}
		}
	}
	return nil
}
