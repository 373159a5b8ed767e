package plan

import (
	"context"
	cryptorand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/disturb"
	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/probe"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
	"github.com/pgscale/pgscale/internal/workload"
)

// Defaults of an A/B run that differ from a sweep's.
const (
	ABRounds          = 10
	ABCalibrateRounds = 6
	// ABCalibrateLayoutRounds are a calibration's default rounds when its
	// clusters are reshuffled: 6 layouts of ABReshuffle rounds, enough
	// to see the spread between layouts as well as within one.
	ABCalibrateLayoutRounds = 12
	// ABReshuffle is the default of rounds per cluster layout: the
	// fewest that still shows the noise within a layout, and with the
	// default 10 rounds 5 layouts (README, "Layouts").
	ABReshuffle = 2
	ABWarmup    = time.Second
	// ABSlice is the default slice: on this 2-core machine the A/A
	// paired noise of tps fell from 11-19 % with whole-step turns to 3-5 %
	// with 0.1 s slices, and no further with 0.05 s (README, "Slices").
	ABSlice = 100 * time.Millisecond
)

// RunAB runs an A/B run: it opens every target (ephemeral clusters in
// parallel), gives each the same data, runs the rounds — whole-step turns
// in a random order per round, or all targets at once in slices — and
// writes one result file per target into one directory, linked by their
// AB block (with the bounds and confidence, so that compare and report
// reach the run's verdict again). It returns the files and the directory.
// Comparing them is internal/compare's.
//
// Mistakes in the spec, bounds included, are usage errors found before
// anything starts. Once rounds have begun the files are always written,
// marked incomplete when a round could not complete or the run was
// interrupted; the error then says why.
func RunAB(ctx context.Context, spec ABSpec) ([]*result.File, string, error) {
	specs, ds, seed, err := spec.check()
	if err != nil {
		return nil, "", err
	}
	wl, setup, err := spec.loadWorkload()
	if err != nil {
		return nil, "", err
	}
	spec.countNotice(len(specs), spec.Rounds+1) // and the warm-up round
	if spec.Calibrate && len(spec.Targets) > 1 {
		spec.notice(fmt.Sprintf("--calibrate: running %s against itself; the other targets are not run", specs[0].Name))
	}
	perClient := 1
	if spec.Slice > 0 {
		perClient = len(specs) // every client holds a connection to each target
	}
	if err := checkOpenFiles(spec.Load.maxClients(), perClient, disturb.Sessions(ds)); err != nil {
		return nil, "", err
	}
	started := time.Now().UTC()
	targets, err := spec.openAll(ctx, specs, spec.needs(ds, wl))
	defer closeAll(targets)
	if err != nil {
		return nil, "", err
	}
	dir := spec.Out
	if dir == "" {
		dir = filepath.Join("results", fmt.Sprintf("ab-%s-%s", fileName(wl.Name), started.Format("20060102T150405Z")))
	}
	files, err := spec.runOn(ctx, targets, specs, wl, setup, ds, seed, started, dir)
	return files, dir, err
}

// openAll opens every target (ephemeral clusters in parallel), named;
// it returns those opened, also on error, for the caller to close.
func (c *Common) openAll(ctx context.Context, specs []target.Spec, needs target.Needs) ([]*prepared, error) {
	servers, err := target.OpenAll(ctx, specs, c.Cluster, needs, c.notice)
	targets := make([]*prepared, 0, len(specs))
	for i, srv := range servers {
		if srv != nil {
			srv.Info.Name = specs[i].Name
			targets = append(targets, &prepared{name: specs[i].Name, srv: srv})
		}
	}
	return targets, err
}

// closeAll closes every target, poolers first while the servers they
// front still run.
func closeAll(targets []*prepared) {
	for _, pooled := range []bool{true, false} {
		for _, t := range targets {
			if (t.srv.Pooler != nil) == pooled {
				t.close()
			}
		}
	}
}

