package plan

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/pgscale/pgscale/internal/engine"
	"github.com/pgscale/pgscale/internal/metrics"
	"github.com/pgscale/pgscale/internal/probe"
	"github.com/pgscale/pgscale/internal/result"
)

// SliceOrder returns the order of n targets in one cycle of slices (n
// consecutive slices, one per target) of a step of a round: a permutation
// drawn from the seed, the round, the step's index in the sweep and the
// cycle alone, so any slice's target can be recomputed.
func SliceOrder(seed uint64, round, step, cycle, n int) []int {
	return rand.New(rand.NewPCG(seed, uint64(round)<<48|uint64(step)<<32|uint64(cycle))).Perm(n)
}

// slices runs round r with the targets interleaved in slices inside every
// step: one engine run per step, in which every client holds a connection
// to each target and all clients switch target together every Slice, in
// cycles of one slice per target in a random order (SliceOrder). Each
// target gets the step's Duration of measured time, rounded up to whole
// slices (less the settle time of its slices); the engine's Warmup, rounded
// up to whole cycles, runs first, in slices too, not counted. The step's
// result is split per target (SplitSlices), so a round yields one step per
// target as in whole-step turns.
func (rs *rounds) slices(ctx context.Context, r int) error {
	ab := rs.ab
	k := len(ab.Targets)
	tmpl := ab.Targets[0].Sweep
	rs.run.Order = append(rs.run.Order, SliceOrder(ab.Seed, r, 0, 0, k)) // the round's first cycle
	for si, n := range tmpl.Clients {
		if err := ctx.Err(); err != nil {
			return err
		}
		if ab.BeforeTurn != nil {
			ab.BeforeTurn(r, -1) // every target, in slices
		}
		cfg := tmpl.Engine
		cfg.Clients = n
		// Whole cycles, so every target gets the same number of
		// slices: the warm-up and each target's time are rounded up to
		// them.
		cycle := time.Duration(k) * ab.Slice
		cfg.Warmup = roundUp(tmpl.Engine.Warmup, cycle)
		cfg.Duration = time.Duration(k) * roundUp(tmpl.Engine.Duration, ab.Slice)
		cfg.Targets = nil
		for _, t := range ab.Targets {
			if t.Sweep.BeforeStep != nil {
				if err := t.Sweep.BeforeStep(ctx, si, n); err != nil {
					return fmt.Errorf("round %d, target %s: %w", r, t.Name, err)
				}
			}
			cfg.Targets = append(cfg.Targets, t.Sweep.Engine.Conn)
		}
		cfg.Conn = cfg.Targets[0]
		cfg.SliceMeter = ab.sliceMeter()
		cfg.Slice, cfg.Settle = ab.Slice, ab.Settle
		cfg.SliceTarget = func(i int) int { return SliceOrder(ab.Seed, r, si, i/k, k)[i%k] }
		prog, err := tmpl.Program(n)
		if err != nil {
			return err
		}
		cfg.Program = prog
		cfg.ConnectProgress = nil
		if ab.Connecting != nil {
			cfg.ConnectProgress = connectReporter(ab.Connecting)
		}
		res, err := engine.Run(ctx, cfg)
		if res != nil && (res.Elapsed > 0 || err != nil) {
			for ti, s := range SplitSlices(res, k) {
				rs.noteEmpty(r, ti, &s)
				if err != nil && s.Complete {
					s.Complete, s.Reason = false, err.Error()
				}
				if cause := stopCause(ctx); err != nil && cause != nil {
					s.Complete, s.Reason = false, cause.Error()
				}
				rs.keep(ti, s)
				if ab.AfterStep != nil {
					ab.AfterStep(r, ti, s)
				}
			}
		}
		if cause := stopCause(ctx); err != nil && cause != nil {
			err = cause
		}
		if err != nil {
			return fmt.Errorf("round %d, %d clients: %w", r, n, err)
		}
	}
	return nil
}

// sliceMeter is the engine's slice meter over the targets' meters; nil
// when no target has one.
func (ab *AB) sliceMeter() func(int) map[string]float64 {
	some := false
	for _, t := range ab.Targets {
		some = some || t.Meter != nil
	}
	if !some {
		return nil
	}
	return func(t int) map[string]float64 {
		if m := ab.Targets[t].Meter; m != nil {
			return m()
		}
		return nil
	}
}

// roundUp rounds d up to a multiple of unit.
func roundUp(d, unit time.Duration) time.Duration {
	return (d + unit - 1) / unit * unit
}

// SplitSlices turns a step run in slices over k targets into one step per
// target: each target's slices are its intervals (t = the slice's start in
// the measured window, len_s = its counted length), and its summary is
// built from them alone — transactions, failures and latency histogram
// merged, elapsed time the sum of its counted lengths, client CPU the sum
// over its slices. Errors cannot be told apart by target and go with every
// target; per-script and per-command figures are left out.
func SplitSlices(res *engine.Result, k int) []result.Step {
	out := make([]result.Step, k)
	for ti := range out {
		part := &engine.Result{Clients: res.Clients, IO: res.IO, Began: res.Began, Total: metrics.NewInterval(0, 0),
			ConnectMean: res.ConnectMean, ConnectElapsed: res.ConnectElapsed, Errors: res.Errors, Aborted: res.Aborted, Incomplete: res.Incomplete}
		for _, sl := range res.Slices {
			if sl.Target != ti {
				continue
			}
			iv := &metrics.Interval{Counts: sl.Counts, Latency: metrics.NewHistogram()}
			if h, err := metrics.DecodeHistogram(sl.Histogram); err == nil {
				iv.Latency = h
			}
			part.Total.Merge(iv)
			part.Elapsed += sl.Length
			part.ClientUser += sl.ClientUser
			part.ClientSys += sl.ClientSys
			part.Series = append(part.Series, engine.Point{Start: sl.Start, Length: sl.Length, Counts: sl.Counts,
				Latency: sl.Latency, Histogram: sl.Histogram})
		}
		out[ti] = StepResult(part, nil)
		out[ti].Costs = sliceCosts(res.Slices, ti)
	}
	return out
}

// sliceCosts sums what target ti's slices cost outside the load generator,
// as the engine's slice meter read them; nil without a meter.
func sliceCosts(slices []engine.Slice, ti int) *result.Costs {
	var c *result.Costs
	var pooler, poolerCtx, steal, counted float64
	hasPooler, hasPoolerCtx := false, false
	for _, sl := range slices {
		if sl.Target != ti || sl.Costs == nil {
			continue
		}
		if c == nil {
			c = &result.Costs{}
		}
		c.ServerCPUS += sl.Costs[probe.MeterServerCPU]
		c.ServerUserS += sl.Costs[probe.MeterServerUser]
		c.ServerSysS += sl.Costs[probe.MeterServerSys]
		c.ServerCtx += int64(sl.Costs[probe.MeterServerCtx])
		steal += sl.Costs[probe.MeterHostSteal]
		counted += sl.Length.Seconds()
		if v, ok := sl.Costs[probe.MeterPoolerCPU]; ok {
			pooler, hasPooler = pooler+v, true
		}
		if v, ok := sl.Costs[probe.MeterPoolerCtx]; ok {
			poolerCtx, hasPoolerCtx = poolerCtx+v, true
		}
	}
	if c != nil && hasPooler {
		c.PoolerCPUS = &pooler
	}
	if c != nil && hasPoolerCtx {
		n := int64(max(poolerCtx, 0))
		c.PoolerCtx = &n
	}
	if c != nil && counted > 0 {
		c.HostStealShare = steal / (counted * float64(runtime.NumCPU()))
	}
	return c
}
