package step

import (
	"context"
	"runtime"
	"time"

	"github.com/pgscale/pgscale/internal/engine"
	"github.com/pgscale/pgscale/internal/metrics"
	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/probe"
	"github.com/pgscale/pgscale/internal/result"
)

// Slices is one step run on several targets at once, in slices: every
// client holds a connection to each target (Engine.Targets) and all
// clients switch target together every Engine.Slice, the engine's
// SliceTarget choosing which; the first Engine.Settle of every slice is
// not counted.
type Slices struct {
	Engine engine.Config
	// Events, when set, is told how far the connection phase has come.
	Events observe.Observer
}

// RunSlices runs the step in slices and returns it split per target
// (Split), as the engine measured it (nil when nothing ran), and the
// engine's error; Fail marks a step of a run that ended on it.
func RunSlices(ctx context.Context, cfg Slices) ([]result.Step, error) {
	ecfg := cfg.Engine
	ecfg.ConnectProgress = nil
	if cfg.Events != nil {
		ecfg.ConnectProgress = connectReporter(func(e observe.Connecting) { cfg.Events.Observe(e) })
	}
	res, err := engine.Run(ctx, ecfg)
	if res == nil || (res.Elapsed <= 0 && err == nil) {
		return nil, err
	}
	return Split(res, len(ecfg.Targets)), err
}

// RoundUp rounds d up to a multiple of unit.
func RoundUp(d, unit time.Duration) time.Duration {
	return (d + unit - 1) / unit * unit
}

// Split turns a step run in slices over k targets into one step per
// target: each target's slices are its intervals (t = the slice's start in
// the measured window, len_s = its counted length), and its summary is
// built from them alone — transactions, failures and latency histogram
// merged, elapsed time the sum of its counted lengths, client CPU the sum
// over its slices. Errors cannot be told apart by target and go with every
// target; per-script and per-command figures are left out.
func Split(res *engine.Result, k int) []result.Step {
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
		out[ti] = Result(part, nil)
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
