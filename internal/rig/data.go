package rig

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pgscale/pgscale/internal/engine"
	"github.com/pgscale/pgscale/internal/experiment"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
	"github.com/pgscale/pgscale/internal/workload"
)

// Prepare gives every target the workload's data, the same init and
// set-up on each. In a counted run of several targets the baseline makes
// it, and every other target whose storage can run it (target.Copyable)
// gets a byte-identical copy, so that a paired difference within the
// layout is the targets' code's alone; the rest (and every target
// otherwise) make their own, side by side. A pooler in front of another
// target's server has that target's data; dsn targets are prepared one
// after the other (two may be one database). A counted server is then
// restarted under Valgrind: only the steps run under callgrind.
func (r *Rig) Prepare(ctx context.Context) error { return r.prepare(ctx, r.all()) }

// all are the indexes of every target.
func (r *Rig) all() []int {
	out := make([]int, len(r.targets))
	for i := range out {
		out[i] = i
	}
	return out
}

// owners maps each target that is a pooler in front of another target's
// server to that target (its data is that target's), -1 for the others.
func (r *Rig) owners() []int {
	owner := make([]int, len(r.targets))
	for i, t := range r.targets {
		owner[i] = -1
		for j, o := range r.targets {
			if t.srv.Fronts != nil && t.srv.Fronts == o.srv {
				owner[i] = j
			}
		}
	}
	return owner
}

// copying says whether the targets among which get their data as copies
// of the baseline's: in a counted run of several targets, whose counts
// are exact within a cluster and differ between clusters with what the
// set-up builds differently (an index's graph, a random sample, a table's
// physical order), when the baseline's server is an ephemeral cluster
// made anew with them and not another target's (a pooler in front of
// it), unless each is to make its own (Data.Separate).
func (r *Rig) copying(which []int) bool {
	return len(r.targets) > 1 && r.exp.Counting() && !r.exp.Data.Separate && slices.Contains(which, 0) &&
		r.targets[0].srv.Origin().Cluster != nil && r.owners()[0] < 0
}

// prepare gives the targets among which (indexes into targets) the
// workload's data (Prepare).
func (r *Rig) prepare(ctx context.Context, which []int) error {
	r.data, r.times = nil, result.LayoutTimes{}
	owner := r.owners()
	var own, copies []int
	if r.copying(which) {
		var err error
		if own, copies, err = r.makeBaseline(ctx, which, owner); err != nil {
			return err
		}
	} else {
		for _, i := range which {
			if r.targets[i].spec.Ephemeral() && owner[i] < 0 {
				own = append(own, i)
			}
		}
	}
	if err := r.makeOwn(ctx, own, r.data != nil); err != nil {
		return err
	}
	if len(copies) > 0 {
		if err := r.copyData(ctx, copies); err != nil {
			return err
		}
	}
	for _, i := range which {
		if t := r.targets[i]; !t.spec.Ephemeral() && owner[i] < 0 {
			began := time.Now()
			if err := r.makeData(ctx, t); err != nil {
				return err
			}
			if err := r.countFromHere(ctx, t, time.Since(began)); err != nil {
				return err
			}
		}
	}
	for _, i := range which {
		if o := owner[i]; o >= 0 {
			t := r.targets[i]
			t.data = r.targets[o].data
			t.srv.RecordInfo(ctx)
		}
	}
	for _, t := range r.targets[1:] {
		if t.data.Scale != r.targets[0].data.Scale {
			remedy := "run pgscale init with the same scale on both"
			if again := r.exp.Data.Recreate; again != "" {
				remedy += ", or " + again
			}
			return usage.Errorf("targets %s and %s hold different data (scale %d and %d): %s",
				r.targets[0].name, t.name, r.targets[0].data.Scale, t.data.Scale, remedy)
		}
	}
	return nil
}

// makeBaseline makes the baseline's data natively and decides, for every
// other ephemeral target among which, whether it runs on a copy of it:
// the targets that make their own (own: the baseline's server is not
// among them, it is counted when the copies are made) and those that get
// a copy.
func (r *Rig) makeBaseline(ctx context.Context, which, owner []int) (own, copies []int, err error) {
	base := r.targets[0]
	began := time.Now()
	if err := r.makeData(ctx, base); err != nil {
		return nil, nil, err
	}
	r.times.DataS = time.Since(began).Seconds()
	r.data = &result.LayoutData{From: base.name}
	for _, i := range which {
		t := r.targets[i]
		if i == 0 || !t.spec.Ephemeral() || owner[i] >= 0 || t.srv.Origin() == base.srv.Origin() {
			continue
		}
		why, err := target.Copyable(ctx, base.srv, t.srv)
		if err != nil {
			why = fmt.Sprintf("whether its server can run a copy of %s's data could not be told (%v)", base.name, err)
		}
		if why == "" {
			copies = append(copies, i)
			r.data.Copies = append(r.data.Copies, t.name)
			continue
		}
		own = append(own, i)
		if r.data.Own == nil {
			r.data.Own = map[string]string{}
		}
		r.data.Own[t.name] = why
		r.say(t.name, fmt.Sprintf("target %s: data of its own, not a copy of %s's: %s", t.name, base.name, why))
	}
	if len(copies) == 0 {
		// Nothing to copy to: the baseline is counted as the others are.
		own = append([]int{0}, own...)
	}
	return own, copies, nil
}