// runOn runs the A/B rounds on open targets: it gives each the workload's
// data, sets up their probes, meters and disturbances (and ends them
// after), runs the rounds and writes one result file per target into dir.
// It returns the files written (nil when no round started) and why the
// run could not complete.
func (spec *ABSpec) runOn(ctx context.Context, targets []*prepared, specs []target.Spec, wl *workload.Loaded, setup string,
	ds []disturb.Disturbance, seed uint64, started time.Time, dir string) ([]*result.File, error) {
	defer func() {
		for _, t := range targets {
			t.unwatch()
		}
	}()
	err := spec.prepareAll(ctx, targets, specs, wl, setup)
	if err != nil {
		return nil, err
	}
	if spec.Probes.On(probe.NameProfile) || spec.counting() {
		// Every target's pprof files in a directory of its own, by
		// default inside the run's: profiles/NAME/round-R-step-S-cN.pb.gz.
		base := spec.Probes.ProfileDir
		if base == "" {
			base = filepath.Join(dir, "profiles")
		}
		for _, t := range targets {
			t.profileDir = filepath.Join(base, t.name)
		}
	}
	ab := &AB{Rounds: spec.Rounds, Seed: seed, Slice: spec.Slice, Settle: spec.Settle, Reshuffle: spec.reshuffle(targets),
		WarmupRound: spec.counting()}
	if ab.Targets, err = spec.abTargets(ctx, targets, wl, ds); err != nil {
		return nil, err
	}
	obs := spec.observer()
	obs.Observe(spec.planned(specs, ab.Reshuffle))
	ab.BeforeTurn = func(r, ti int) {
		e := observe.RoundStart{Round: r, Rounds: spec.Rounds, Slice: spec.Slice}
		if ti >= 0 {
			e.Target = targets[ti].name
		}
		obs.Observe(e)
	}
	ab.AfterStep = func(_, ti int, s result.Step) { obs.Observe(observe.StepEnd{Step: s, Target: targets[ti].name}) }
	ab.Connecting = func(e observe.Connecting) { obs.Observe(e) }
	mctx, cancel := context.WithCancelCause(ctx)
	stopWatch := watchPoolersWith(targets, cancel)
	layouts := []result.Layout{layoutInfo(1, targets, 0)}
	ab.NewLayout = func(lctx context.Context, n int) ([]ABTarget, error) {
		began := time.Now()
		spec.notice(fmt.Sprintf("layout %d: re-creating the clusters (new data directories, shared memory and sockets) and their data...", n))
		stopWatch()
		ts, err := spec.relayout(lctx, targets, specs, wl, setup, ds)
		stopWatch = watchPoolersWith(targets, cancel)
		if err != nil {
			return nil, err
		}
		layouts = append(layouts, layoutInfo(n, targets, time.Since(began)))
		return ts, nil
	}
	run, runErr := ab.Run(mctx)
	stopWatch()
	cancel(nil)
	if run == nil {
		return nil, runErr
	}
	runErr, exited := blamePooler(ctx, targets, runErr)
	for _, steps := range run.Steps {
		if n := len(steps); n > 0 && steps[n-1].Round == len(run.Order) {
			blameStep(&steps[n-1], exited)
		}
	}
	if runErr != nil && ctx.Err() == nil {
		if note := keepPoolerLogs(targets, func(name, program string) string { return filepath.Join(dir, name+"."+program+".log") }); note != "" {
			runErr = fmt.Errorf("%w; %s", runErr, note)
		}
	}
	files := spec.resultFiles(wl, targets, specs, run, layouts, ab.Reshuffle, runErr, ctx.Err() != nil, seed, started)
	var errs []error
	for i, f := range files {
		path := filepath.Join(dir, f.AB.Targets[i].File)
		relativeProfiles(f.Steps, path)
		if err := result.Write(path, f); err != nil {
			errs = append(errs, fmt.Errorf("write result file: %w", err))
		}
	}
	if runErr != nil {
		msg := fmt.Errorf("a round could not complete; the %d rounds done are saved: %w", run.RoundsDone, runErr)
		if ctx.Err() != nil {
			msg = fmt.Errorf("interrupted; the %d rounds done are saved", run.RoundsDone)
		}
		errs = append(errs, msg)
	}
	return files, errors.Join(errs...)
}

