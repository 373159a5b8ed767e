// Package rig is what an experiment runs on: its targets, opened — their
// servers started, their data made (in a counted A/B run made once and
// copied byte for byte), the probes, meters and disturbances that watch
// them, the agents that may run their clients — behind the few methods a
// schedule drives: Prepare, Watch, Step (or Slices), Relayout, Close. It
// decides nothing of what runs when (the schedules do), prints nothing
// (events go to the experiment's observer) and writes no result file.
package rig

import (
	"context"
	"path/filepath"

	"github.com/pgscale/pgscale/internal/agent"
	"github.com/pgscale/pgscale/internal/disturb"
	"github.com/pgscale/pgscale/internal/experiment"
	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/probe"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/workload"
)

// Rig is an experiment's targets, open, and what the experiment does
// with them.
type Rig struct {
	exp     *experiment.Common
	targets []*Target // the baseline first
	// coord, when set, runs the targets' clients on its agents.
	coord *agent.Coordinator
	// data and times are the present layout's: where each target's data
	// came from (nil when each made its own), and what making it took.
	data  *result.LayoutData
	times result.LayoutTimes
	// said are the targets whose data's origin was said.
	said map[string]bool
	// slices says the targets are watched for steps in slices: by a
	// meter each, not by probes (Watch).
	slices bool
	// cancel and unguard, while the rig is guarded (Guard).
	cancel  context.CancelCauseFunc
	unguard func()
}

// Target is one target of a rig while a run lasts: open, its data made,
// what watches it.
type Target struct {
	name      string // empty for run's single target
	spec      target.Spec
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
	// target, for its own result file (AgentFiles).
	agentSteps [][]result.Step
}

// Name names the target in result files and reports; empty for run's
// single target.
func (t *Target) Name() string { return t.name }

// Spec is the target as given.
func (t *Target) Spec() target.Spec { return t.spec }

// Info is what the target's server says of itself, for its result file.
func (t *Target) Info() result.Target { return t.srv.Info }

// Data is the data the target was given.
func (t *Target) Data() workload.Prepared { return t.data }

// Fallbacks are the statements that run with the simple protocol on the
// target (workload.CheckPrepare).
func (t *Target) Fallbacks() []workload.Fallback { return t.fallbacks }

// AgentSteps are, with agents, each agent's own steps on the target.
func (t *Target) AgentSteps() [][]result.Step { return t.agentSteps }

// Options are how Open opens the targets.
type Options struct {
	// Needs is what the run asks of the servers (the experiment's, or a
	// suite's greatest over its cells).
	Needs target.Needs
	// Agents, when set, runs the targets' clients on its agents.
	Agents *agent.Coordinator
}

// Open opens the targets of specs (ephemeral clusters started in
// parallel) for exp, the baseline first; a single target without a name
// is run's. It returns the rig also on error, holding what was opened,
// for Close.
func Open(ctx context.Context, exp *experiment.Common, specs []target.Spec, opt Options) (*Rig, error) {
	r := &Rig{exp: exp, coord: opt.Agents}
	if len(specs) == 1 && specs[0].Name == "" {
		srv, err := target.Open(ctx, specs[0], exp.Cluster, opt.Needs, exp.Notice)
		if err != nil {
			return r, err
		}
		r.targets = []*Target{{spec: specs[0], srv: srv}}
		return r, nil
	}
	servers, err := target.OpenAll(ctx, specs, exp.Cluster, opt.Needs, exp.Notice)
	for i, srv := range servers {
		if srv != nil {
			srv.Info.Name = specs[i].Name
			r.targets = append(r.targets, &Target{name: specs[i].Name, spec: specs[i], srv: srv})
		}
	}
	return r, err
}

// With is the rig's targets, open, for another experiment (a suite's
// next cell): nothing watches them yet, and their agents' steps are the
// new experiment's. Close the rig that opened them, once.
func (r *Rig) With(exp *experiment.Common) *Rig {
	for _, t := range r.targets {
		t.unwatch()
		t.agentSteps, t.profileDir = nil, ""
	}
	return &Rig{exp: exp, targets: r.targets, coord: r.coord}
}

// Targets are the rig's targets, the baseline first.
func (r *Rig) Targets() []*Target { return r.targets }

// Close ends what watches the targets and closes them: poolers first,
// while the servers they front still run.
func (r *Rig) Close() {
	if r == nil {
		return
	}
	for _, pooled := range []bool{true, false} {
		for _, t := range r.targets {
			if (t.srv.Pooler != nil) == pooled {
				t.unwatch()
				t.srv.Close()
			}
		}
	}
}

// Unwatch ends every target's probes, meter and disturbances.
func (r *Rig) Unwatch() {
	for _, t := range r.targets {
		t.unwatch()
	}
}

// unwatch ends the target's probes, meter and disturbances.
func (t *Target) unwatch() {
	if t.probes != nil {
		t.probes.Close()
		t.probes = nil
	}
	if t.meter != nil {
		t.meter.Close()
		t.meter = nil
	}
	t.disturber = nil
}

// watchers are what watches each of the target's steps.
func (t *Target) watchers() []observe.Watcher {
	var ws []observe.Watcher
	if t.probes != nil {
		ws = append(ws, t.probes)
	}
	if t.disturber != nil {
		ws = append(ws, t.disturber)
	}
	return ws
}

// ProfileDirs puts every target's pprof files in a directory of its own
// under base: base/NAME.
func (r *Rig) ProfileDirs(base string) {
	for _, t := range r.targets {
		t.profileDir = filepath.Join(base, t.name)
	}
}

// ProfileDir puts target ti's pprof files in dir.
func (r *Rig) ProfileDir(ti int, dir string) { r.targets[ti].profileDir = dir }

// named puts a target's name in front of err, keeping its kind.
func named(name string, err error) error { return target.Named(name, err) }

// prefixed puts a target's name in front of a notice, when it has one.
func prefixed(name, s string) string {
	if name == "" {
		return s
	}
	return "target " + name + ": " + s
}

// Experiment is the experiment the rig runs.
func (r *Rig) Experiment() *experiment.Common { return r.exp }
