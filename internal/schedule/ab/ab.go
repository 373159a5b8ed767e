// Package ab is the schedule of an A/B run: the same workload on several
// targets in interleaved rounds — whole-step turns in a random order per
// round, or all targets at once in slices inside every step —, their
// clusters laid out anew every few rounds, rounding until the bounds are
// decided when asked, and one result file per target. It drives a rig and
// decides only what runs when; comparing the files is internal/compare's.
package ab

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/pgscale/pgscale/internal/agent"
	"github.com/pgscale/pgscale/internal/experiment"
	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/rig"
	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/target"
)

// Defaults of an A/B run that differ from a sweep's.
const (
	Rounds          = 10
	CalibrateRounds = 6
	// CalibrateLayoutRounds are a calibration's default rounds when its
	// clusters are reshuffled: 6 layouts of Reshuffle rounds, enough
	// to see the spread between layouts as well as within one.
	CalibrateLayoutRounds = 12
	// Reshuffle is the default of rounds per cluster layout: the
	// fewest that still shows the noise within a layout, and with the
	// default 10 rounds 5 layouts (docs/ab-and-compare.md, "Cluster layouts").
	Reshuffle = 2
	// CountedReshuffle is the rounds per cluster layout of a counted run
	// not given --reshuffle: a new layout every round. A cluster counts
	// the same to the instruction from round to round, so its rounds
	// repeat one value; what varies is the cluster — a vector index's
	// graph built anew made 1 % more distance calls on one cluster than
	// another, where one cluster's rounds said ± 0.000 % — and only new
	// clusters put that in the interval.
	CountedReshuffle = 1
	Warmup           = time.Second
	// Slice is the default slice: on this 2-core machine the A/A
	// paired noise of tps fell from 11-19 % with whole-step turns to 3-5 %
	// with 0.1 s slices, and no further with 0.05 s (docs/ab-and-compare.md, "Slices against whole-step turns").
	Slice = 100 * time.Millisecond
)

// Spec is an A/B run: the same workload on several targets in interleaved
// rounds. It is made, its defaults settled and checked where it was given
// (the command line, a suite's cell, a bisect's step), and taken as it is.
type Spec struct {
	experiment.Common
	// Targets are the targets, the baseline first (with Calibrate the
	// baseline twice: its twin named NAME-aa).
	Targets []target.Spec
	// Rounds are the rounds to run; with RoundsMax positive (rounding
	// until decided), the most it may run (RoundsMax). After every round
	// the run then compares what it has and stops once every bounded
	// measure of every candidate is decided, or after RoundsMax rounds;
	// Budget, when positive, also stops it before a round that would end
	// past it.
	Rounds    int
	RoundsMax int
	Budget    time.Duration
	// Decider, when set with RoundsMax, decides in place of the bounds,
	// after every complete round, whether the rounds so far are enough
	// (pgscale bisect classifying a commit by the verdict's outcomes).
	Decider Decider
	// Share, in (0, 1), is the part of alpha the run's bounded measures
	// get when it decides them (a suite's cell: 1/cells, as the suite's
	// verdict judges them); 0 means all of it.
	Share float64
	// OrderSeed draws the target order of each round (RoundOrder) and of
	// each cycle of slices (SliceOrder).
	OrderSeed uint64
	// Slice, when positive, interleaves the targets in slices of this
	// length inside every step; Settle is the part of each slice not
	// counted.
	Slice, Settle time.Duration
	// Calibrate says the run is the baseline against itself (an A/A run).
	Calibrate bool
	// Reshuffle, when positive, re-creates the run's ephemeral clusters
	// every Reshuffle rounds when the targets run on separate servers, so
	// that each layout of clusters is drawn anew (rig.Relayout); 0 keeps
	// them for the whole run. OneLayout, when set, is said when the
	// targets could be laid out anew but Rounds are fewer than two
	// layouts at Reshuffle, so that they are not: the edge words it, as
	// the user gave the two.
	Reshuffle int
	OneLayout string
	// Bounds and Confidence judge the comparison; they are recorded in
	// the result files.
	Bounds     stats.Bounds
	Confidence float64
	// Out is the directory of the result files (default
	// results/ab-<workload>-<UTC time>).
	Out string
	// Agents, when set, has agents run the clients, each target's step
	// in its turn (whole-step turns only).
	Agents *experiment.Agents
}

// Decider decides, after every complete round of a run that rounds until
// decided, whether the rounds so far are enough, from the files they make
// (interim files: outcomes only): done, and why in words.
type Decider interface {
	Decided(files []*result.File) (done bool, why string)
}