// abTargets sets up what watches every target — its probes with
// whole-step turns, in slices a meter of its server — and returns the
// targets as AB runs them.
func (spec *ABSpec) abTargets(ctx context.Context, targets []*prepared, wl *workload.Loaded, ds []disturb.Disturbance) ([]ABTarget, error) {
	var out []ABTarget
	for _, t := range targets {
		// In slices every probe would watch a step shared by all targets,
		// so its evidence would not be one target's: probes run with
		// whole-step turns only, and in slices a meter reads each
		// target's server at every slice edge instead.
		if err := spec.watch(ctx, t, wl, ds, spec.Slice == 0); err != nil {
			return nil, err
		}
		at := ABTarget{Name: t.name, Sweep: *spec.sweep(t, wl)}
		if spec.Slice > 0 {
			if t.meter = spec.meter(ctx, t); t.meter != nil {
				at.Meter = t.meter.Read
			}
		}
		out = append(out, at)
	}
	return out, nil
}

// reshuffle is the rounds per cluster layout the run uses: spec.Reshuffle
// when the targets run on more than one server and one of those is an
// ephemeral cluster this process can re-create, and the rounds make two
// layouts at least; 0 (one layout) otherwise, and when counting
// instructions (checkCount says why).
func (spec *ABSpec) reshuffle(targets []*prepared) int {
	if spec.Reshuffle <= 0 || spec.counting() {
		return 0
	}
	origins := map[*target.Server]bool{}
	ephemeral := false
	for _, t := range targets {
		origins[t.srv.Origin()] = true
		ephemeral = ephemeral || t.srv.Ephemeral()
	}
	if len(origins) < 2 || !ephemeral {
		return 0
	}
	if spec.Rounds < 2*spec.Reshuffle {
		spec.notice(fmt.Sprintf("--reshuffle %d with %d rounds makes one cluster layout: the clusters are not re-created, and the interval does not cover the fixed difference between them (give --rounds %d or more)",
			spec.Reshuffle, spec.Rounds, 2*spec.Reshuffle))
		return 0
	}
	return spec.Reshuffle
}

// relayout re-creates the ephemeral clusters of an A/B run (target.Renew)
// for a new layout, gives them the data again, the same as before, and
// returns the targets as AB runs them on it.
func (spec *ABSpec) relayout(ctx context.Context, targets []*prepared, specs []target.Spec, wl *workload.Loaded, setup string,
	ds []disturb.Disturbance) ([]ABTarget, error) {
	servers := make([]*target.Server, len(targets))
	var renewed []*prepared
	var renewedSpecs []target.Spec
	for i, t := range targets {
		t.unwatch()
		servers[i] = t.srv
		if t.srv.Ephemeral() {
			renewed, renewedSpecs = append(renewed, t), append(renewedSpecs, specs[i])
		}
	}
	if err := target.Renew(ctx, servers); err != nil {
		return nil, fmt.Errorf("re-create the clusters: %w", err)
	}
	if err := spec.prepareAll(ctx, renewed, renewedSpecs, wl, setup); err != nil {
		return nil, err
	}
	return spec.abTargets(ctx, targets, wl, ds)
}

// layoutInfo records layout n as the targets now are: where each one's
// clients connect, and how long making it took.
func layoutInfo(n int, targets []*prepared, took time.Duration) result.Layout {
	l := result.Layout{Layout: n, SetupS: took.Seconds(), Servers: map[string]string{}}
	for _, t := range targets {
		l.Servers[t.name] = t.srv.Info.Description
	}
	return l
}

