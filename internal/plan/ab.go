package plan

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/pgscale/pgscale/internal/agent"
	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/disturb"
	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/target"
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
	// default 10 rounds 5 layouts (docs/ab-and-compare.md, "Cluster layouts").
	ABReshuffle = 2
	ABWarmup    = time.Second
	// ABSlice is the default slice: on this 2-core machine the A/A
	// paired noise of tps fell from 11-19 % with whole-step turns to 3-5 %
	// with 0.1 s slices, and no further with 0.05 s (docs/ab-and-compare.md, "Slices against whole-step turns").
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
func RunAB(ctx context.Context, spec ABSpec) (_ []*result.File, _ string, err error) {
	specs, ds, seed, err := spec.check()
	if err != nil {
		return nil, "", err
	}
	wl, setup, err := spec.loadWorkload()
	if err != nil {
		return nil, "", err
	}
	if err := checkTopology(specs, wl); err != nil {
		return nil, "", err
	}
	layouts := 1
	if n := spec.Reshuffle; spec.counting() && (!spec.ReshuffleGiven || n > 0) && spec.Rounds >= 2 {
		if !spec.ReshuffleGiven {
			n = CountedReshuffle
		}
		layouts = (spec.Rounds + n - 1) / n
	}
	spec.countNotice(len(specs), spec.Rounds+1, layouts) // and the warm-up round
	if spec.Calibrate && len(spec.given()) > 1 {
		spec.notice(fmt.Sprintf("--calibrate: running %s against itself; the other targets are not run", specs[0].Name))
	}
	perClient := 1
	if spec.Slice > 0 {
		perClient = len(specs) // every client holds a connection to each target
	}
	if err := checkOpenFiles(spec.Load.maxClients(), perClient, disturb.Sessions(ds)); err != nil {
		return nil, "", err
	}
	if err := checkOut(cmp.Or(spec.Out, "results"), true); err != nil {
		return nil, "", err
	}
	started := time.Now().UTC()
	dir := spec.Out
	if dir == "" {
		dir = filepath.Join("results", fmt.Sprintf("ab-%s-%s", fileName(wl.Name), started.Format("20060102T150405Z")))
	}
	var coord *agent.Coordinator
	if spec.Agents != nil {
		// Opened before the targets start, so that the agents join while
		// the clusters start and the data is made.
		if coord, err = spec.openAgents(ctx, spec.Agents); err != nil {
			return nil, "", err
		}
		defer func() { _ = coord.Close(ctx, err) }()
	}
	targets, err := spec.openAll(ctx, specs, spec.needs(ds, wl))
	defer closeAll(targets)
	if err != nil {
		return nil, "", keepStartLog(err, func(name, program string) string { return filepath.Join(dir, name+"."+program+".log") })
	}
	files, err := spec.runOn(ctx, targets, specs, wl, setup, ds, seed, started, &dir, coord)
	return files, dir, err
}

