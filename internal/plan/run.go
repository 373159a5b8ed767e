package plan

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/pgscale/pgscale/internal/agent"
	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/disturb"
	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
	"github.com/pgscale/pgscale/internal/workload"
)

// Run runs one sweep: it opens the target (starting an ephemeral cluster
// when the spec names no server), prepares its data, measures each client
// count with the probes and disturbances beside it, diagnoses the sweep and
// writes the result file. It returns the file and where it was written
// (empty when writing it failed, or with NoResultFile).
//
// Mistakes in the spec are usage errors found before anything starts.
// Once measuring has begun the result file is always written, marked
// incomplete when a step could not complete or the run was interrupted
// (ctx cancelled); the error then says why. Before that (the target cannot
// be opened or prepared) there is nothing to write and the file is nil.
func Run(ctx context.Context, spec RunSpec) (*result.File, string, error) {
	ds, err := spec.check()
	if err != nil {
		return nil, "", err
	}
	exps, err := compare.ParseExpectations(spec.Expect)
	if err == nil {
		err = compare.CheckClients(exps, spec.Load.Clients)
	}
	if err != nil {
		return nil, "", usage.Wrap(err)
	}
	spec.Expect = nil // one rule per entry in the result file
	for _, e := range exps {
		spec.Expect = append(spec.Expect, e.Spec)
	}
	if spec.Target.Replicas > 0 && !spec.Target.Ephemeral() {
		return nil, "", usage.Errorf("--replicas applies to an ephemeral cluster, not to --dsn or a PGHOST-style environment")
	}
	if spec.Pooler != "" {
		if spec.Target, err = target.WithPooler(spec.Target, spec.Pooler); err != nil {
			return nil, "", usage.Wrap(err)
		}
	}
	if err := checkOpenFiles(spec.Load.maxClients(), 1, disturb.Sessions(ds)); err != nil {
		return nil, "", err
	}
	if err := spec.checkAgents(); err != nil {
		return nil, "", err
	}
	if err := spec.Cluster.Check([]target.Spec{spec.Target}); err != nil {
		return nil, "", err
	}
	if spec.Data.Create && spec.Target.Ephemeral() {
		return nil, "", usage.Errorf("--init applies to --dsn targets; an ephemeral cluster gets pgbench's data whenever the workload uses pgbench's tables")
	}
	if !spec.NoResultFile {
		var err error
		if spec.Out != "" {
			err = checkOut(spec.Out, false)
		} else {
			err = checkOut("results", true)
		}
		if err != nil {
			return nil, "", err
		}
	}
	wl, setup, err := spec.loadWorkload()
	if err != nil {
		return nil, "", err
	}
	if err := checkTopology([]target.Spec{spec.Target}, wl); err != nil {
		return nil, "", err
	}
	spec.countNotice(1, 2, 1) // and the warm-up round
	started := time.Now().UTC()
	coord, err := spec.openAgents(ctx, spec.Agents)
	if err != nil {
		return nil, "", err
	}
	if coord != nil {
		defer func() { _ = coord.Close(ctx, err) }()
	}
	path := spec.Out
	if path == "" {
		path = filepath.Join("results", fmt.Sprintf("%s-%s.json", fileName(wl.Name), started.Format("20060102T150405Z")))
	}
	srv, err := target.Open(ctx, spec.Target, spec.Cluster, spec.needs(ds, wl), spec.notice)
	if err != nil {
		return nil, "", keepStartLog(err, func(_, program string) string { return poolerLogPath(path, program) })
	}
	p := &prepared{srv: srv}
	defer p.close()
	out := sweepFile{Path: path, Skip: spec.NoResultFile, Pgbench: spec.Pgbench, Agents: coord}
	if spec.Agents != nil {
		out.AgentsDSN = spec.Agents.TargetDSN
	}
	var file *result.File
	file, path, err = spec.sweepOn(ctx, p, wl, setup, ds, started, out)
	return file, path, err
}