// check finds the mistakes in the spec before anything starts, sets the
// defaults that depend on the rest (slices give way to -t, -C and
// disturbances), and returns the targets (baseline first; with Calibrate
// the baseline twice), the disturbances and the order seed.
func (spec *ABSpec) check() ([]target.Spec, []disturb.Disturbance, uint64, error) {
	ds, err := spec.Common.check()
	if err != nil {
		return nil, nil, 0, err
	}
	l := spec.Load
	if spec.Reshuffle < 0 {
		return nil, nil, 0, usage.Errorf("--reshuffle must be 0 (keep the clusters) or a number of rounds per cluster layout")
	}
	seen := map[int]bool{}
	for _, c := range l.Clients {
		if seen[c] {
			return nil, nil, 0, usage.Errorf("-c lists %d twice: each client count is one step of the comparison", c)
		}
		seen[c] = true
	}
	if spec.Slice > 0 && !spec.SliceGiven && (l.Duration <= 0 || len(ds) > 0 || l.Connect) {
		spec.Slice = 0 // -t, -C and disturbances need whole-step turns
	}
	if spec.Slice > 0 {
		if spec.Settle == 0 {
			spec.Settle = spec.Slice / 10
		}
		switch {
		case l.Duration <= 0:
			return nil, nil, 0, usage.Errorf("--slice needs -T: each target gets -T of measured time per step, in slices")
		case spec.Settle >= spec.Slice:
			return nil, nil, 0, usage.Errorf("--slice-settle %v must be shorter than --slice %v", spec.Settle, spec.Slice)
		case len(ds) > 0:
			return nil, nil, 0, usage.Errorf("disturbances run with whole-step turns only: drop --slice")
		case l.Connect:
			return nil, nil, 0, usage.Errorf("-C opens a connection per transaction; --slice keeps one per target: use one or the other")
		case spec.Probes.On(probe.NameProfile):
			// Probes watch one server for a whole step, which slices share
			// between the targets: --profile would record nothing.
			return nil, nil, 0, usage.Errorf("--profile records each target's steps with whole-step turns only: add --slice 0")
		}
	} else if spec.Settle > 0 {
		return nil, nil, 0, usage.Errorf("--slice-settle needs --slice")
	}
	need := 2
	if spec.Calibrate {
		need = 1
	}
	specs, err := target.ParseSpecs(spec.Targets, spec.Baseline, need)
	if err != nil {
		return nil, nil, 0, usage.Wrap(err)
	}
	if spec.Calibrate && spec.Rounds == 0 {
		// An ephemeral baseline calibrates against a cluster of its own,
		// re-created for every layout: enough layouts to see their spread.
		spec.Rounds = ABCalibrateRounds
		if specs[0].Ephemeral() && spec.Reshuffle > 0 {
			spec.Rounds = max(ABCalibrateLayoutRounds, 6*spec.Reshuffle)
		}
	}
	if spec.Rounds < 2 {
		return nil, nil, 0, usage.Errorf("--rounds must be at least 2 for a paired comparison (6 or more also give a distribution-free interval)")
	}
	if spec.Calibrate {
		// The baseline against itself: a second instance of the same spec.
		// An ephemeral baseline gets a cluster of its own, as a candidate
		// would, so cluster-to-cluster differences count as noise too.
		twin := specs[0]
		twin.Name = specs[0].Name + "-aa"
		specs = []target.Spec{specs[0], twin}
		spec.Cluster.Separate = true
	}
	if err := spec.Cluster.Check(specs); err != nil {
		return nil, nil, 0, err
	}
	dsn := false
	for _, s := range specs {
		dsn = dsn || !s.Ephemeral()
	}
	if spec.Data.Create && !dsn {
		return nil, nil, 0, usage.Errorf("--init applies to dsn: targets; ephemeral targets are always initialised")
	}
	if !(spec.Confidence == 0 || spec.Confidence > 0 && spec.Confidence < 1) {
		return nil, nil, 0, usage.Errorf("--confidence must be between 0 and 1, e.g. 0.95")
	}
	bounds, err := stats.ParseBounds(spec.Bounds)
	if err != nil {
		return nil, nil, 0, usage.Wrap(err)
	}
	if !spec.Calibrate {
		if err := compare.CheckBounds(l.Clients, bounds, stats.Options{Confidence: spec.Confidence}); err != nil {
			return nil, nil, 0, usage.Wrap(err)
		}
	}
	seed, err := workload.ResolveSeed(spec.OrderSeed)
	if err != nil {
		return nil, nil, 0, usage.Errorf("--order-seed: %v", err)
	}
	return specs, ds, seed, nil
}

