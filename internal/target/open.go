package target

import (
	"context"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/build"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/usage"
	"github.com/pgscale/pgscale/internal/watch"
)

// ClusterOptions shape every ephemeral cluster of a run (--pg-bin, --tmpfs,
// --tcp, --keep, --os-user, --set).
type ClusterOptions struct {
	PGBin  string // server binaries of Settings targets; FindBinDir's default when empty
	Tmpfs  bool   // data directory under /dev/shm
	TCP    bool   // also listen on 127.0.0.1 at a free port; clients connect over TCP
	Keep   bool   // leave the cluster running at the end and say how to reach it
	OSUser string // the OS user that runs the server when pgscale runs as root
	// Settings are name=value server settings, applied after pgscale's
	// defaults and before a target's own.
	Settings []string
	// Valgrind, when set, runs every ephemeral server under Valgrind's
	// callgrind with CountingSettings (--count instructions).
	Valgrind *Valgrind
	// Separate gives every settings target of OpenAll a cluster of its
	// own (--separate-clusters), even when all its settings could be set
	// per session on the baseline's.
	Separate bool
	// HBA are pg_hba.conf lines placed before the defaults (agents on this
	// machine connect from loopback addresses of their own).
	HBA []string
	// BuildCache is where src: targets' builds are kept (--build-cache);
	// empty means build.DefaultCacheDir.
	BuildCache string
	// Words are what the edge calls these options, for what is said of
	// them.
	Words Words
}

// builder builds into the options' build cache.
func (o ClusterOptions) builder() *build.Builder {
	return &build.Builder{Cache: o.BuildCache, CacheWord: o.Words.BuildCache}
}

// Needs is what a run will ask of the servers it opens, to size ephemeral
// clusters and poolers: the data it creates, the connections it opens at
// once (Clients of them the clients', the rest sessions of its own), and
// whether the clients use prepared statements.
type Needs struct {
	DataBytes   int64
	Connections int
	Clients     int
	Prepared    bool
}

// Server is a server ready for connections: an existing one named by a
// connection string, an ephemeral cluster this process started, or a
// pooler in front of one.
type Server struct {
	// Config is where the clients connect: the server, or the pooler in
	// front of it.
	Config  *pgconn.Config
	Cluster *Cluster // nil unless ephemeral
	// Pooler is a pooler target's pooler, in front of Fronts; nil for
	// other targets.
	Pooler Pooler
	// Fronts is the server behind this target: for a pooler the server
	// it fronts (another target's, or one of its own, run --pooler, that
	// Close stops with the pooler); for a same-cluster settings target
	// the baseline's server, which its clients reach with their session
	// settings (Info.SessionSettings) in Config. Nil otherwise.
	Fronts *Server
	// Info is what the result file says of the target; RecordInfo adds
	// the server's version and settings.
	Info result.Target
	// Replicas are the streaming replicas of an ephemeral cluster
	// (replicas=N), which Close stops with it.
	Replicas []*Server
	keep     bool
	log      func(string)
	// owned are the servers a pooler opened for itself to stand in front
	// of (run --pooler), which Close stops with it.
	owned []*Server
	// session are a same-cluster target's session settings.
	session []Setting
	// how is how the server was started, for Renew: nil for a
	// same-cluster target.
	how *startPlan
	// storage is what its binaries' data directory is, once asked
	// (Copyable); Renew keeps it, the binaries being the same.
	storage *storage
}

// Pooler is a pooler or proxy this process started in front of a server:
// one child process, accounted apart from the server's.
type Pooler interface {
	// Program names it in messages and in the name of its log kept with
	// a result: "pgbouncer".
	Program() string
	// PID is its process id (0 when it is not running), for the probe
	// that accounts its CPU.
	PID() int
	// Running reports whether it is alive.
	Running() bool
	// Exited is closed when its process has exited, and ExitError says
	// then how, in one line.
	Exited() <-chan struct{}
	ExitError() error
	// SaveLog copies its log, passwords redacted, to path.
	SaveLog(path string) error
	// Admin is its admin console, nil when its definition names none.
	Admin() *watch.Admin
	// Stop stops it and removes what it wrote; safe to call twice.
	Stop() error
}

// startPlan is how a server was started, to start it again (Renew).
type startPlan struct {
	st     starter
	needs  Needs
	fronts []*Server
}

// Open opens the target spec names: for a dsn target it only parses the
// connection string (nothing is connected yet); for an ephemeral one it
// starts a cluster sized for needs; a pooler starts in front of a server
// of its own. log receives one-line notices. Errors in what the user gave
// are usage errors; the caller must Close the server, which stops what it
// started.
func Open(ctx context.Context, spec Spec, opt ClusterOptions, needs Needs, log func(string)) (*Server, error) {
	o := newOpening(opt, needs, log)
	p, err := o.plan(ctx, spec, nil)
	if err != nil {
		return nil, err
	}
	return o.open(ctx, p, nil, needs)
}