// runOn runs the A/B rounds on open targets: it gives each the workload's
// data, sets up their probes, meters and disturbances (and ends them
// after), runs the rounds and writes one result file per target into
// *outDir — or, when the first cannot be written there, all of them into
// a directory of the same name where they can be (writeResult), *outDir
// then naming it. With coord every target's steps run on its agents, in
// the target's turn, and each target's file lists them and keeps each
// agent's own file beside it. It returns the files written (nil when no
// round started) and why the run could not complete.
func (spec *ABSpec) runOn(ctx context.Context, targets []*prepared, specs []target.Spec, wl *workload.Loaded, setup string,
	ds []disturb.Disturbance, seed uint64, started time.Time, outDir *string, coord *agent.Coordinator) ([]*result.File, error) {
	dir := *outDir
	defer func() {
		for _, t := range targets {
			t.unwatch()
		}
	}()
	rig := &abRig{spec: spec, targets: targets, specs: specs, wl: wl, setup: setup, ds: ds, coord: coord}
	began := time.Now()
	err := rig.prepare(ctx, rig.all())
	if err != nil {
		return nil, err
	}
	setupTook := time.Since(began)
	if spec.Probes.On(probeid.Profile.Name) || spec.counting() {
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
	ab.WarmedUp = func(took time.Duration) {
		relayouts := 0
		if ab.Reshuffle > 0 {
			relayouts = (spec.Rounds+ab.Reshuffle-1)/ab.Reshuffle - 1
		}
		spec.countEstimate(took, setupTook, spec.Rounds, len(targets)*len(spec.Load.Clients), relayouts)
	}
	ab.RoundDone = func(r int, took time.Duration) {
		// The first round like those to come: round 1, or with a new
		// layout every round round 2, which made one.
		if r == 1 && ab.Reshuffle == 0 || r == 2 && ab.Reshuffle == 1 {
			spec.roundEstimate(r, took, spec.Rounds-r)
		}
	}
	if ab.Targets, err = rig.abTargets(ctx); err != nil {
		return nil, err
	}
	if coord != nil {
		for _, t := range targets {
			t.agentSteps = nil // a suite's earlier cell's
		}
		if err := spec.gatherAgents(ctx, coord, targets[0], wl, ab.Targets[0].Sweep.AgentsTarget); err != nil {
			return nil, err
		}
	}
	obs := spec.observer()
	obs.Observe(spec.planned(specs, ab.Reshuffle))
	ab.BeforeTurn = func(r, ti int) {
		e := observe.RoundStart{Round: r, Rounds: spec.Rounds, Auto: spec.RoundsMax > 0, Slice: spec.Slice}
		if ti >= 0 {
			e.Target = targets[ti].name
		}
		obs.Observe(e)
	}
	ab.AfterStep = func(r, ti int, s result.Step) {
		obs.Observe(observe.StepEnd{Step: s, Target: targets[ti].name})
		spec.countLost(r, targets[ti].name, &s)
	}
	ab.Connecting = func(e observe.Connecting) { obs.Observe(e) }
	mctx, cancel := context.WithCancelCause(ctx)
	stopWatch := watchPoolersWith(targets, cancel)
	layouts := []result.Layout{rig.layout(1, 0)}
	ab.NewLayout = func(lctx context.Context, n int) ([]ABTarget, error) {
		began := time.Now()
		spec.notice(fmt.Sprintf("layout %d: re-creating the clusters (new data directories, shared memory and sockets) and their data...", n))
		stopWatch()
		ts, err := rig.relayout(lctx)
		stopWatch = watchPoolersWith(targets, cancel)
		if err != nil {
			return nil, err
		}
		layouts = append(layouts, rig.layout(n, time.Since(began)))
		return ts, nil
	}
	if spec.RoundsMax > 0 {
		spec.untilDecided(ab, func(run *ABRun) []*result.File {
			return spec.resultFiles(wl, targets, specs, run, withRoundTimes(layouts, run), ab.Reshuffle, nil, false, seed, started)
		})
	}
	run, runErr := ab.Run(mctx)
	stopWatch()
	cancel(nil)
	if run == nil {
		return nil, runErr
	}
	layouts = withRoundTimes(layouts, run)
	spec.timesNotice(layouts)
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
	wrote := 0
	for i, f := range files {
		name := f.AB.Targets[i].File
		path := filepath.Join(dir, name)
		relativeProfiles(f.Steps, path)
		if *outDir != dir {
			path = filepath.Join(*outDir, name) // the first could not be written in dir: the others join it
		}
		if coord != nil {
			f.Coordination, f.Agents = coord.Coordination(), agentTotals(coord, f.Steps)
			errs = append(errs, agentFiles(f, coord, targets[i].agentSteps, path))
		}
		written, err := writeResult(path, rescueName(dir, name), f)
		if err != nil && i == 0 && written != "" {
			*outDir = filepath.Dir(written)
		}
		if written != "" {
			wrote++
		}
		errs = append(errs, err)
	}
	if wrote == 0 {
		*outDir = "" // no directory to name: none was written, as errs say
	}
	if runErr != nil {
		// Why the run stopped comes first, what could not be written of
		// it after.
		saved := fmt.Sprintf("the %d rounds done are saved", run.RoundsDone)
		if wrote < len(files) {
			saved = fmt.Sprintf("%d rounds were done", run.RoundsDone)
		}
		msg := fmt.Errorf("a round could not complete; %s: %w", saved, runErr)
		if ctx.Err() != nil {
			msg = fmt.Errorf("interrupted; %s", saved)
		}
		errs = append([]error{msg}, errs...)
	}
	return files, errors.Join(errs...)
}

// untilDecided makes the rounds stop once every bounded measure of every
// candidate is decided, or one failed, which decides the verdict
// (rounding until decided): after each complete
// round it compares the files the rounds so far make, at the look of that
// round (an interim comparison: outcomes only), and says how far the
// decision has come; with a time budget the rounds stop before one that
// would end past it.
func (spec *ABSpec) untilDecided(ab *AB, files func(*ABRun) []*result.File) {
	if spec.Budget > 0 {
		ab.Deadline = time.Now().Add(spec.Budget)
	}
	if spec.Decide != nil {
		ab.Decided = func(run *ABRun) (bool, string) { return spec.Decide(files(run)) }
		return
	}
	bounds := spec.Bounds
	ab.Decided = func(run *ABRun) (bool, string) {
		fs := files(run)
		inputs := make([]compare.Input, len(fs))
		for i, f := range fs {
			inputs[i] = compare.Input{Name: f.Target.Name, File: f}
		}
		c, err := compare.Compare(inputs, compare.Options{Bounds: bounds, Stats: stats.Options{Confidence: spec.Confidence, Share: spec.Share}, Interim: true})
		if err != nil {
			return false, ""
		}
		decided, bounded, beyond := 0, 0, 0
		for _, v := range c.Verdicts {
			decided, bounded, beyond = decided+v.Passed+v.Failed, bounded+v.Bounded, beyond+v.Undecidable
		}
		also := ""
		if beyond > 0 {
			also = fmt.Sprintf("; %d beyond this runner's spread", beyond)
		}
		spec.notice(fmt.Sprintf("after round %d: %d of %d bounded measures decided (%s)%s", run.RoundsDone, decided, bounded, c.Outcome().Verdict(), also))
		switch {
		case bounded == 0 && beyond > 0:
			// Every bound was left to the spread, which can decide none
			// in the rounds the run may take: more would not either.
			return true, fmt.Sprintf("undecided after %d rounds: every bound is beyond this runner's spread", run.RoundsDone)
		case c.Outcome() == stats.Fail:
			// A failure decides the verdict: nothing after it can make
			// the run pass.
			return true, fmt.Sprintf("decided after %d rounds (failed)", run.RoundsDone)
		case bounded > 0 && decided == bounded:
			return true, fmt.Sprintf("decided after %d rounds", run.RoundsDone)
		}
		return false, ""
	}
}

// planned is the run's plan, as an event: how long it will take.
func (spec *ABSpec) planned(specs []target.Spec, reshuffle int) observe.ABStart {
	l := spec.Load
	e := observe.ABStart{Rounds: spec.Rounds, Auto: spec.RoundsMax > 0, Clients: l.Clients, Duration: l.Duration, Warmup: l.Warmup, Slice: spec.Slice}
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
