// Package plan runs experiments: a client sweep over one target, and
// (later) interleaved rounds over several targets, phases and disturbances.
package plan

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"time"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/engine"
	"github.com/pgscale/pgscale/internal/metrics"
	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/script"
)

// Sweep runs the same workload at each client count in turn.
type Sweep struct {
	// Observers watch every step (probes, disturbances), in order.
	Observers []observe.Watcher
	Clients   []int
	Engine    engine.Config // a template; Clients and Program are set per step
	// Program builds the scripts' program for a step (pgbench seeds each
	// client's random state from one sequence, so it depends on the count).
	Program func(clients int) (*script.Program, error)
	// BeforeStep, when set, runs before each step (pgbench's pre-run vacuum).
	BeforeStep func(ctx context.Context, i, clients int) error
	// AfterStep, when set, sees each step as soon as it is done.
	AfterStep func(i int, s result.Step)
}

// Run runs the sweep and returns the steps done. On an interrupt or a step
// that could not complete it stops and returns the steps so far (the last
// one marked incomplete) with the error.
func (sw *Sweep) Run(ctx context.Context) ([]result.Step, error) {
	var steps []result.Step
	for i, n := range sw.Clients {
		if sw.BeforeStep != nil {
			if err := sw.BeforeStep(ctx, i, n); err != nil {
				return steps, err
			}
		}
		cfg := sw.Engine
		cfg.Clients = n
		prog, err := sw.Program(n)
		if err != nil {
			return steps, err
		}
		cfg.Program = prog
		var started []observe.Watcher
		var startErr error
		cfg.OnStart = func(start, window time.Time) {
			info := observe.StepInfo{Index: i, Clients: n, Start: start, Window: window, Duration: cfg.Duration}
			for _, o := range sw.Observers {
				if err := o.Start(ctx, info); err != nil {
					startErr = err
					return
				}
				started = append(started, o)
			}
		}
		r, err := engine.Run(ctx, cfg)
		if err == nil && startErr != nil {
			err = startErr
		}
		if r != nil && (r.Elapsed > 0 || err != nil) {
			s := StepResult(r, cfg.Program.Scripts())
			if err != nil && s.Reason == "" {
				s.Complete, s.Reason = false, err.Error()
			}
			for _, o := range started {
				if oerr := o.Stop(context.WithoutCancel(ctx), &s); oerr != nil && err == nil {
					err = oerr
				}
			}
			diagnose.DisturbanceEffects(&s, diagnose.EffectOptions{})
			steps = append(steps, s)
			Scaling(steps)
			if sw.AfterStep != nil {
				sw.AfterStep(i, steps[len(steps)-1])
			}
		}
		if err != nil {
			return steps, err
		}
	}
	return steps, nil
}

// Scaling fills in each step's speedup and efficiency against the first.
func Scaling(steps []result.Step) {
	if len(steps) == 0 || steps[0].Summary.TPS <= 0 {
		return
	}
	base := steps[0]
	for i := range steps {
		s := &steps[i].Summary
		s.Speedup = s.TPS / base.Summary.TPS
		s.Efficiency = s.Speedup / (float64(steps[i].Clients) / float64(base.Clients))
	}
}

func ms(us float64) float64 { return us / 1000 }

func failedByKind(c *metrics.Counts) map[string]int64 {
	var m map[string]int64
	for k, n := range c.Failed {
		if n > 0 {
			if m == nil {
				m = map[string]int64{}
			}
			m[metrics.FailKind(k).String()] = n
		}
	}
	return m
}

