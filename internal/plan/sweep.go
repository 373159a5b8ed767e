package plan

import (
	"context"
	"time"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/engine"
	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/script"
)

// Sweep runs the same workload at each client count in turn, on one
// target whose data is ready: the building block of both runners.
type Sweep struct {
	// Watchers watch every step (probes, disturbances), in order.
	Watchers []observe.Watcher
	Clients  []int
	Engine   engine.Config // a template; Clients and Program are set per step
	// Program builds the scripts' program for a step (pgbench seeds each
	// client's random state from one sequence, so it depends on the count).
	Program func(clients int) (*script.Program, error)
	// BeforeStep, when set, runs before each step (pgbench's pre-run vacuum).
	BeforeStep func(ctx context.Context, i, clients int) error
	// AfterStep, when set, sees each step as soon as it is done.
	AfterStep func(i int, s result.Step)
	// Round is the A/B round the sweep is a turn of (1-based), told to
	// the watchers; 0 for a sweep of its own.
	Round int
}

// Run runs the sweep and returns the steps done. On an interrupt or a step
// that could not complete it stops and returns the steps so far (the last
// one marked incomplete) with the error. Each step's disturbance windows
// get their effect on the workload, and the steps their speedup.
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
			info := observe.StepInfo{Index: i, Round: sw.Round, Clients: n, Start: start, Window: window, Duration: cfg.Duration}
			for _, o := range sw.Watchers {
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
			diagnose.Scaling(steps)
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
