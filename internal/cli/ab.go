package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/pgscale/pgscale/internal/plan"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/workload"
)

type abOptions struct {
	runOptions
	verdict   verdictFlags
	targets   []string
	baseline  string
	rounds    int
	orderSeed string
	calibrate bool
	slice     time.Duration
	settle    time.Duration
	sliceSet  bool // --slice was given
}

// Defaults of ab that differ from run's.
const (
	abRounds          = 10
	abCalibrateRounds = 6
	abWarmup          = time.Second
	// abSlice is the default --slice: on this 2-core machine the A/A
	// paired noise of tps fell from 11-19 % with whole-step turns to 3-5 %
	// with 0.1 s slices, and no further with 0.05 s (README, "Slices").
	abSlice = 100 * time.Millisecond
)

func newABCmd(stdout, stderr io.Writer) *cobra.Command {
	o := &abOptions{runOptions: runOptions{clients: []int{1, 2, 4, 8}, duration: 10 * time.Second, maxTries: 1}, slice: abSlice}
	cmd := &cobra.Command{
		Use:   "ab --target NAME=SPEC --target NAME=SPEC [flags]",
		Short: "Interleaved A/B rounds over several targets, then change ± uncertainty, bounds and a verdict",
		Long: `Run the same workload on two or more targets in interleaved rounds and compare
every candidate with the baseline, step by step and measure by measure.

A target is NAME=bin:DIR (an ephemeral cluster from that build's binaries),
NAME=settings:k=v,... (an ephemeral cluster from the default binaries with
those settings; quote a value holding commas: k='a,b') or NAME=dsn:CONNSTRING
(an existing server, pooler or proxy). The first target is the baseline
unless --baseline names another. Ephemeral targets get identical data (same
init, same seed).

In each round every step runs all targets at once: every client holds a
connection to each target and all clients switch target together every
--slice (default 0.1 s), in cycles of one slice per target in a random order
(seeded and recorded); the first --slice-settle of every slice (default a
tenth) is not counted, nor is the --warmup (default 1 s) that starts every
step. Each target gets -T of measured time per step and round. With
--slice 0 (and by default with -t, -C or disturbances) each round instead
runs every target through the whole sweep in turn, in a random order per
round; only then do the server-side probes run, as each watches one server
for a whole step. Per measure and step the change is the
geometric mean of the per-round ratios candidate/baseline, with a 95%
interval, tested with a paired t-test on the log ratios and Holm-corrected
over all measures. A measure is outside bounds when its change is past its
--bound in the bad direction and significant.

--calibrate runs the baseline against itself instead (an A/A run, default 6
rounds) and prints the noise of each measure and the rounds an A/B run needs
to detect a 2% and a 5% change.

One result file per target is written to --out DIR; pgscale compare pairs
them again. Exit code 0 when no measure is outside its bounds, 1 when one is,
2 for bad usage, 3 when a round could not complete (the rounds done are saved
and compared, marked incomplete).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fs := cmd.Flags()
			if !fs.Changed("progress") && isTerminal(stderr) {
				o.progress = time.Second
			}
			if fs.Changed("transactions") && !fs.Changed("time") {
				o.duration = 0
			}
			o.scaleSet = fs.Changed("scale")
			o.sliceSet = fs.Changed("slice")
			if o.calibrate && !fs.Changed("rounds") {
				o.rounds = abCalibrateRounds
			}
			return o.runAB(cmd.Context(), os.Args, stdout, stderr)
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringArrayVar(&o.targets, "target", nil, "NAME=bin:DIR, NAME=settings:k=v,... or NAME=dsn:CONNSTRING (repeat for each target)")
	fs.StringVar(&o.baseline, "baseline", "", "name of the target the others are compared with (default: the first)")
	fs.IntVar(&o.rounds, "rounds", abRounds, "interleaved rounds; each runs every target through the whole sweep")
	fs.StringVar(&o.orderSeed, "order-seed", "time", "seed of the target order in each round: time, rand, or an integer")
	fs.Var(seconds{&o.slice}, "slice", "interleave the targets in slices of this length inside every step, all clients switching target together (default 100ms); 0: whole-step turns, each target through the whole sweep in turn")
	fs.Var(seconds{&o.settle}, "slice-settle", "with --slice: the first part of every slice not counted, as transactions in flight at the switch finish (default a tenth of the slice)")
	fs.BoolVar(&o.calibrate, "calibrate", false, "run the baseline against itself (A/A) and print each measure's noise and the rounds needed to detect a 2% and a 5% change")
	o.verdict.register(fs)
	o.registerLoad(fs, "directory for the result files, one per target (default results/ab-<workload>-<UTC time>)")
	o.target.registerEphemeral(fs)
	if f := fs.Lookup("warmup"); f != nil {
		o.warmup = abWarmup
		f.DefValue = abWarmup.String()
		f.Usage = "run this long before measuring each step of each turn (not counted)"
	}
	return cmd
}

// abTarget is one target while the run lasts.
type abTarget struct {
	spec      plan.TargetSpec
	tgt       *openTarget
	scale     int
	hasTables bool
}

func (o *abOptions) validate() (specs []plan.TargetSpec, bounds stats.Bounds, opt stats.Options, err error) {
	if err := o.validateLoad(); err != nil {
		return nil, nil, opt, err
	}
	if o.rounds < 2 {
		return nil, nil, opt, Usagef("--rounds must be at least 2 for a paired comparison (6 or more also give a distribution-free interval)")
	}
	seen := map[int]bool{}
	for _, c := range o.clients {
		if seen[c] {
			return nil, nil, opt, Usagef("-c lists %d twice: each client count is one step of the comparison", c)
		}
		seen[c] = true
	}
	if o.slice > 0 && !o.sliceSet && (o.duration <= 0 || len(o.disturb.list) > 0 || o.connect) {
		// -t, -C and disturbances need whole-step turns; the default
		// gives way to them, an explicit --slice does not.
		o.slice = 0
	}
	if o.slice > 0 {
		if o.settle == 0 {
			o.settle = o.slice / 10
		}
		switch {
		case o.duration <= 0:
			return nil, nil, opt, Usagef("--slice needs -T: each target gets -T of measured time per step, in slices")
		case o.settle >= o.slice:
			return nil, nil, opt, Usagef("--slice-settle %v must be shorter than --slice %v", o.settle, o.slice)
		case len(o.disturb.list) > 0:
			return nil, nil, opt, Usagef("disturbances run with whole-step turns only: drop --slice")
		case o.connect:
			return nil, nil, opt, Usagef("-C opens a connection per transaction; --slice keeps one per target: use one or the other")
		}
	} else if o.settle > 0 {
		return nil, nil, opt, Usagef("--slice-settle needs --slice")
	}
	need := 2
	if o.calibrate {
		need = 1
	}
	specs, err = plan.ParseTargets(o.targets, o.baseline, need)
	if err != nil {
		return nil, nil, opt, &UsageError{Err: err}
	}
	if o.calibrate {
		// The baseline against itself: a second instance of the same spec.
		// An ephemeral baseline gets a cluster of its own, as a candidate
		// would, so cluster-to-cluster differences count as noise too.
		twin := specs[0]
		twin.Name = specs[0].Name + "-aa"
		specs = []plan.TargetSpec{specs[0], twin}
	}
	ephemeral, dsn := false, false
	for _, s := range specs {
		ephemeral = ephemeral || s.Ephemeral()
		dsn = dsn || !s.Ephemeral()
	}
	t := &o.target
	if !ephemeral && (t.pgBin != "" || t.tmpfs || t.tcp || t.keep || len(t.sets) > 0) {
		return nil, nil, opt, Usagef("--pg-bin, --tmpfs, --tcp, --keep and --set apply to ephemeral targets (bin: and settings:), and every target is dsn:")
	}
	for _, s := range t.sets {
		if _, err := target.ParseSetting(s); err != nil {
			return nil, nil, opt, Usagef("--set: %v", err)
		}
	}
	if o.doInit && !dsn {
		return nil, nil, opt, Usagef("--init applies to dsn: targets; ephemeral targets are always initialised")
	}
	bounds, opt, err = o.verdict.parse()
	if err != nil {
		return nil, nil, opt, err
	}
	if !o.calibrate {
		if err := report.CheckBounds(o.clients, bounds, opt); err != nil {
			return nil, nil, opt, &UsageError{Err: err}
		}
	}
	return specs, bounds, opt, nil
}

func (o *abOptions) runAB(ctx context.Context, argv []string, stdout, stderr io.Writer) error {
	specs, bounds, statsOpt, err := o.validate()
	if err != nil {
		return err
	}
	wl, setupSQL, described, err := o.loadWorkload(stdout)
	if err != nil || described {
		return err
	}
	seed, err := resolveSeed(o.orderSeed)
	if err != nil {
		return Usagef("--order-seed: %v", err)
	}
	if o.calibrate && len(o.targets) > 1 {
		fmt.Fprintf(stderr, "--calibrate: running %s against itself; the other targets are not run\n", specs[0].Name)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	started := time.Now().UTC()

	targets, err := o.openTargets(ctx, specs, stderr)
	defer func() {
		for _, t := range targets {
			if t.tgt != nil {
				t.tgt.Close()
			}
		}
	}()
	if err != nil {
		return err
	}
	if err := o.prepareTargets(ctx, targets, wl, setupSQL, stderr); err != nil {
		return err
	}

	ab := &plan.AB{Rounds: o.rounds, Seed: seed, Slice: o.slice, Settle: o.settle}
	if o.slice > 0 {
		// Every probe watches one server for a whole step; in slices the
		// step is shared, so its evidence would not be one target's.
		o.probes.none = true
	}
	for _, t := range targets {
		sw, err := o.newSweep(t.tgt, wl, t.scale, t.hasTables, stderr)
		// Each target has probes of its own, holding connections: close
		// them all at the end (o.probes.close knows only the last).
		for _, obs := range sw.Observers {
			if c, ok := obs.(interface{ Close() }); ok {
				defer c.Close()
			}
		}
		if err != nil {
			return err
		}
		ab.Targets = append(ab.Targets, plan.ABTarget{Name: t.spec.Name, Sweep: *sw})
	}
	interval := ab.Targets[0].Sweep.Engine.Interval
	fmt.Fprintf(stderr, "ab: %s\n", o.plannedTime(len(targets)))
	ab.BeforeTurn = func(r, ti int) {
		if ti < 0 {
			fmt.Fprintf(stderr, "round %d/%d: every target, in %v slices\n", r, o.rounds, o.slice)
			return
		}
		fmt.Fprintf(stderr, "round %d/%d: %s\n", r, o.rounds, targets[ti].spec.Name)
	}
	ab.AfterStep = func(r, ti int, s result.Step) {
		fmt.Fprintf(stderr, "  %s: %s\n", targets[ti].spec.Name, plan.DescribeStep(s))
	}
	run, runErr := ab.Run(ctx)
	if run == nil {
		return runErr
	}

	files := o.resultFiles(argv, wl, targets, run, runErr, ctx.Err() != nil, seed, started, interval)
	dir := o.out
	if dir == "" {
		dir = filepath.Join("results", fmt.Sprintf("ab-%s-%s", sanitize(wl.Name), started.Format("20060102T150405Z")))
	}
	inputs := make([]report.Input, len(files))
	var werrs []error
	for i, f := range files {
		inputs[i] = report.Input{Name: targets[i].spec.Name, File: f}
		if err := result.Write(filepath.Join(dir, f.AB.Targets[i].File), f); err != nil {
			werrs = append(werrs, fmt.Errorf("write result file: %w", err))
		}
	}
	status := ""
	if runErr != nil {
		status = fmt.Sprintf(" (incomplete: %d of %d rounds done)", run.RoundsDone, o.rounds)
	}
	fmt.Fprintf(stdout, "results: %s, one file per target%s\n\n", dir, status)

	var verdictErr error
	switch {
	case run.RoundsDone == 0:
		fmt.Fprintln(stdout, "no round completed: nothing to compare")
	case o.calibrate:
		noise, err := report.Noise(inputs[0], inputs[1], stats.NoiseOptions{Options: statsOpt})
		if err != nil {
			return err
		}
		if err := report.WriteNoiseText(stdout, noise); err != nil {
			return err
		}
	default:
		rep, err := report.Compare(inputs, report.CompareOptions{Bounds: bounds, Stats: statsOpt})
		if err != nil {
			return &UsageError{Err: err}
		}
		if err := o.verdict.write(rep, inputs, stdout); err != nil {
			werrs = append(werrs, err)
		}
		verdictErr = verdictError(rep)
	}
	if runErr != nil {
		msg := fmt.Errorf("a round could not complete; the %d rounds done are saved and compared: %w", run.RoundsDone, runErr)
		if ctx.Err() != nil {
			msg = fmt.Errorf("interrupted; the %d rounds done are saved and compared", run.RoundsDone)
		}
		return errors.Join(append(werrs, &IncompleteError{Err: msg})...)
	}
	if len(werrs) > 0 {
		return errors.Join(werrs...)
	}
	return verdictErr
}

// plannedTime says how long the run will take.
func (o *abOptions) plannedTime(targets int) string {
	if o.slice > 0 {
		steps := o.rounds * len(o.clients)
		total := time.Duration(steps) * (time.Duration(targets)*o.duration + o.warmup)
		return fmt.Sprintf("%d rounds × %d steps × (%d targets × %v in %v slices + %v warm-up) ≈ %v",
			o.rounds, len(o.clients), targets, o.duration, o.slice, o.warmup, total.Round(time.Second))
	}
	steps := o.rounds * targets * len(o.clients)
	s := fmt.Sprintf("%d targets × %d rounds × %d steps", targets, o.rounds, len(o.clients))
	if o.duration > 0 {
		total := time.Duration(steps) * (o.duration + o.warmup)
		s += fmt.Sprintf(" × (%v + %v warm-up) ≈ %v", o.duration, o.warmup, total.Round(time.Second))
	}
	return s
}

// openTargets starts the ephemeral targets (in parallel) and names the dsn
// ones. It returns every target opened so far, also on error, so the
// caller can close them.
func (o *abOptions) openTargets(ctx context.Context, specs []plan.TargetSpec, log io.Writer) ([]*abTarget, error) {
	// Find every build's binaries first: a wrong directory is a usage
	// error, found before any server starts.
	bins := make([]string, len(specs))
	for i, s := range specs {
		if !s.Ephemeral() {
			continue
		}
		pgBin := o.target.pgBin
		if s.Kind == plan.BinTarget {
			pgBin = s.BinDir
		}
		bin, err := target.FindBinDir(pgBin)
		if err != nil {
			return nil, &UsageError{Err: fmt.Errorf("target %s: %w", s.Name, err)}
		}
		bins[i] = bin
	}
	targets := make([]*abTarget, len(specs))
	errs := make([]error, len(specs))
	dataBytes := workload.DataBytes(o.init.opts.Scale)
	var wg sync.WaitGroup
	for i, s := range specs {
		targets[i] = &abTarget{spec: s}
		if !s.Ephemeral() {
			targets[i].tgt, errs[i] = openDSN(s.DSN, log)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := targets[i]
			tgt, err := o.target.startCluster(ctx, bins[i], t.spec.Settings, dataBytes, maxOf(o.clients)+o.disturb.sessions(), log)
			if err != nil {
				errs[i] = wrapTarget(t.spec.Name, err)
				return
			}
			t.tgt = tgt
		}()
	}
	wg.Wait()
	for i, t := range targets {
		if t.tgt != nil {
			t.tgt.Info.Name = specs[i].Name
		}
	}
	return targets, firstError(errs)
}

// firstError returns the first usage error, else the first error, keeping
// its type for the exit code.
func firstError(errs []error) error {
	var first error
	for _, err := range errs {
		var ue *UsageError
		if errors.As(err, &ue) {
			return err
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// prepareTargets gives every target the workload's data: the same init
// with the same options on every ephemeral target, so they start equal.
// Ephemeral targets are prepared in parallel, each on its own cluster; dsn
// targets one after the other, as two of them may be one database (a
// server and a pooler in front of it).
func (o *abOptions) prepareTargets(ctx context.Context, targets []*abTarget, wl *loaded, setupSQL string, log io.Writer) error {
	errs := make([]error, len(targets))
	prepare := func(i int) {
		t := targets[i]
		scale, has, err := o.prepareData(ctx, t.tgt, wl, setupSQL, log)
		if err != nil {
			errs[i] = wrapTarget(t.spec.Name, err)
			return
		}
		t.scale, t.hasTables = scale, has
		recordServerInfo(ctx, t.tgt, &t.tgt.Info)
	}
	var wg sync.WaitGroup
	for i, t := range targets {
		if t.spec.Ephemeral() {
			wg.Add(1)
			go func() { defer wg.Done(); prepare(i) }()
		}
	}
	wg.Wait()
	for i, t := range targets {
		if !t.spec.Ephemeral() && firstError(errs) == nil {
			prepare(i)
		}
	}
	if err := firstError(errs); err != nil {
		return err
	}
	for _, t := range targets[1:] {
		if t.scale != targets[0].scale {
			return Usagef("targets %s and %s hold different data (scale %d and %d): run pgscale init with the same scale on both, or pass --init",
				targets[0].spec.Name, t.spec.Name, targets[0].scale, t.scale)
		}
	}
	return nil
}

// wrapTarget names the target in err, keeping its exit-code type.
func wrapTarget(name string, err error) error {
	var ue *UsageError
	var ie *IncompleteError
	switch {
	case errors.As(err, &ue):
		return &UsageError{Err: fmt.Errorf("target %s: %w", name, ue.Err)}
	case errors.As(err, &ie):
		return &IncompleteError{Err: fmt.Errorf("target %s: %w", name, ie.Err)}
	}
	return fmt.Errorf("target %s: %w", name, err)
}

// resultFiles builds one result file per target from what the run did.
func (o *abOptions) resultFiles(argv []string, wl *loaded, targets []*abTarget, run *plan.ABRun, runErr error,
	interrupted bool, seed uint64, started time.Time, interval time.Duration) []*result.File {
	abInfo := &result.AB{Run: runID(started), Baseline: targets[0].spec.Name, Rounds: o.rounds,
		RoundsDone: run.RoundsDone, OrderSeed: seed, Calibration: o.calibrate,
		SliceS: o.slice.Seconds(), SliceSettleS: o.settle.Seconds()}
	for _, t := range targets {
		abInfo.Targets = append(abInfo.Targets, result.ABTarget{Name: t.spec.Name, Spec: t.spec.String(), File: t.spec.Name + ".json"})
	}
	for _, order := range run.Order {
		names := make([]string, len(order))
		for i, ti := range order {
			names[i] = targets[ti].spec.Name
		}
		abInfo.Order = append(abInfo.Order, names)
	}
	finished := time.Now().UTC()
	files := make([]*result.File, len(targets))
	for i, t := range targets {
		f := o.newFile(argv, wl)
		f.Started, f.Finished = started, finished
		f.Target = t.tgt.Info
		f.Workload.Scale = t.scale
		f.Workload.IntervalS = interval.Seconds()
		f.Steps = run.Steps[i]
		f.Complete = runErr == nil
		if runErr != nil {
			f.Reason = runErr.Error()
			if interrupted {
				f.Reason = "interrupted"
			}
		}
		f.AB = abInfo
		files[i] = f
	}
	return files
}

// runID returns an identifier shared by the files of one A/B run.
func runID(started time.Time) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return started.Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}
