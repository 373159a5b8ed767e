package rig

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/target"
)

// Relayout makes layout n of the targets' clusters: it re-creates the
// ephemeral clusters (target.Renew) — new data directories, shared memory
// and sockets —, gives them the data again, made as before, and watches
// them again as Watch did, still guarded (Guard). The clusters of targets
// that ran on a copy of the baseline's data are made without data of
// their own: a copy is to be theirs again (their initdb and start would be
// wasted).
func (r *Rig) Relayout(ctx context.Context, n int) error {
	r.exp.Notice(fmt.Sprintf("layout %d: re-creating the clusters (new data directories, shared memory and sockets) and their data...", n))
	if r.unguard != nil {
		r.unguard()
		defer func() { r.unguard = r.watchServers(r.cancel) }()
	}
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
		return fmt.Errorf("re-create the clusters: %w", err)
	}
	clusters := time.Since(began)
	if err := r.prepare(ctx, renewed); err != nil {
		return err
	}
	r.times.ClustersS = clusters.Seconds()
	return r.Watch(ctx, r.slices)
}

// Layout records layout n as the targets now are: where each one's
// clients connect, where its data came from, and how long making it
// took (took: all of it, 0 for the first layout, made before the run);
// in a counted run, what each part of making it took.
func (r *Rig) Layout(n int, took time.Duration) result.Layout {
	l := result.Layout{Layout: n, SetupS: took.Seconds(), Servers: map[string]string{}, Data: r.data}
	for _, t := range r.targets {
		l.Servers[t.name] = t.srv.Info.Description
	}
	if r.exp.Counting() {
		times := r.times
		l.Times = &times
	}
	return l
}

// Layouts says whether the targets run on more than one server of which
// one at least is an ephemeral cluster this process can re-create: only
// then can a new layout draw their clusters anew.
func (r *Rig) Layouts() bool {
	origins := map[*target.Server]bool{}
	ephemeral := false
	for _, t := range r.targets {
		origins[t.srv.Origin()] = true
		ephemeral = ephemeral || t.srv.Ephemeral()
	}
	return len(origins) >= 2 && ephemeral
}
