// Package sweep is the schedule of pgscale run: one workload at each
// client count in turn, on one target, each step watched and told as it
// ends, the sweep diagnosed and written to a result file. It drives a
// rig and decides only what runs when.
package sweep

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/experiment"
	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/rig"
	"github.com/pgscale/pgscale/internal/step"
	"github.com/pgscale/pgscale/internal/target"
)

// Spec is one sweep over one target: what pgscale run asks for, made and
// checked where it was given.
type Spec struct {
	experiment.Common
	// Target is where it runs: a server, an ephemeral cluster, or a pooler
	// in front of one (run --pooler).
	Target target.Spec
	// Out is the result file (default results/<workload>-<UTC time>.json).
	Out string
	// NoResultFile writes no result file: Run still returns it.
	NoResultFile bool
	// Pgbench, when set, is recorded in the result file (pgscale pgbench).
	Pgbench *result.Pgbench
	// Agents, when set, has agents run the clients.
	Agents *experiment.Agents
}

// Run runs one sweep: it opens the target (starting an ephemeral cluster
// when the spec names no server), prepares its data, measures each client
// count with the probes and disturbances beside it, diagnoses the sweep and
// writes the result file. It returns the file and where it was written
// (empty when writing it failed, or with NoResultFile).
//
// Once measuring has begun the result file is always written, marked
// incomplete when a step could not complete or the run was interrupted
// (ctx cancelled); the error then says why. Before that (the target cannot
// be opened or prepared) there is nothing to write and the file is nil.
func Run(ctx context.Context, spec Spec) (_ *result.File, _ string, err error) {
	c := &spec.Common
	c.CountNotice(1, 2, 1) // and the warm-up round
	started := time.Now().UTC()
	coord, err := rig.OpenAgents(ctx, c, spec.Agents)
	if err != nil {
		return nil, "", err
	}
	if coord != nil {
		defer func() { _ = coord.Close(ctx, err) }()
	}
	path := spec.Out
	if path == "" {
		path = filepath.Join("results", fmt.Sprintf("%s-%s.json", rig.FileName(c.Workload.Name), started.Format("20060102T150405Z")))
	}
	r, err := rig.Open(ctx, c, []target.Spec{spec.Target}, rig.Options{Needs: c.Needs(), Agents: coord})
	defer r.Close()
	if err != nil {
		return nil, "", rig.KeepStartLog(err, func(_, program string) string { return rig.PoolerLogPath(path, program) })
	}
	out := File{Path: path, Skip: spec.NoResultFile, Pgbench: spec.Pgbench, Started: started}
	if spec.Agents != nil {
		out.AgentsDSN = spec.Agents.TargetDSN
	}
	return On(ctx, r, out)
}

// File is where On writes its result file and what it adds to it.
type File struct {
	Path    string
	Skip    bool            // write nothing: the file is only returned
	Pgbench *result.Pgbench // how pgscale pgbench was asked to report
	// AgentsDSN is the target as the rig's agents reach it (empty: its
	// own, without password).
	AgentsDSN string
	Started   time.Time
}

// On runs the sweep on the rig's one open target: it prepares the data,
// sets up the probes and disturbances (and ends them after), measures,
// diagnoses and writes the result file at out.Path. The file is nil when
// nothing was measured; the path is empty when it could not be written.
func On(ctx context.Context, r *rig.Rig, out File) (*result.File, string, error) {
	c := r.Experiment()
	path := out.Path
	defer r.Unwatch()
	if err := r.Prepare(ctx); err != nil {
		return nil, "", err
	}
	if err := r.Watch(ctx, false); err != nil {
		return nil, "", err
	}
	if err := r.Gather(ctx, out.AgentsDSN); err != nil {
		return nil, "", err
	}
	file := r.File(0, out.Started)
	d := r.Targets()[0].Data()
	file.Workload.Partitions, file.Workload.PartitionMethod = d.Partitions, d.PartitionMethod
	file.Workload.Threads = c.Load.Threads
	file.Pgbench = out.Pgbench
	obs := c.Events()
	obs.Observe(observe.RunStart{File: file, Path: path})

	gctx, unguard := r.Guard(ctx)
	defer unguard()
	// A warm-up round that fails (a server that dies under Valgrind)
	// measured nothing, but the file says what happened.
	warmErr := warmUp(gctx, r)
	if cause := step.Cause(gctx); warmErr != nil && cause != nil {
		warmErr = fmt.Errorf("warm-up round: %w", cause)
	}
	var steps []result.Step
	runErr := warmErr
	if warmErr == nil {
		steps, runErr = sweep(gctx, r)
	}
	unguard()
	runErr, exited := r.Blame(ctx, runErr)
	if len(steps) > 0 {
		exited.Blame(&steps[len(steps)-1])
	}

	file.Steps = steps
	file.Finished = time.Now().UTC()
	file.Complete = runErr == nil
	if runErr != nil {
		file.Reason = runErr.Error()
		if ctx.Err() != nil {
			file.Reason = "interrupted"
			runErr = errors.New("interrupted; the steps done so far are in the result file")
		} else if note := r.KeepPoolerLogs(func(_, program string) string { return rig.PoolerLogPath(path, program) }); note != "" {
			file.Reason += "; " + note
			runErr = fmt.Errorf("%w; %s", runErr, note)
		}
	}
	file.Diagnosis = diagnose.Sweep(file)
	r.RecordAgents(file, true)
	obs.Observe(observe.RunEnd{File: file})
	if out.Skip {
		return file, "", runErr
	}
	result.RelativeProfiles(file.Steps, path)
	if err := r.AgentFiles(file, 0, path); err != nil {
		runErr = errors.Join(runErr, err)
	}
	written, werr := result.WriteOrRescue(path, filepath.Base(path), file)
	return file, written, errors.Join(runErr, werr)
}

// sweep runs the steps, each client count in turn, each told as it starts
// and ends; on a step that could not complete it stops and returns the
// steps so far (the last one marked incomplete) with the error.
func sweep(ctx context.Context, r *rig.Rig) ([]result.Step, error) {
	c := r.Experiment()
	obs := c.Events()
	var steps []result.Step
	for i, n := range c.Load.Clients {
		obs.Observe(observe.StepStart{Index: i, Steps: len(c.Load.Clients), Clients: n})
		s, err := r.Step(ctx, 0, rig.StepOf{Index: i, Clients: n})
		if s != nil {
			steps = append(steps, *s)
			diagnose.Scaling(steps)
			obs.Observe(observe.StepEnd{Step: steps[len(steps)-1]})
		}
		if err != nil {
			return steps, err
		}
	}
	return steps, nil
}

// warmUp runs a counted run's sweep once before its own, unwatched and
// not recorded, as an A/B run runs every target's before round 1: a
// fresh server's first round reads into shared buffers what later rounds
// find there, and a single run --count counted those reads (43 231
// instructions a transaction against 42 980 in later rounds here).
func warmUp(ctx context.Context, r *rig.Rig) error {
	c := r.Experiment()
	if !c.Counting() {
		return nil
	}
	c.Notice("counting instructions: a warm-up round first, not counted")
	began := time.Now()
	for i, n := range c.Load.Clients {
		if _, err := r.Step(ctx, 0, rig.StepOf{Index: i, Clients: n, Warmup: true}); err != nil {
			return fmt.Errorf("warm-up round: %w", err)
		}
	}
	c.CountEstimate(time.Since(began), 0, 1, len(c.Load.Clients), 0)
	return nil
}
