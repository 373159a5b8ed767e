package rig

import (
	"time"

	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/workload"
)

// File returns target ti's result file holding everything known before
// its steps: the command, the start time, the environment, the workload
// and its data, and the target as its server says it is.
func (r *Rig) File(ti int, started time.Time) *result.File {
	c := r.exp
	t := r.targets[ti]
	l := c.Load
	wl := c.Workload
	interval := l.Interval
	if interval <= 0 {
		interval = time.Second
	}
	var expect []string
	for _, e := range c.Expect {
		expect = append(expect, e.Spec) // one rule per entry
	}
	f := &result.File{
		Schema:      result.Schema,
		Version:     result.Version,
		Pgscale:     c.Version,
		Command:     c.Argv,
		Started:     started,
		Expect:      expect,
		Environment: result.CollectEnvironment(),
		Workload: result.Workload{
			Name: wl.Name, Scripts: wl.ResultScripts(), Defines: wl.Defines, Protocol: wl.Protocol.String(),
			Connect: l.Connect, RateTPS: l.Rate, LatencyLimitMs: float64(l.LatencyLimit.Microseconds()) / 1000,
			MaxTries: l.MaxTries, DurationS: l.Duration.Seconds(), Transactions: l.Transactions,
			WarmupS: l.Warmup.Seconds(), RandomSeed: wl.Seed, ContinueOnError: l.ContinueOnError, IntervalS: interval.Seconds(),
		},
	}
	workload.RecordFallbacks(f.Workload.Scripts, t.fallbacks)
	f.Target = t.srv.Info
	f.Workload.Scale = t.data.Scale
	return f
}

// FileName keeps a workload's (or a suite's) name usable in a file name.
func FileName(s string) string {
	b := []byte(s)
	for i, r := range b {
		if r == '/' || r == ' ' || r == ':' {
			b[i] = '_'
		}
	}
	return string(b)
}
