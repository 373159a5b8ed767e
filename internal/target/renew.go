package target

import (
	"context"
	"fmt"
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
func Renew(ctx context.Context, servers []*Server) error {
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
		if err := c.Cluster.Stop(); err != nil {
			c.log(fmt.Sprintf("warning: removing the ephemeral cluster: %v", err))
		}
	}
	errs := make([]error, len(clusters))
	var wg sync.WaitGroup
	for i, c := range clusters {
		wg.Go(func() { errs[i] = c.restart(ctx) })
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
		if err := p.restart(ctx); err != nil {
			return err
		}
	}
	return nil
}

// restart starts the server again as it was started, silently, in place:
// the same *Server, with the new server's Config, Cluster, Pooler and
// Info, keeping its name, its notices and the servers of its own.
func (s *Server) restart(ctx context.Context) error {
	h := s.how
	srv, err := h.st.start(ctx, h.fronts, h.needs, func(string) {})
	if err != nil {
		return err
	}
	owned, name, log := s.owned, s.Info.Name, s.log
	*s = *srv
	s.how, s.owned, s.Info.Name, s.log = h, owned, name, log
	if len(owned) > 0 && s.Info.Pooler != nil {
		s.Info.Pooler.Of = ""
	}
	return nil
}
