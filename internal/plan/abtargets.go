package plan

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/pgscale/pgscale/internal/agent"
	"github.com/pgscale/pgscale/internal/disturb"
	"github.com/pgscale/pgscale/internal/probe"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
	"github.com/pgscale/pgscale/internal/workload"
)

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

// abTargets sets up what watches every target — its probes with
// whole-step turns, in slices a meter of its server — and returns the
// targets as AB runs them: with coord, on its agents, each target as
// they reach it on its present layout.
func (spec *ABSpec) abTargets(ctx context.Context, targets []*prepared, wl *workload.Loaded, ds []disturb.Disturbance,
	coord *agent.Coordinator) ([]ABTarget, error) {
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
		if coord != nil {
			at.Sweep.Agents, at.Sweep.AgentsTarget = coord, agentTarget(t, "")
		}
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
// (counting instructions and not given it, CountedReshuffle) when the
// targets run on more than one server and one of those is an ephemeral
// cluster this process can re-create, and the rounds make two layouts at
// least; 0 (one layout) otherwise.
func (spec *ABSpec) reshuffle(targets []*prepared) int {
	n := spec.Reshuffle
	if spec.counting() && !spec.ReshuffleGiven {
		n = CountedReshuffle
	}
	if n <= 0 {
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
	if spec.Rounds < 2*n {
		spec.notice(fmt.Sprintf("--reshuffle %d with %d rounds makes one cluster layout: the clusters are not re-created, and the interval does not cover the fixed difference between them (give --rounds %d or more)",
			n, spec.Rounds, 2*n))
		return 0
	}
	return n
}

// relayout re-creates the ephemeral clusters of an A/B run (target.Renew)
// for a new layout, gives them the data again, the same as before, and
// returns the targets as AB runs them on it.
func (spec *ABSpec) relayout(ctx context.Context, targets []*prepared, specs []target.Spec, wl *workload.Loaded, setup string,
	ds []disturb.Disturbance, coord *agent.Coordinator) ([]ABTarget, error) {
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
	return spec.abTargets(ctx, targets, wl, ds, coord)
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
	m, err := probe.NewMeter(ctx, probe.Config{Server: t.srv.Watch()}) // the server behind a pooler, the pooler apart
	if err != nil {
		spec.notice(fmt.Sprintf("target %s: no per-slice server costs: %v", t.name, err))
		return nil
	}
	return m
}