// StepResult turns what the engine measured into the result file's step.
func StepResult(r *engine.Result, scripts []*script.Script) result.Step {
	t := r.Total
	el := r.Elapsed.Seconds()
	s := result.Step{
		Clients:  r.Clients,
		IO:       r.IO.String(),
		Complete: r.Incomplete == "",
		Reason:   r.Incomplete,
		Started:  r.Began.UTC(),
		ElapsedS: el,
	}
	sum := &s.Summary
	sum.Transactions = t.Transactions
	if el > 0 {
		sum.TPS = float64(t.Transactions) / el
	}
	sum.Latency = result.Latency(t.Summarize())
	sum.Failed = t.FailedTotal()
	sum.FailedByKind = failedByKind(&t.Counts)
	sum.Retried, sum.Retries, sum.Skipped, sum.Late = t.Retried, t.Retries, t.Skipped, t.Late
	if t.Transactions > 0 {
		sum.LagMeanMs = ms(t.LagSumUS / float64(t.Transactions))
	}
	sum.LagMaxMs = ms(float64(t.LagMaxUS))
	sum.ConnectMs = float64(r.ConnectMean.Microseconds()) / 1000
	sum.Connections = t.Conns
	if t.Conns > 0 {
		sum.ConnMeanMs = ms(t.ConnSumUS / float64(t.Conns))
	}
	cpu := r.ClientUser + r.ClientSys
	sum.ClientCPU = result.CPU{UserS: r.ClientUser.Seconds(), SysS: r.ClientSys.Seconds()}
	if t.Transactions > 0 {
		sum.ClientCPU.PerTxnUS = float64(cpu.Microseconds()) / float64(t.Transactions)
	}
	if el > 0 {
		sum.ClientCPU.Share = cpu.Seconds() / (el * float64(runtime.NumCPU()))
	}
	sum.Aborted = r.Aborted
	s.Histogram, _ = metrics.EncodeHistogram(t.Latency)
	for _, p := range r.Series {
		iv := result.Interval{
			StartS: p.Start.Seconds(), LengthS: p.Length.Seconds(),
			Transactions: p.Counts.Transactions, Latency: result.Latency(p.Latency),
			Failed: p.Counts.FailedTotal(), FailedByKind: failedByKind(&p.Counts),
			Retries: p.Counts.Retries, Skipped: p.Counts.Skipped, Late: p.Counts.Late,
			Histogram: p.Histogram,
		}
		if p.Length > 0 {
			iv.TPS = float64(p.Counts.Transactions) / p.Length.Seconds()
		}
		if p.Counts.Transactions > 0 {
			iv.LagMeanMs = ms(p.Counts.LagSumUS / float64(p.Counts.Transactions))
		}
		s.Intervals = append(s.Intervals, iv)
	}
	if len(scripts) > 1 {
		for si, sc := range scripts {
			st := t.Scripts[si]
			ss := result.ScriptStat{Name: sc.Name, Weight: sc.Weight, Transactions: st.Transactions, Failed: st.Failed}
			if el > 0 {
				ss.TPS = float64(st.Transactions) / el
			}
			if st.Transactions > 0 {
				n := float64(st.Transactions)
				mean := st.LatSumUS / n
				ss.LatMeanMs = mean / 1000
				ss.LatStddevMs = math.Sqrt(max(st.LatSumSqUS/n-mean*mean, 0)) / 1000
			}
			s.Scripts = append(s.Scripts, ss)
		}
	}
	if len(t.Commands) > 0 && anyCommand(t.Commands) {
		for si, sc := range scripts {
			for pc, cmd := range sc.Commands {
				st := t.Commands[r.CommandOffset(si)+pc]
				c := result.Command{Script: sc.Name, Line: cmd.Line, Text: cmd.Text, Count: st.Count, Failed: st.Failed, Retries: st.Retries}
				if st.Count > 0 {
					c.MeanMs = ms(st.SumUS / float64(st.Count))
				}
				s.Commands = append(s.Commands, c)
			}
		}
	}
	for _, e := range r.Errors {
		s.Errors = append(s.Errors, result.Error{Kind: e.Kind.String(), Message: e.Msg, Count: e.Count})
	}
	result.SortErrors(s.Errors)
	return s
}

func anyCommand(cs []metrics.CommandStat) bool {
	for _, c := range cs {
		if c.Count > 0 || c.Failed > 0 {
			return true
		}
	}
	return false
}

// DescribeStep is the one-line summary printed after each step.
func DescribeStep(s result.Step) string {
	sum := s.Summary
	line := fmt.Sprintf("%d client%s: %d transactions in %.1f s, %.1f tps, lat avg %.3f ms (stddev %.3f, p50 %.3f, p99 %.3f, max %.3f), %d failed",
		s.Clients, plural(s.Clients), sum.Transactions, s.ElapsedS, sum.TPS, sum.Latency.MeanMs, sum.Latency.StddevMs,
		sum.Latency.P50Ms, sum.Latency.P99Ms, sum.Latency.MaxMs, sum.Failed)
	if sum.Retries > 0 {
		line += fmt.Sprintf(", %d retried (%d retries)", sum.Retried, sum.Retries)
	}
	if sum.ClientCPU.PerTxnUS > 0 {
		line += fmt.Sprintf(", client cpu %.1f µs/txn", sum.ClientCPU.PerTxnUS)
	}
	if !s.Complete {
		line += " [incomplete: " + s.Reason + "]"
	}
	return line
}

// plural is "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