// OpenAll opens every target: each is planned first by its kind (binaries
// found, settings checked: a mistake is a usage error before any server
// starts), then the servers start in parallel, then the poolers in front
// of them. A pooler fronts the servers of the targets its spec's Of names
// (each sized for the pooler's server connections too), or, where such a
// target is not among specs, a server of its own. It returns every server
// opened, in spec order (nil where one failed), also on error, so that the
// caller can close them.
func OpenAll(ctx context.Context, specs []Spec, opt ClusterOptions, needs Needs, log func(string)) ([]*Server, error) {
	o := newOpening(opt, needs, log)
	plans := make([]*planned, len(specs))
	for i, s := range specs {
		p, err := o.plan(ctx, s, specs)
		if err != nil {
			return nil, err
		}
		plans[i] = p
	}
	extra := make([]int, len(specs)) // server connections of the poolers in front of a target
	fronted := map[int]bool{}
	for _, p := range plans {
		for _, f := range p.fronts {
			if f.own == nil {
				extra[f.index] += p.st.frontConnections()
				fronted[f.index] = true
			}
		}
	}
	// A settings target may run on the baseline's cluster (DecideSharing,
	// from its pg_settings): those wait until the baseline is up.
	mayShare := func(i int) bool {
		_, base := settingsOf(specs[0])
		_, self := settingsOf(specs[i])
		return i > 0 && !opt.Separate && base && self && !fronted[i] && specs[0].Replicas == 0 && specs[i].Replicas == 0
	}
	servers := make([]*Server, len(specs))
	errs := make([]error, len(specs))
	var wg sync.WaitGroup
	start := func(which func(int) bool) {
		for i, p := range plans {
			if p.fronting() || !which(i) {
				continue
			}
			wg.Go(func() {
				n := needs
				n.Connections += extra[i]
				servers[i], errs[i] = o.open(ctx, p, nil, n)
			})
		}
		wg.Wait()
	}
	start(func(i int) bool { return !mayShare(i) })
	separate := map[int]bool{}
	for i := range specs {
		if mayShare(i) && FirstError(errs) == nil {
			separate[i] = true
		}
	}
	if len(separate) > 0 {
		shared, err := shareBaseline(ctx, servers[0], specs, separate, opt, needs, extra[0], o.log)
		if err != nil {
			return servers, err
		}
		for i, srv := range shared {
			servers[i] = srv
			delete(separate, i)
		}
	}
	start(func(i int) bool { return separate[i] })
	for i, p := range plans {
		if !p.fronting() || FirstError(errs) != nil {
			continue
		}
		wg.Go(func() { servers[i], errs[i] = o.open(ctx, p, servers, needs) })
	}
	wg.Wait()
	return servers, FirstError(errs)
}

func newOpening(opt ClusterOptions, needs Needs, log func(string)) *opening {
	if log == nil {
		log = func(string) {}
	}
	return &opening{opt: opt, needs: needs, log: log}
}

// planned is a target checked before anything starts.
type planned struct {
	spec Spec
	st   starter
	// fronts are the servers a pooler stands in front of, one per name in
	// its spec's Of.
	fronts []front
}

// front is one server a pooler stands in front of: one of the targets
// opened with it (index), or, when own is not nil, a server of its own.
type front struct {
	index int
	own   *planned
}

// fronting reports whether the target stands in front of others.
func (p *planned) fronting() bool { return len(p.fronts) > 0 }

// plan checks spec through its kind, and, for a pooler, finds the targets
// among all whose servers it fronts, planning a server of its own for
// each not there.
func (o *opening) plan(ctx context.Context, spec Spec, all []Spec) (*planned, error) {
	if lookup(spec.Kind) == nil || spec.Arg == nil {
		return nil, fmt.Errorf("target %q: no kind of target is called %q (or it has no argument)", spec.Name, spec.Kind)
	}
	st, err := spec.Arg.plan(ctx, spec, o)
	if err != nil {
		return nil, err
	}
	p := &planned{spec: spec, st: st}
	if spec.kind().fronts == 0 {
		return p, nil
	}
	if len(spec.Front) == 0 {
		return nil, named(spec, fmt.Errorf("%s: no server to stand in front of", spec.Kind))
	}
	for _, fs := range spec.Front {
		f := front{index: -1}
		for j, s := range all {
			if s.Name == fs.Name && s.kind().fronts == 0 {
				f.index = j
			}
		}
		if f.index < 0 {
			if f.own, err = o.plan(ctx, fs, nil); err != nil {
				return nil, err
			}
		}
		p.fronts = append(p.fronts, f)
	}
	return p, nil
}