// prepareAll gives every target the workload's data: the same init with
// the same options on every ephemeral target, so they start equal.
// Ephemeral targets are prepared in parallel, each on its own cluster;
// dsn targets one after the other, as two of them may be one database (a
// server and a pooler in front of it).
func (spec *ABSpec) prepareAll(ctx context.Context, targets []*prepared, specs []target.Spec, wl *workload.Loaded, setup string) error {
	// A pooler in front of another target's server shares its data: that
	// server is prepared once, as that target.
	owner := make([]int, len(targets))
	for i, t := range targets {
		owner[i] = -1
		for j, o := range targets {
			if t.srv.Fronts != nil && t.srv.Fronts == o.srv {
				owner[i] = j
			}
		}
	}
	errs := make([]error, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		if specs[i].Ephemeral() && owner[i] < 0 {
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = spec.prepare(ctx, t, wl, setup) }()
		}
	}
	wg.Wait()
	for i, t := range targets {
		if !specs[i].Ephemeral() && owner[i] < 0 && target.FirstError(errs) == nil {
			errs[i] = spec.prepare(ctx, t, wl, setup)
		}
	}
	if err := target.FirstError(errs); err != nil {
		return err
	}
	for i, t := range targets {
		if o := owner[i]; o >= 0 {
			t.data = targets[o].data
			t.srv.RecordInfo(ctx)
		}
	}
	for _, t := range targets[1:] {
		if t.data.Scale != targets[0].data.Scale {
			return usage.Errorf("targets %s and %s hold different data (scale %d and %d): run pgscale init with the same scale on both, or pass --init",
				targets[0].name, t.name, targets[0].data.Scale, t.data.Scale)
		}
	}
	return nil
}

// meter returns what reads the target's server's costs at slice edges, or
// nil (with a notice saying why) when its processes cannot be read here.
func (spec *ABSpec) meter(ctx context.Context, t *prepared) *probe.Meter {
	origin := t.srv.Origin() // the server behind a pooler
	cfg := probe.Config{Conn: origin.Config}
	if origin.Cluster != nil {
		cfg.ServerPIDFunc = origin.Cluster.PID
	}
	if t.srv.Pooler != nil {
		cfg.PoolerPID = t.srv.Pooler.PID()
	}
	m, err := probe.NewMeter(ctx, cfg)
	if err != nil {
		spec.notice(fmt.Sprintf("target %s: no per-slice server costs: %v", t.name, err))
		return nil
	}
	return m
}

// planned is the run's plan, as an event: how long it will take.
func (spec *ABSpec) planned(specs []target.Spec, reshuffle int) observe.ABStart {
	l := spec.Load
	e := observe.ABStart{Rounds: spec.Rounds, Clients: l.Clients, Duration: l.Duration, Warmup: l.Warmup, Slice: spec.Slice}
	if reshuffle > 0 {
		e.Reshuffle, e.Layouts = reshuffle, (spec.Rounds+reshuffle-1)/reshuffle
	}
	for _, s := range specs {
		e.Targets = append(e.Targets, s.Name)
	}
	steps := time.Duration(spec.Rounds * len(l.Clients))
	if spec.Slice > 0 {
		e.Total = (steps * (time.Duration(len(specs))*l.Duration + l.Warmup)).Round(time.Second)
	} else if l.Duration > 0 {
		e.Total = (steps * time.Duration(len(specs)) * (l.Duration + l.Warmup)).Round(time.Second)
	}
	return e
}

