package disturb

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/script"
	"github.com/pgscale/pgscale/internal/secret"
)

// Disturber is the Watcher that runs disturbances in their windows of
// every step, on sessions of its own, and adds to each step what each
// window did. (What the workload did before, during and after a window is
// diagnose's to work out, from the step's series.)
//
// Each window's sessions connect as the step starts, so that the window
// opens sharply on time; at the window's end (or the step's) a query in
// flight is cancelled and the sessions are closed.
type Disturber struct {
	Conn         *pgconn.Config
	Disturbances []Disturbance
	// Scale and Seed fill :scale and the scripts' random state, as for the
	// workload.
	Scale int
	Seed  uint64
	// Events, when set, receives one-line notices (a window could not
	// start).
	Events func(string)

	cur *disturbStep // the step in progress, between Start and Stop
}

// disturbStep is one step's windows in progress.
type disturbStep struct {
	info    observe.StepInfo
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	windows []*windowRun
}

// windowRun is one disturbance's window in one step.
type windowRun struct {
	d        *Disturbance
	sessions []*session
	began    time.Time
	ended    time.Time
	startErr error
}

var _ observe.CompanionWatcher = (*Disturber)(nil)

// Companions is the disturbances' sessions, each of which waits on the
// network beside the clients and needs a P of its own
// (observe.CompanionWatcher).
func (dt *Disturber) Companions() int { return Sessions(dt.Disturbances) }

// Start connects every window's sessions and schedules the windows.
func (dt *Disturber) Start(ctx context.Context, info observe.StepInfo) error {
	ctx, cancel := context.WithCancel(ctx)
	st := &disturbStep{info: info, cancel: cancel}
	for i := range dt.Disturbances {
		d := &dt.Disturbances[i]
		prog, err := script.NewProgram([]*script.Script{d.Script}, script.Options{
			Scale: dt.Scale, RandomSeed: dt.Seed, Defines: d.Defines, Clients: d.Sessions})
		if err != nil {
			cancel()
			return fmt.Errorf("disturbance %s: %w", d.Spec, err)
		}
		w := &windowRun{d: d}
		cfg := sessionConfig(dt.Conn, d.Name)
		for j := 0; j < d.Sessions; j++ {
			w.sessions = append(w.sessions, newSession(cfg, d.Script, prog.NewInterp(j), d.Hold))
		}
		st.windows = append(st.windows, w)
		st.wg.Add(1)
		go func() {
			defer st.wg.Done()
			w.run(ctx, info, dt.events())
		}()
	}
	dt.cur = st
	return nil
}

func (dt *Disturber) events() func(string) {
	if dt.Events == nil {
		return func(string) {}
	}
	return dt.Events
}

// run connects the sessions, waits for the window, runs them until the
// window or the step ends, and closes them.
func (w *windowRun) run(ctx context.Context, info observe.StepInfo, events func(string)) {
	defer func() {
		for _, s := range w.sessions {
			s.close()
		}
	}()
	for _, s := range w.sessions {
		if err := s.connect(ctx); err != nil {
			if ctx.Err() == nil {
				w.startErr = err
				events(fmt.Sprintf("disturbance %s did not start: %s", w.d.Spec, secret.Redact(err.Error())))
			}
			return
		}
	}
	t := time.NewTimer(time.Until(info.Window.Add(w.d.Window.Start)))
	select {
	case <-t.C:
	case <-ctx.Done():
		t.Stop()
		return
	}
	if w.d.Window.End > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, info.Window.Add(w.d.Window.End))
		defer cancel()
	}
	w.began = time.Now()
	var wg sync.WaitGroup
	for _, s := range w.sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.loop(ctx)
		}()
	}
	wg.Wait()
	w.ended = time.Now()
}

// Stop ends the step's windows still running and records each one in the
// step.
func (dt *Disturber) Stop(_ context.Context, step *result.Step) error {
	st := dt.cur
	if st == nil {
		return nil
	}
	dt.cur = nil
	st.cancel()
	st.wg.Wait()
	for _, w := range st.windows {
		step.Disturbances = append(step.Disturbances, w.record(step))
	}
	sort.SliceStable(step.Disturbances, func(i, j int) bool { return step.Disturbances[i].StartS < step.Disturbances[j].StartS })
	return nil
}

// record is what the window did, for the result file.
func (w *windowRun) record(step *result.Step) result.Disturbance {
	d := w.d
	r := result.Disturbance{
		Name: d.Name, Builtin: d.Builtin, Spec: d.Spec, Stresses: d.Stresses,
		Script: d.Script.Source, Defines: d.Defines, Hold: d.Hold,
		StartS: d.Window.Start.Seconds(), EndS: d.Window.End.Seconds(), OpenEnd: d.Window.End == 0,
		Sessions: d.Sessions,
	}
	if r.OpenEnd {
		r.EndS = step.ElapsedS
	}
	if !w.began.IsZero() {
		r.RanS = w.ended.Sub(w.began).Seconds()
	}
	for _, s := range w.sessions {
		r.Iterations += s.iterations
		r.Errors += s.errors
		r.CutOff += s.cutOff
	}
	if r.RanS > 0 {
		r.Rate = float64(r.Iterations) / r.RanS
	}
	r.ErrorMessages = errorList(w.sessions)
	if w.startErr != nil {
		r.ErrorMessages = append(r.ErrorMessages, result.Error{Kind: "connection", Message: "did not start: " + secret.Redact(w.startErr.Error()), Count: 1})
	}
	return r
}

// Edges returns the window edges that fall in the interval [from, to) of a
// step's measured window (from is negative in the warm-up, whose length is
// warmup), from the schedule. An edge at a tick belongs to the interval
// that ends there, so the line printed at 15.0 s carries a window starting
// at 15 s; a window starting at 0 belongs to the first interval.
func (dt *Disturber) Edges(from, to, warmup time.Duration) []observe.Edge {
	in := func(t time.Duration) bool {
		return from < t && t <= to || t == 0 && from == 0 && warmup == 0
	}
	var out []observe.Edge
	for _, d := range dt.Disturbances {
		if in(d.Window.Start) {
			out = append(out, observe.Edge{Name: d.Name, Start: true})
		}
		if d.Window.End > 0 && in(d.Window.End) {
			out = append(out, observe.Edge{Name: d.Name})
		}
	}
	return out
}
