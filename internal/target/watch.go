package target

import (
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/watch"
)

// Watch is what the probes may ask of the target's server (behind a
// pooler, the server it fronts): its connection, processes, data
// directory, build constants, Valgrind, the servers behind the target and
// the pooler in front with its admin console.
func (s *Server) Watch() watch.Server { return watched{s} }

// watched is a target's server as the probes see it.
type watched struct{ s *Server }

func (w watched) Conn() *pgconn.Config { return w.s.Origin().Config }

func (w watched) PID() int {
	if c := w.s.Origin().Cluster; c != nil {
		return c.PID()
	}
	return 0
}

func (w watched) Ephemeral() bool { return w.s.Ephemeral() }

func (w watched) DataDir() string {
	if c := w.s.Origin().Cluster; c != nil {
		return c.DataDir
	}
	return ""
}

func (w watched) BuildConstant(name string) (int, bool) {
	b := w.s.Origin().Info.Build
	if b == nil {
		return 0, false
	}
	v, ok := b.Constants[name]
	return int(v), ok
}

func (w watched) Callgrind() *watch.Callgrind { return w.s.Origin().Cluster.callgrind() }

// Upstreams are the servers behind the target (Server.Upstreams), a
// replica knowing its primary's place.
func (w watched) Upstreams() []watch.Upstream {
	var out []watch.Upstream
	primary := -1
	for _, u := range w.s.Upstreams() {
		wu := watch.Upstream{Name: u.Name, Role: u.Role, Primary: -1, Conn: u.Server.Config}
		if u.Role == "primary" {
			primary = len(out)
		} else {
			wu.Primary = primary
		}
		out = append(out, wu)
	}
	return out
}

func (w watched) Pooler() watch.Pooler {
	if w.s.Pooler == nil {
		return nil
	}
	return watchedPooler{w.s.Pooler}
}

// watchedPooler is a target's pooler as the probes see it.
type watchedPooler struct{ Pooler }

func (p watchedPooler) Callgrind() *watch.Callgrind {
	cp, ok := p.Pooler.(CountedPooler)
	if !ok || !cp.UnderValgrind() {
		return nil
	}
	return &watch.Callgrind{Control: cp.Callgrind, Out: cp.CallgrindOut}
}

// Watch is an ephemeral cluster as the probes see it, for a cluster that
// is no target's (a test's).
func (c *Cluster) Watch() watch.Server {
	cfg, err := ParseDSN(c.ConnString("postgres"))
	if err != nil {
		panic("target: the cluster's own connection string: " + err.Error())
	}
	return watchedCluster{c, cfg}
}

// watchedCluster is a cluster alone: no build record, no upstreams, no
// pooler.
type watchedCluster struct {
	c   *Cluster
	cfg *pgconn.Config
}

func (w watchedCluster) Conn() *pgconn.Config             { return w.cfg }
func (w watchedCluster) PID() int                         { return w.c.PID() }
func (w watchedCluster) Ephemeral() bool                  { return true }
func (w watchedCluster) DataDir() string                  { return w.c.DataDir }
func (w watchedCluster) BuildConstant(string) (int, bool) { return 0, false }
func (w watchedCluster) Callgrind() *watch.Callgrind      { return w.c.callgrind() }
func (w watchedCluster) Upstreams() []watch.Upstream      { return nil }
func (w watchedCluster) Pooler() watch.Pooler             { return nil }

// callgrind is how the probes reach a cluster run under Valgrind, nil for
// any other (and for no cluster).
func (c *Cluster) callgrind() *watch.Callgrind {
	if c == nil || !c.UnderValgrind() {
		return nil
	}
	return &watch.Callgrind{Control: c.Callgrind, Out: c.CallgrindOut}
}
