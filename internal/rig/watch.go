package rig

import (
	"context"
	"fmt"
	"time"

	"github.com/pgscale/pgscale/internal/disturb"
	"github.com/pgscale/pgscale/internal/probe"
)

// Watch sets up what watches every target's steps: its probes and its
// disturbances, which watch its server (behind the pooler if there is
// one), each probe asking the target for what it needs
// (target.Server.Watch). For steps in slices (slices true) probes would
// each watch a step all the targets share, their evidence no one
// target's: a meter of each target's server, read at every slice edge,
// watches instead.
func (r *Rig) Watch(ctx context.Context, slices bool) error {
	began := time.Now()
	defer func() { r.times.ProbesS = time.Since(began).Seconds() }()
	r.slices = slices
	for _, t := range r.targets {
		if err := r.watch(ctx, t, !slices); err != nil {
			return err
		}
		if slices {
			t.meter = r.meter(ctx, t)
		}
	}
	return nil
}

// watch sets up the target's probes (with probes true and any chosen) and
// its disturbances.
func (r *Rig) watch(ctx context.Context, t *Target, probes bool) error {
	c := r.exp
	origin := t.srv.Origin()
	if probes && c.Probes.Any() {
		cfg := probe.Config{Options: c.Probes, Server: t.srv.Watch(), ConnectPerTransaction: c.Load.Connect, Log: c.Notice}
		if t.profileDir != "" {
			cfg.ProfileDir = t.profileDir
		}
		// Under Valgrind a probe's connection may take many seconds to
		// start on a loaded machine, and is tried again (probe's
		// connectTries): a probe that gives up loses the layout's count.
		timeout := 30 * time.Second
		if c.Counting() {
			timeout = 2 * time.Minute
		}
		pctx, cancel := context.WithTimeout(ctx, timeout)
		set, err := probe.New(pctx, cfg)
		cancel()
		if err != nil {
			return named(t.name, fmt.Errorf("probes: %w", err))
		}
		t.probes = set
	}
	if ds := c.Disturbances; len(ds) > 0 {
		dt, err := disturb.New(ctx, ds, disturb.Config{Conn: origin.Config, Scale: t.data.Scale, Seed: c.Workload.Seed,
			Defines: c.Workload.Defines, Events: c.Notice}, origin.Connect)
		if err != nil {
			return named(t.name, err)
		}
		t.disturber = dt
	}
	return nil
}

// meter returns what reads the target's server's costs at slice edges, or
// nil (with a notice saying why) when its processes cannot be read here.
func (r *Rig) meter(ctx context.Context, t *Target) *probe.Meter {
	m, err := probe.NewMeter(ctx, probe.Config{Server: t.srv.Watch()}) // the server behind a pooler, the pooler apart
	if err != nil {
		r.exp.Notice(fmt.Sprintf("target %s: no per-slice server costs: %v", t.name, err))
		return nil
	}
	return m
}