// makeOwn gives each target of own its data and counts it from there,
// side by side; baseMade says the baseline's data is made already.
func (r *Rig) makeOwn(ctx context.Context, own []int, baseMade bool) error {
	errs := make([]error, len(own))
	data := make([]time.Duration, len(own))
	counted := make([]time.Duration, len(own))
	var wg sync.WaitGroup
	for k, i := range own {
		t := r.targets[i]
		wg.Go(func() {
			began := time.Now()
			// A cluster made empty for a copy it is not to get after all.
			if errs[k] = t.srv.Initdb(ctx); errs[k] != nil {
				errs[k] = named(t.name, errs[k])
				return
			}
			if i != 0 || !baseMade {
				if errs[k] = r.makeData(ctx, t); errs[k] != nil {
					return
				}
			}
			data[k] = time.Since(began)
			errs[k] = r.countFromHere(ctx, t, data[k])
			counted[k] = time.Since(began) - data[k]
		})
	}
	wg.Wait()
	r.times.DataS = max(r.times.DataS, slices.Max(append(data, 0)).Seconds())
	r.times.ValgrindS = max(r.times.ValgrindS, slices.Max(append(counted, 0)).Seconds())
	return target.FirstError(errs)
}

// copyData copies the baseline's data to the targets of copies
// (target.CopyData), starts the baseline and them again — under Valgrind:
// their data is made — and gives them what the baseline's data is.
func (r *Rig) copyData(ctx context.Context, copies []int) error {
	base := r.targets[0]
	to := make([]*target.Server, len(copies))
	names := make([]string, len(copies))
	for k, i := range copies {
		to[k], names[k] = r.targets[i].srv, r.targets[i].name
	}
	began := time.Now()
	if err := target.CopyData(ctx, base.srv, to); err != nil {
		return named(base.name, err)
	}
	r.times.CopyS = time.Since(began).Seconds()
	r.exp.Notice(prefixed(base.name, fmt.Sprintf("counting instructions: the data and set-up made natively in %v, copied to %s in %v; starting the servers under Valgrind...",
		experiment.Brief(secs(r.times.DataS)), strings.Join(names, ", "), experiment.Brief(secs(r.times.CopyS)))))
	began = time.Now()
	all := append([]int{0}, copies...)
	errs := make([]error, len(all))
	var wg sync.WaitGroup
	for k, i := range all {
		t := r.targets[i]
		wg.Go(func() {
			if err := t.srv.Resume(ctx); err != nil {
				errs[k] = named(t.name, fmt.Errorf("start the server under Valgrind on %s's data: %w", base.name, err))
			}
		})
	}
	wg.Wait()
	if err := target.FirstError(errs); err != nil {
		return err
	}
	r.times.ValgrindS = max(r.times.ValgrindS, time.Since(began).Seconds())
	for _, i := range copies {
		t := r.targets[i]
		t.data = base.data
		t.srv.RecordInfo(ctx)
		if err := r.checkPrepare(ctx, t); err != nil {
			return err
		}
		r.say(t.name, fmt.Sprintf("target %s: on a byte-identical copy of %s's data, in every cluster layout: a difference between them is their code's", t.name, base.name))
	}
	r.exp.Notice(fmt.Sprintf("counting instructions: the servers run under Valgrind (started in %v)", experiment.Brief(secs(r.times.ValgrindS))))
	return nil
}

// say notices what was decided of a target's data, once.
func (r *Rig) say(name, line string) {
	if r.said == nil {
		r.said = map[string]bool{}
	}
	if !r.said[name] {
		r.said[name] = true
		r.exp.Notice(line)
	}
}