// Run runs an A/B run: it opens every target (ephemeral clusters in
// parallel), gives each the same data, runs the rounds and writes one
// result file per target into one directory, linked by their AB block
// (with the bounds and confidence, so that compare and report reach the
// run's verdict again). It returns the files and the directory.
//
// Once rounds have begun the files are always written, marked incomplete
// when a round could not complete or the run was interrupted; the error
// then says why.
func Run(ctx context.Context, spec Spec) (_ []*result.File, _ string, err error) {
	c := &spec.Common
	layouts := 1
	if n := spec.Reshuffle; c.Counting() && n > 0 && spec.Rounds >= 2 {
		layouts = (spec.Rounds + n - 1) / n
	}
	c.CountNotice(len(spec.Targets), spec.Rounds+1, layouts) // and the warm-up round
	started := time.Now().UTC()
	dir := spec.Out
	if dir == "" {
		dir = filepath.Join("results", fmt.Sprintf("ab-%s-%s", rig.FileName(c.Workload.Name), started.Format("20060102T150405Z")))
	}
	var coord *agent.Coordinator
	if spec.Agents != nil {
		// Opened before the targets start, so that the agents join while
		// the clusters start and the data is made.
		if coord, err = rig.OpenAgents(ctx, c, spec.Agents); err != nil {
			return nil, "", err
		}
		defer func() { _ = coord.Close(ctx, err) }()
	}
	r, err := rig.Open(ctx, c, spec.Targets, rig.Options{Needs: c.Needs(), Agents: coord})
	defer r.Close()
	if err != nil {
		return nil, "", rig.KeepStartLog(err, func(name, program string) string { return filepath.Join(dir, name+"."+program+".log") })
	}
	return On(ctx, r, &spec, dir, started)
}

// On runs the A/B rounds on the rig's open targets: it gives each the
// workload's data, sets up what watches them (and ends it after), runs
// the rounds and writes one result file per target into dir — or, when
// the first cannot be written there, all of them into a directory of the
// same name where they can be (result.WriteOrRescue). With agents every
// target's steps run on them, in the target's turn, and each target's
// file lists them and keeps each agent's own file beside it. It returns
// the files (nil when no round started), the directory they were written
// to (empty when none was), and why the run could not complete.
func On(ctx context.Context, r *rig.Rig, spec *Spec, dir string, started time.Time) ([]*result.File, string, error) {
	c := r.Experiment()
	defer r.Unwatch()
	began := time.Now()
	if err := r.Prepare(ctx); err != nil {
		return nil, dir, err
	}
	setupTook := time.Since(began)
	if c.Probes.On(probeid.Profile.Name) || c.Counting() {
		// Every target's pprof files in a directory of its own, by
		// default inside the run's: profiles/NAME/round-R-step-S-cN.pb.gz.
		base := c.Probes.ProfileDir
		if base == "" {
			base = filepath.Join(dir, "profiles")
		}
		r.ProfileDirs(base)
	}
	rs := newRounds(r, spec, setupTook, started)
	if err := r.Watch(ctx, spec.Slice > 0); err != nil {
		return nil, dir, err
	}
	if err := r.Gather(ctx, ""); err != nil {
		return nil, dir, err
	}
	rs.layouts = []result.Layout{r.Layout(1, 0)}
	c.Events().Observe(rs.planned())
	gctx, unguard := r.Guard(ctx)
	run, runErr := rs.all(gctx, rs.round, rs.decided)
	unguard()
	if run == nil {
		return nil, dir, runErr
	}
	layouts := rs.withRoundTimes()
	timesNotice(c, layouts)
	runErr, exited := r.Blame(ctx, runErr)
	for _, steps := range run.Steps {
		if n := len(steps); n > 0 && steps[n-1].Round == len(run.Order) {
			exited.Blame(&steps[n-1])
		}
	}
	if runErr != nil && ctx.Err() == nil {
		if note := r.KeepPoolerLogs(func(name, program string) string { return filepath.Join(dir, name+"."+program+".log") }); note != "" {
			runErr = fmt.Errorf("%w; %s", runErr, note)
		}
	}
	files := rs.files(layouts, runErr, ctx.Err() != nil)
	var errs []error
	wrote := 0
	out := dir
	for i, f := range files {
		name := f.AB.Targets[i].File
		path := filepath.Join(dir, name)
		result.RelativeProfiles(f.Steps, path)
		if out != dir {
			path = filepath.Join(out, name) // the first could not be written in dir: the others join it
		}
		r.RecordAgents(f, false)
		errs = append(errs, r.AgentFiles(f, i, path))
		written, err := result.WriteOrRescue(path, filepath.Join(filepath.Base(dir), name), f)
		if err != nil && i == 0 && written != "" {
			out = filepath.Dir(written)
		}
		if written != "" {
			wrote++
		}
		errs = append(errs, err)
	}
	if wrote == 0 {
		out = "" // no directory to name: none was written, as errs say
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
	return files, out, errors.Join(errs...)
}

// planned is the run's plan, as an event: how long it will take.
func (rs *rounds) planned() observe.ABStart {
	spec := rs.spec
	l := spec.Load
	e := observe.ABStart{Rounds: spec.Rounds, Auto: spec.RoundsMax > 0, Clients: l.Clients, Duration: l.Duration, Warmup: l.Warmup, Slice: spec.Slice}
	if rs.reshuffle > 0 {
		e.Reshuffle, e.Layouts = rs.reshuffle, (spec.Rounds+rs.reshuffle-1)/rs.reshuffle
	}
	for _, s := range spec.Targets {
		e.Targets = append(e.Targets, s.Name)
	}
	steps := time.Duration(spec.Rounds * len(l.Clients))
	if spec.Slice > 0 {
		e.Total = (steps * (time.Duration(len(spec.Targets))*l.Duration + l.Warmup)).Round(time.Second)
	} else if l.Duration > 0 {
		e.Total = (steps * time.Duration(len(spec.Targets)) * (l.Duration + l.Warmup)).Round(time.Second)
	}
	return e
}
