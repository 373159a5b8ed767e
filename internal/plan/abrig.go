package plan

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pgscale/pgscale/internal/agent"
	"github.com/pgscale/pgscale/internal/disturb"
	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
	"github.com/pgscale/pgscale/internal/workload"
)

// abRig is what an A/B run's rounds run on: its opened targets and their
// data, one cluster layout after another. It gives each layout its data
// (prepare) — in a counted run made once, by the baseline, and copied
// byte for byte to every target whose storage can run it, so that a
// paired difference within the layout is the targets' code's alone —
// re-creates the clusters for the next layout (relayout), and says what
// each layout was and what making it took (layout).
type abRig struct {
	spec    *ABSpec
	targets []*prepared // baseline first
	specs   []target.Spec
	wl      *workload.Loaded
	setup   string
	ds      []disturb.Disturbance
	coord   *agent.Coordinator
	// data and times are the present layout's: where each target's data
	// came from (nil when each made its own), and what making it took.
	data  *result.LayoutData
	times result.LayoutTimes
	// said are the targets whose data's origin was said.
	said map[string]bool
}

// all are the indexes of every target.
func (r *abRig) all() []int {
	out := make([]int, len(r.targets))
	for i := range out {
		out[i] = i
	}
	return out
}

// owners maps each target that is a pooler in front of another target's
// server to that target (its data is that target's), -1 for the others.
func (r *abRig) owners() []int {
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
// of the baseline's: in a counted run, whose counts are exact within a
// cluster and differ between clusters with what the set-up builds
// differently (an index's graph, a random sample, a table's physical
// order), when the baseline's server is an ephemeral cluster made anew
// with them and not another target's (a pooler in front of it), unless
// each is to make its own (Data.Separate).
func (r *abRig) copying(which []int) bool {
	return r.spec.counting() && !r.spec.Data.Separate && slices.Contains(which, 0) && r.targets[0].srv.Origin().Cluster != nil &&
		r.owners()[0] < 0
}

// prepare gives the targets among which (indexes into targets) the
// workload's data, the same init and set-up on each. Without copies
// (copying) every ephemeral target makes its own, side by side; with
// them the baseline makes it, and every other target whose storage can
// run it (target.Copyable) gets a byte-identical copy; the rest make
// their own. A pooler in front of another target's server has that
// target's data; dsn targets are prepared one after the other (two may
// be one database).
func (r *abRig) prepare(ctx context.Context, which []int) error {
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
			if r.specs[i].Ephemeral() && owner[i] < 0 {
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
		if t := r.targets[i]; !r.specs[i].Ephemeral() && owner[i] < 0 {
			if err := r.spec.prepare(ctx, t, r.wl, r.setup); err != nil {
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
			return usage.Errorf("targets %s and %s hold different data (scale %d and %d): run pgscale init with the same scale on both, or pass --init",
				r.targets[0].name, t.name, r.targets[0].data.Scale, t.data.Scale)
		}
	}
	return nil
}

// makeBaseline makes the baseline's data natively and decides, for every
// other ephemeral target among which, whether it runs on a copy of it:
// the targets that make their own (own: the baseline's server is not
// among them, it is counted when the copies are made) and those that get
// a copy.
func (r *abRig) makeBaseline(ctx context.Context, which, owner []int) (own, copies []int, err error) {
	base := r.targets[0]
	began := time.Now()
	if err := r.spec.makeData(ctx, base, r.wl, r.setup); err != nil {
		return nil, nil, err
	}
	r.times.DataS = time.Since(began).Seconds()
	r.data = &result.LayoutData{From: base.name}
	for _, i := range which {
		t := r.targets[i]
		if i == 0 || !r.specs[i].Ephemeral() || owner[i] >= 0 || t.srv.Origin() == base.srv.Origin() {
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
func (r *abRig) makeOwn(ctx context.Context, own []int, baseMade bool) error {
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
				if errs[k] = r.spec.makeData(ctx, t, r.wl, r.setup); errs[k] != nil {
					return
				}
			}
			data[k] = time.Since(began)
			errs[k] = r.spec.countFromHere(ctx, t, data[k])
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
func (r *abRig) copyData(ctx context.Context, copies []int) error {
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
	r.spec.notice(prefixed(base.name, fmt.Sprintf("counting instructions: the data and set-up made natively in %v, copied to %s in %v; starting the servers under Valgrind...",
		brief(secs(r.times.DataS)), strings.Join(names, ", "), brief(secs(r.times.CopyS)))))
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
		if err := r.spec.checkPrepare(ctx, t, r.wl); err != nil {
			return err
		}
		r.say(t.name, fmt.Sprintf("target %s: on a byte-identical copy of %s's data, in every cluster layout: a difference between them is their code's", t.name, base.name))
	}
	r.spec.notice(fmt.Sprintf("counting instructions: the servers run under Valgrind (started in %v)", brief(secs(r.times.ValgrindS))))
	return nil
}

// say notices what was decided of a target's data, once.
func (r *abRig) say(name, line string) {
	if r.said == nil {
		r.said = map[string]bool{}
	}
	if !r.said[name] {
		r.said[name] = true
		r.spec.notice(line)
	}
}

// abTargets are the targets as AB runs them on the present layout, with
// what watches them (ABSpec.abTargets).
func (r *abRig) abTargets(ctx context.Context) ([]ABTarget, error) {
	began := time.Now()
	defer func() { r.times.ProbesS = time.Since(began).Seconds() }()
	return r.spec.abTargets(ctx, r.targets, r.wl, r.ds, r.coord)
}

// relayout re-creates the ephemeral clusters (target.Renew) for a new
// layout, gives them the data again, made as before, and returns the
// targets as AB runs them on it. The clusters of targets that ran on a
// copy of the baseline's data are made without data of their own: a copy
// is to be theirs again (their initdb and start would be wasted).
func (r *abRig) relayout(ctx context.Context) ([]ABTarget, error) {
	began := time.Now()
	servers := make([]*target.Server, len(r.targets))
	var renewed []int
	var empty []*target.Server // those that ran on a copy, without a pooler in front: a copy is to be their data again
	for i, t := range r.targets {
		t.unwatch()
		servers[i] = t.srv
		if t.srv.Ephemeral() {
			renewed = append(renewed, i)
		}
		if r.data != nil && slices.Contains(r.data.Copies, t.name) && t.srv.Pooler == nil && t.srv.Origin() == t.srv {
			empty = append(empty, t.srv)
		}
	}
	if err := target.Renew(ctx, servers, empty...); err != nil {
		return nil, fmt.Errorf("re-create the clusters: %w", err)
	}
	clusters := time.Since(began)
	if err := r.prepare(ctx, renewed); err != nil {
		return nil, err
	}
	r.times.ClustersS = clusters.Seconds()
	return r.abTargets(ctx)
}

// layout records layout n as the targets now are: where each one's
// clients connect, where its data came from, and how long making it
// took (took: all of it, 0 for the first layout, made before the run).
func (r *abRig) layout(n int, took time.Duration) result.Layout {
	l := result.Layout{Layout: n, SetupS: took.Seconds(), Servers: map[string]string{}, Data: r.data}
	for _, t := range r.targets {
		l.Servers[t.name] = t.srv.Info.Description
	}
	if r.spec.counting() {
		times := r.times
		l.Times = &times
	}
	return l
}

// withRoundTimes is layouts with each one's warm-up round and rounds
// timed, from what the run did.
func withRoundTimes(layouts []result.Layout, run *ABRun) []result.Layout {
	out := make([]result.Layout, len(layouts))
	for i, l := range layouts {
		out[i] = l
		if l.Times == nil {
			continue
		}
		times := *l.Times
		times.WarmupS = run.Warmups[l.Layout].Seconds()
		times.RoundsS = 0
		for r, n := range run.Layouts {
			if n == l.Layout && r < len(run.RoundTimes) {
				times.RoundsS += run.RoundTimes[r].Seconds()
			}
		}
		out[i].Times = &times
	}
	return out
}

// timesNotice says what a counted run's layouts took, part by part.
func (c *Common) timesNotice(layouts []result.Layout) {
	var sum result.LayoutTimes
	var all float64
	n := 0
	for _, l := range layouts {
		if l.Times == nil {
			continue
		}
		n++
		t := l.Times
		sum.ClustersS += t.ClustersS
		sum.DataS += t.DataS
		sum.CopyS += t.CopyS
		sum.ValgrindS += t.ValgrindS
		sum.ProbesS += t.ProbesS
		sum.WarmupS += t.WarmupS
		sum.RoundsS += t.RoundsS
		all += t.ClustersS + t.DataS + t.CopyS + t.ValgrindS + t.ProbesS + t.WarmupS + t.RoundsS
	}
	if n == 0 {
		return
	}
	parts := []string{}
	for _, p := range []struct {
		what string
		s    float64
	}{{"starting the clusters", sum.ClustersS}, {"the data and set-up", sum.DataS}, {"copying the data", sum.CopyS},
		{"starting under Valgrind", sum.ValgrindS}, {"connecting the probes", sum.ProbesS}, {"warm-up rounds", sum.WarmupS},
		{"the rounds", sum.RoundsS}} {
		if p.s > 0 {
			parts = append(parts, fmt.Sprintf("%s %v", p.what, brief(secs(p.s))))
		}
	}
	c.notice(fmt.Sprintf("counting instructions: %s took %v: %s", prose.Count(n, "cluster layout"), brief(secs(all)), strings.Join(parts, ", ")))
}