// sweepFile is where sweepOn writes its result file and what it adds to it.
type sweepFile struct {
	Path    string
	Skip    bool            // write nothing: the file is only returned
	Pgbench *result.Pgbench // how pgscale pgbench was asked to report
	// Agents, when set, runs the clients on agents; AgentsDSN is the
	// target as they reach it (empty: the run's own, without password).
	Agents    *agent.Coordinator
	AgentsDSN string
}

// sweepOn runs the sweep on an open target: it prepares the data, sets up
// the probes and disturbances (and ends them after), measures, diagnoses
// and writes the result file at path. The file is nil when nothing was
// measured; the path is empty when it could not be written.
func (c *Common) sweepOn(ctx context.Context, p *prepared, wl *workload.Loaded, setup string, ds []disturb.Disturbance,
	started time.Time, out sweepFile) (*result.File, string, error) {
	path := out.Path
	defer p.unwatch()
	if err := c.prepare(ctx, p, wl, setup); err != nil {
		return nil, "", err
	}
	if err := c.watch(ctx, p, wl, ds, true); err != nil {
		return nil, "", err
	}
	if out.Agents != nil {
		p.agentSteps = nil // a suite's earlier cell's
		if err := c.gatherAgents(ctx, out.Agents, p, wl, out.AgentsDSN); err != nil {
			return nil, "", err
		}
	}
	file := c.newFile(wl, started)
	workload.RecordFallbacks(file.Workload.Scripts, p.fallbacks)
	file.Target = p.srv.Info
	file.Workload.Scale = p.data.Scale
	file.Workload.Partitions, file.Workload.PartitionMethod = p.data.Partitions, p.data.PartitionMethod
	file.Workload.Threads = c.Load.Threads
	file.Pgbench = out.Pgbench
	obs := c.observer()
	obs.Observe(observe.RunStart{File: file, Path: path})

	sw := c.sweep(p, wl)
	sw.Agents = out.Agents
	mctx, stopWatch := watchPoolers(ctx, []*prepared{p})
	defer stopWatch()
	// A warm-up round that fails (a server that dies under Valgrind)
	// measured nothing, but the file says what happened.
	warmErr := c.warmUpRound(mctx, sw)
	if cause := stopCause(mctx); warmErr != nil && cause != nil {
		warmErr = fmt.Errorf("warm-up round: %w", cause)
	}
	vacuum := sw.BeforeStep
	sw.BeforeStep = func(ctx context.Context, i, clients int) error {
		obs.Observe(observe.StepStart{Index: i, Steps: len(sw.Clients), Clients: clients})
		if vacuum == nil {
			return nil
		}
		return vacuum(ctx, i, clients)
	}
	sw.AfterStep = func(_ int, s result.Step) { obs.Observe(observe.StepEnd{Step: s}) }
	var steps []result.Step
	runErr := warmErr
	if warmErr == nil {
		steps, runErr = sw.Run(mctx)
	}
	stopWatch()
	runErr, exited := blamePooler(ctx, []*prepared{p}, runErr)
	if len(steps) > 0 {
		blameStep(&steps[len(steps)-1], exited)
	}

	file.Steps = steps
	file.Finished = time.Now().UTC()
	file.Complete = runErr == nil
	if runErr != nil {
		file.Reason = runErr.Error()
		if ctx.Err() != nil {
			file.Reason = "interrupted"
			runErr = errors.New("interrupted; the steps done so far are in the result file")
		} else if note := keepPoolerLogs([]*prepared{p}, func(_, program string) string { return poolerLogPath(path, program) }); note != "" {
			file.Reason += "; " + note
			runErr = fmt.Errorf("%w; %s", runErr, note)
		}
	}
	file.Diagnosis = diagnose.Sweep(file)
	if out.Agents != nil {
		file.Coordination, file.Agents = out.Agents.Coordination(), out.Agents.AgentTotals()
	}
	obs.Observe(observe.RunEnd{File: file})
	if out.Skip {
		return file, "", runErr
	}
	relativeProfiles(file.Steps, path)
	if out.Agents != nil {
		if err := agentFiles(file, out.Agents, p.agentSteps, path); err != nil {
			runErr = errors.Join(runErr, err)
		}
	}
	written, werr := writeResult(path, filepath.Base(path), file)
	return file, written, errors.Join(runErr, werr)
}