// open starts a planned target: for a pooler, in front of its fronts,
// servers (the targets opened with it) or servers of its own, started
// here. A pooler's own server holds, besides the pooler's server
// connections, the sessions that go to the server directly
// (disturbances), not the clients.
func (o *opening) open(ctx context.Context, p *planned, servers []*Server, needs Needs) (*Server, error) {
	var fronts, owned []*Server
	closeOwned := func() {
		for _, s := range owned {
			s.Close()
		}
	}
	for _, f := range p.fronts {
		if f.own == nil {
			fronts = append(fronts, servers[f.index])
			continue
		}
		direct := max(needs.Connections-needs.Clients, 0)
		srv, err := o.open(ctx, f.own, nil, Needs{DataBytes: needs.DataBytes, Connections: p.st.frontConnections() + direct})
		if err != nil {
			closeOwned()
			return nil, err
		}
		fronts, owned = append(fronts, srv), append(owned, srv)
	}
	srv, err := p.st.start(ctx, fronts, needs, o.log)
	if err != nil {
		closeOwned()
		return nil, err
	}
	srv.how = &startPlan{st: p.st, needs: needs, fronts: fronts}
	srv.Info.Spec = p.spec.Recorded()
	if len(owned) > 0 {
		srv.owned = owned
		if srv.Info.Pooler != nil {
			srv.Info.Pooler.Of = "" // its server is its own
		}
	}
	return srv, nil
}

// FirstError returns the first usage error of errs, else the first error:
// the one that decides the exit code.
func FirstError(errs []error) error {
	var first error
	for _, err := range errs {
		if usage.Is(err) {
			return err
		}
		if first == nil && err != nil {
			first = err
		}
	}
	return first
}

// named puts the target's name in front of err, when it has one.
func named(spec Spec, err error) error { return Named(spec.Name, err) }

// NamedError is an error of the target Name: the command line knows
// where the target was given.
type NamedError struct {
	Name string
	Err  error
}

// Error puts the target's name in front.
func (e *NamedError) Error() string { return "target " + e.Name + ": " + e.Err.Error() }

// Unwrap returns the target's error, of its kind (a usage error stays
// one).
func (e *NamedError) Unwrap() error { return e.Err }

// Named puts the target's name in front of err, when it has one.
func Named(name string, err error) error {
	if name == "" || err == nil {
		return err
	}
	return &NamedError{Name: name, Err: err}
}

// Ephemeral reports whether this process started the server (for a pooler:
// the server it fronts).
func (s *Server) Ephemeral() bool { return s.Origin().Cluster != nil }

// Origin is the server that holds the data: the one a pooler fronts, or
// the server itself. Data, probes and disturbances go there; the clients go
// to Config.
func (s *Server) Origin() *Server {
	if s.Fronts != nil {
		return s.Fronts
	}
	return s
}

// Connect opens one connection, with errors classified (a wrong password
// or database is a usage error) and passwords kept out.
func (s *Server) Connect(ctx context.Context) (*pgconn.PgConn, error) {
	conn, err := pgconn.ConnectConfig(ctx, s.Config)
	if err != nil {
		err = ClassifyConnectError(s.Config, err)
		if ce, ok := err.(*ConnectError); ok && ce.Usage {
			return nil, usage.Wrap(err)
		}
		return nil, err
	}
	return conn, nil
}

// RecordInfo adds the server's version and non-default settings to Info,
// when the server tells them (for a pooler: the server it fronts; for a
// same-cluster target: as its sessions see them).
func (s *Server) RecordInfo(ctx context.Context) {
	src := s
	if s.Pooler != nil {
		src = s.Origin()
	}
	conn, err := src.Connect(ctx)
	if err != nil {
		return
	}
	defer conn.Close(context.Background())
	if info, err := ServerInfo(ctx, conn); err == nil {
		s.Info.ServerVersion, s.Info.Settings = info.Version, info.Settings
	}
}

// Close stops an ephemeral cluster (or, with --keep, says how to reach
// it), and a pooler with the servers of its own it fronts. It does nothing
// for an existing server, and is safe to call twice.
func (s *Server) Close() {
	if s != nil && s.Pooler != nil {
		s.stopPooler()
		for _, o := range s.owned {
			o.Close()
		}
		return
	}
	if s == nil || s.Cluster == nil {
		return
	}
	for _, r := range s.Replicas {
		r.Close()
	}
	if s.keep {
		s.log(fmt.Sprintf("keeping the cluster: psql %q   (stop it: kill %d; then rm -rf %s)",
			s.Cluster.ConnString("postgres"), s.Cluster.PID(), s.Cluster.Dir))
		return
	}
	if err := s.Cluster.Stop(); err != nil {
		s.log(fmt.Sprintf("warning: removing the ephemeral cluster: %v", err))
	}
}

// stopPooler stops the server's pooler, saying so when what it wrote
// could not be removed.
func (s *Server) stopPooler() {
	if err := s.Pooler.Stop(); err != nil {
		s.log(fmt.Sprintf("warning: removing %s's directory: %v", s.Pooler.Program(), err))
	}
}