// makeData gives a target's server the workload's data (a pooler's: the
// server it fronts), natively, and records what the server says of
// itself.
func (r *Rig) makeData(ctx context.Context, t *Target) error {
	c := r.exp
	origin := t.srv.Origin()
	// A counted server makes its data natively, and is counted under
	// Valgrind only from then on.
	if err := r.native(ctx, t); err != nil {
		return err
	}
	opts := func(s *target.Server) workload.PrepareOptions {
		return workload.PrepareOptions{
			Create: s.Ephemeral() && c.Data.Pgbench || c.Data.Create, Init: c.Data.Init, ScaleGiven: c.Data.ScaleGiven,
			NeedTables: c.Workload.Builtin, MakeTables: c.Data.MakeTables, Setup: c.Data.Setup, SetupName: c.Data.SetupName, Where: s.Info.Description, Log: c.Notice}
	}
	var logFrom int64
	if origin.Cluster != nil {
		logFrom = origin.Cluster.LogSize()
	}
	d, err := workload.Prepare(ctx, origin.Connect, opts(origin))
	if err != nil {
		return blameCrash(t.name, origin, logFrom, named(t.name, err))
	}
	// The same data on every other server a proxy fronts of its own (run
	// --pooler with of: [s1, s2]: shards); another target's is made as
	// that target's.
	for _, f := range t.srv.OwnFronts() {
		if f == origin {
			continue
		}
		if _, err := workload.Prepare(ctx, f.Connect, opts(f)); err != nil {
			return named(t.name, err)
		}
	}
	// Streaming replicas replay the data before the run starts.
	for _, f := range append([]*target.Server{origin}, t.srv.OwnFronts()...) {
		if err := f.CatchUp(ctx); err != nil {
			return named(t.name, err)
		}
	}
	t.data = d
	t.srv.RecordInfo(ctx)
	return r.checkPrepare(ctx, t)
}

// checkPrepare finds the statements the target's server (through its
// pooler, if it has one) will not prepare, which then run with the
// simple protocol there, and says so the first time.
func (r *Rig) checkPrepare(ctx context.Context, t *Target) error {
	wl := r.exp.Workload
	if wl.Protocol != engine.Prepared || !wl.ProtocolDefault {
		return nil
	}
	fbs, err := workload.CheckPrepare(ctx, t.srv.Connect, wl.Scripts)
	if err != nil {
		return named(t.name, err)
	}
	if len(t.fallbacks) == 0 { // said once, not again for a re-created cluster
		for _, f := range fbs {
			r.exp.Notice(prefixed(t.name, workload.FallbackNotice(wl.Scripts[f.Script], f)))
		}
	}
	t.fallbacks = fbs
	return nil
}

// native restarts the target's counted server natively, when a suite's
// earlier cell left it under Valgrind: the data and the set-up are made
// at native speed.
func (r *Rig) native(ctx context.Context, t *Target) error {
	cl := t.srv.Origin().Cluster
	if !r.exp.Counting() || cl == nil || !cl.UnderValgrind() {
		return nil
	}
	r.exp.Notice(prefixed(t.name, "counting instructions: restarting the server natively for the set-up..."))
	if err := cl.Native(ctx); err != nil {
		return named(t.name, fmt.Errorf("restart the server natively: %w", err))
	}
	return nil
}

// countFromHere restarts the target's server under Valgrind once its
// data is made (target.Cluster.Count): only the measured steps and their
// warm-up run under callgrind. The set-up ran natively: an extension's
// 10 000 rows and an index took nine minutes under Valgrind's
// uninstrumented speed, about as many seconds natively. Only the server
// whose instructions are counted (the target's, or the first a proxy
// fronts) runs under Valgrind; replicas and a proxy's other servers stay
// native.
func (r *Rig) countFromHere(ctx context.Context, t *Target, setup time.Duration) error {
	cl := t.srv.Origin().Cluster
	if !r.exp.Counting() || cl == nil || !cl.Counts() || cl.UnderValgrind() || r.exp.Probes.PoolerOnly {
		return nil // counting the pooler alone (--count pooler), the server stays native
	}
	began := time.Now()
	r.exp.Notice(prefixed(t.name, fmt.Sprintf("counting instructions: the data and set-up made natively in %v; restarting the server under Valgrind...", experiment.Brief(setup))))
	if err := cl.Count(ctx); err != nil {
		return named(t.name, fmt.Errorf("restart the server under Valgrind: %w", err))
	}
	r.exp.Notice(prefixed(t.name, fmt.Sprintf("counting instructions: the server runs under Valgrind (restarted in %v)", experiment.Brief(time.Since(began)))))
	return nil
}

// secs is seconds as a duration, rounded for a line of text.
func secs(s float64) time.Duration {
	return time.Duration(s * float64(time.Second)).Round(100 * time.Millisecond)
}
