package plan

import (
	"context"
	"fmt"

	"github.com/pgscale/pgscale/internal/agent"
	"github.com/pgscale/pgscale/internal/disturb"
	"github.com/pgscale/pgscale/internal/probe"
	"github.com/pgscale/pgscale/internal/target"
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