// resultFiles builds one result file per target from what the run did.
func (spec *ABSpec) resultFiles(wl *workload.Loaded, targets []*prepared, specs []target.Spec, run *ABRun, layouts []result.Layout,
	reshuffle int, runErr error, interrupted bool, seed uint64, started time.Time) []*result.File {
	abInfo := &result.AB{Run: runID(started), Baseline: targets[0].name, Rounds: spec.Rounds,
		RoundsDone: run.RoundsDone, OrderSeed: seed, Calibration: spec.Calibrate,
		SliceS: spec.Slice.Seconds(), SliceSettleS: spec.Settle.Seconds(), Bounds: spec.Bounds, Confidence: spec.Confidence}
	abInfo.Reshuffle = reshuffle
	for _, l := range layouts {
		for r, n := range run.Layouts {
			if n == l.Layout {
				l.Rounds = append(l.Rounds, r+1)
			}
		}
		if len(l.Rounds) > 0 {
			abInfo.Layouts = append(abInfo.Layouts, l)
		}
	}
	for i, t := range targets {
		abInfo.Targets = append(abInfo.Targets, result.ABTarget{Name: t.name, Spec: specs[i].String(), File: t.name + ".json"})
	}
	for _, order := range run.Order {
		names := make([]string, len(order))
		for i, ti := range order {
			names[i] = targets[ti].name
		}
		abInfo.Order = append(abInfo.Order, names)
	}
	finished := time.Now().UTC()
	files := make([]*result.File, len(targets))
	for i, t := range targets {
		f := spec.newFile(wl, started)
		f.Finished = finished
		f.Target = t.srv.Info
		f.Workload.Scale = t.data.Scale
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
	_, _ = cryptorand.Read(b[:])
	return started.Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// ABTarget is one target of an A/B run, ready to run.
type ABTarget struct {
	// Name names the target in result files and reports.
	Name string
	// Sweep is what one turn of the target runs: the client counts, the
	// engine template with Conn pointing at this target, the program,
	// observers and BeforeStep. Its AfterStep is replaced by AB's.
	Sweep Sweep
	// Meter, when set, reads what the target's server has cost so far
	// (probe.Meter): in slices, every slice's share is kept with the step
	// (result.Step.Costs).
	Meter func() map[string]float64
}

// AB runs interleaved A/B rounds. With whole-step turns (Slice zero) every
// target runs its whole sweep once per round, in an order drawn at random
// for that round (RoundOrder), so drift and warm-up hit every target alike;
// the engine's Warmup, run at the start of every step, is the per-target,
// per-round warm-up that is not counted. With slices every step of a round
// runs all targets at once, switching target every Slice (runSlices).
type AB struct {
	Targets []ABTarget
	Rounds  int
	// Seed draws the order of the targets in each round; record it to
	// repeat the order.
	Seed uint64
	// Slice, when positive, interleaves the targets in slices of this
	// length inside every step instead of whole-step turns (runSlices);
	// the first Settle of every slice is not counted.
	Slice, Settle time.Duration
	// BeforeTurn, when set, is called as a target starts its turn in a
	// round (1-based), with its index in Targets; with slices it is called
	// before every step with target -1 (all targets).
	BeforeTurn func(round, target int)
	// AfterStep, when set, sees each step as soon as it is done.
	AfterStep func(round, target int, s result.Step)
	// Connecting, when set, is told how far the connection phase of each
	// step in slices has come (the targets' Sweep.Connecting is told it
	// with whole-step turns).
	Connecting func(observe.Connecting)
	// Reshuffle, when positive, starts a new layout every Reshuffle
	// rounds: before round 1+Reshuffle, 1+2·Reshuffle, ... NewLayout is
	// called with the layout's number (from 2) and returns the targets as
	// they are on it, which replace Targets.
	Reshuffle int
	NewLayout func(ctx context.Context, layout int) ([]ABTarget, error)
	// WarmupRound runs every target's whole sweep once before round 1,
	// the same transactions as a round but unwatched and not recorded,
	// so that round 1 starts from the state every later round starts
	// from. Counting instructions needs it: without it a fresh server's
	// first round read pages into shared buffers that later rounds found
	// there, and counted up to 1 % more (shared_buffers=12MB at scale 1),
	// while the next rounds counted the same to within 2 instructions.
	WarmupRound bool
}

// ABRun is what an A/B run did, also when it stopped early.
type ABRun struct {
	// Order holds, for every round started, the target indexes in the
	// order they ran.
	Order [][]int
	// Steps holds every target's steps of all rounds, in the order run,
	// each with its Round set.
	Steps [][]result.Step
	// RoundsDone counts the rounds in which every target completed every
	// step with at least one transaction: the rounds that can be compared.
	RoundsDone int
	// Layouts holds, for every round started, the layout it ran on (1
	// for all without Reshuffle).
	Layouts []int
}

// layout readies round r's layout: a new one every Reshuffle rounds
// (NewLayout), and records it.
func (ab *AB) layout(ctx context.Context, r int, run *ABRun) error {
	n := 1
	if ab.Reshuffle > 0 {
		n = (r-1)/ab.Reshuffle + 1
		if r > 1 && (r-1)%ab.Reshuffle == 0 && ab.NewLayout != nil {
			ts, err := ab.NewLayout(ctx, n)
			if err != nil {
				return fmt.Errorf("round %d, cluster layout %d: %w", r, n, err)
			}
			ab.Targets = ts
		}
	}
	run.Layouts = append(run.Layouts, n)
	return nil
}

// RoundOrder returns the order in which n targets run in the given round:
// a permutation of 0..n-1 drawn from seed and the round alone, so the order
// of any round can be recomputed from the seed recorded in the result.
func RoundOrder(seed uint64, round, n int) []int {
	return rand.New(rand.NewPCG(seed, uint64(round))).Perm(n)
}

// noTransactions is the reason given to a step that ran its whole measured
// window without completing a transaction: it has no value to compare.
const noTransactions = "no transaction completed in the measured window"

// markEmpty sets the step's round, and marks it incomplete when it ran its
// window without a transaction; it reports whether it did.
func markEmpty(s *result.Step, round int) bool {
	s.Round = round
	if s.Complete && s.Summary.Transactions == 0 {
		s.Complete, s.Reason = false, noTransactions
		return true
	}
	return false
}

// Run runs the rounds. On an interrupt or a step that could not complete
// (the server gone, every client failed) it stops at once and returns what
// was done, with the error; the steps of the unfinished round are kept, the
// failed one marked incomplete. A step that ran its window without a single
// transaction is marked incomplete too, but the run goes on: its round is
// not counted in RoundsDone, and Run returns an error at the end.
func (ab *AB) Run(ctx context.Context) (*ABRun, error) {
	if len(ab.Targets) < 1 {
		return nil, fmt.Errorf("plan: an A/B run needs targets")
	}
	if ab.Rounds < 1 {
		return nil, fmt.Errorf("plan: rounds must be at least 1, got %d", ab.Rounds)
	}
	if ab.Slice > 0 {
		return ab.runSlices(ctx)
	}
	run := &ABRun{Steps: make([][]result.Step, len(ab.Targets))}
	if ab.WarmupRound {
		for _, t := range ab.Targets {
			sw := t.Sweep
			sw.Watchers, sw.AfterStep, sw.Transactions, sw.HoldEdges = nil, nil, nil, true
			if _, err := sw.Run(ctx); err != nil {
				return run, fmt.Errorf("warm-up round, target %s: %w", t.Name, err)
			}
		}
	}
	var empty []string
	for r := 1; r <= ab.Rounds; r++ {
		if err := ctx.Err(); err != nil {
			return run, err
		}
		if err := ab.layout(ctx, r, run); err != nil {
			return run, err
		}
		order := RoundOrder(ab.Seed, r, len(ab.Targets))
		run.Order = append(run.Order, order)
		complete := true
		for _, ti := range order {
			if err := ctx.Err(); err != nil {
				return run, err
			}
			if ab.BeforeTurn != nil {
				ab.BeforeTurn(r, ti)
			}
			sw := ab.Targets[ti].Sweep
			sw.Round = r
			sw.AfterStep = func(_ int, s result.Step) {
				if ab.AfterStep != nil {
					markEmpty(&s, r)
					ab.AfterStep(r, ti, s)
				}
			}
			steps, err := sw.Run(ctx)
			for i := range steps {
				s := &steps[i]
				if markEmpty(s, r) {
					empty = append(empty, fmt.Sprintf("round %d, %s, %d clients", r, ab.Targets[ti].Name, s.Clients))
				}
				complete = complete && s.Complete
			}
			run.Steps[ti] = append(run.Steps[ti], steps...)
			if err != nil {
				return run, fmt.Errorf("round %d, target %s: %w", r, ab.Targets[ti].Name, err)
			}
		}
		if complete {
			run.RoundsDone++
		}
	}
	if len(empty) > 0 {
		return run, fmt.Errorf("%s: %s", noTransactions, strings.Join(empty, "; "))
	}
	return run, nil
}
