package target

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// Renewable reports whether Renew would re-create anything among servers:
// whether one of them is an ephemeral cluster (or fronts one).
func Renewable(servers []*Server) bool {
	for _, s := range servers {
		if s != nil && s.Ephemeral() {
			return true
		}
	}
	return false
}

// Renew re-creates, in place, every ephemeral cluster among servers, so
// that the next rounds run on a new layout: it stops the poolers in front
// of them and the clusters (removing their directories), then starts every
// cluster anew from the same binaries and settings — a new data directory,
// new shared memory, a new socket directory (and with TCP a new port) —
// then the poolers again in front of them, and points same-cluster targets
// at their new server. The *Server values stay the same, with new Config,
// Cluster, Pooler and Info; the data is the caller's to make again.
// Existing (dsn) servers and poolers in front of them are left as they
// are. On error some servers may be down; Close still stops what runs.
//
// The clusters of empty (servers among them with no pooler in front, and
// started from a build's binaries: bin:, settings:, src:) are made anew
// without data and not started (Options.Empty): a copy of another's data
// is to be theirs (CopyData, then Resume), and their initdb and start
// would be wasted.
func Renew(ctx context.Context, servers []*Server, empty ...*Server) error {
	var poolers, clusters, sessions []*Server
	for _, s := range servers {
		switch {
		case s == nil || !s.Ephemeral():
		case s.Pooler != nil:
			poolers = append(poolers, s)
			for _, o := range s.owned {
				if o.Cluster != nil {
					clusters = append(clusters, o)
				}
			}
		case s.Cluster != nil:
			clusters = append(clusters, s)
		case s.session != nil || s.Fronts != nil:
			sessions = append(sessions, s)
		}
	}
	for _, p := range poolers {
		p.stopPooler()
	}
	for _, c := range clusters {
		for _, r := range c.Replicas {
			r.Close()
		}
		c.Replicas = nil
		if err := c.Cluster.Stop(); err != nil {
			c.log(fmt.Sprintf("warning: removing the ephemeral cluster: %v", err))
		}
	}
	errs := make([]error, len(clusters))
	var wg sync.WaitGroup
	for i, c := range clusters {
		wg.Go(func() { errs[i] = c.restart(ctx, slices.Contains(empty, c)) })
	}
	wg.Wait()
	if err := FirstError(errs); err != nil {
		return err
	}
	for _, s := range sessions {
		s.Config = sessionConfig(s.Fronts.Config, s.session)
		s.Info.Description = Describe(s.Config)
	}
	for _, p := range poolers {
		if err := p.restart(ctx, false); err != nil {
			return err
		}
	}
	return nil
}

// restart starts the server again as it was started, silently, in place:
// the same *Server, with the new server's Config, Cluster, Pooler and
// Info, keeping its name, its notices, the servers of its own and what
// its binaries' storage is. With empty a cluster is made without data
// and not started (Renew).
func (s *Server) restart(ctx context.Context, empty bool) error {
	h := s.how
	var srv *Server
	var err error
	if cs, ok := h.st.(*clusterStart); ok && empty {
		srv, err = cs.startEmpty(ctx, h.needs, func(string) {})
	} else {
		srv, err = h.st.start(ctx, h.fronts, h.needs, func(string) {})
	}
	if err != nil {
		return err
	}
	owned, name, log, st := s.owned, s.Info.Name, s.log, s.storage
	*s = *srv
	s.how, s.owned, s.Info.Name, s.log, s.storage = h, owned, name, log, st
	if len(owned) > 0 && s.Info.Pooler != nil {
		s.Info.Pooler.Of = ""
	}
	return nil
}
