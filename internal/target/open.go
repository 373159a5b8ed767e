package target

import (
	"context"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/usage"
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
}

// Check finds, before anything starts, what cannot work: an ephemeral
// option with no ephemeral target, a malformed setting. Its errors are
// usage errors.
func (o ClusterOptions) Check(specs []Spec) error {
	ephemeral := false
	for _, s := range specs {
		ephemeral = ephemeral || s.Ephemeral()
	}
	if !ephemeral && (o.PGBin != "" || o.Tmpfs || o.TCP || o.Keep || len(o.Settings) > 0) {
		if len(specs) == 1 && specs[0].Name == "" {
			return usage.Errorf("--pg-bin, --tmpfs, --tcp, --keep and --set apply to an ephemeral cluster, not to --dsn or a PGHOST-style environment")
		}
		return usage.Errorf("--pg-bin, --tmpfs, --tcp, --keep and --set apply to ephemeral targets (bin: and settings:), and every target is dsn:")
	}
	for _, s := range o.Settings {
		if _, err := ParseSetting(s); err != nil {
			return usage.Errorf("--set: %v", err)
		}
	}
	if o.Valgrind != nil {
		for _, s := range specs {
			if s.Kind == DSN || s.Kind == Pooled {
				return usage.Errorf("--count instructions runs the server under Valgrind, so it needs ephemeral targets (settings: or bin:), not %s", s)
			}
		}
	}
	return nil
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
// connection string, or an ephemeral cluster this process started.
type Server struct {
	// Config is where the clients connect: the server, or the pooler in
	// front of it.
	Config  *pgconn.Config
	Cluster *Cluster // nil unless ephemeral
	// Pooler is a pgbouncer target's pooler, in front of Fronts; nil for
	// other targets.
	Pooler *PgBouncer
	// Fronts is the server behind this target: for a pooler the server
	// it fronts (another target's, or one of its own, run --pooler, that
	// Close stops with the pooler); for a same-cluster settings target
	// the baseline's server, which its clients reach with their session
	// settings (Info.SessionSettings) in Config. Nil otherwise.
	Fronts *Server
	// Info is what the result file says of the target; RecordInfo adds
	// the server's version and settings.
	Info      result.Target
	keep      bool
	log       func(string)
	ownsFront bool
	// session are a same-cluster target's session settings.
	session []Setting
	// how is how the server was started, for Renew: nil for a dsn server
	// and a same-cluster target.
	how *startPlan
}

// startPlan is how an ephemeral cluster or a pooler was started.
type startPlan struct {
	spec  Spec
	bin   string
	opt   ClusterOptions
	needs Needs
	pp    *poolerPlan // a pooler's
}

// Open opens the target spec names: for a DSN target it only parses the
// connection string (nothing is connected yet); for an ephemeral one it
// starts a cluster sized for needs. log receives one-line notices. Errors
// in what the user gave are usage errors; the caller must Close the
// server, which stops an ephemeral cluster.
func Open(ctx context.Context, spec Spec, opt ClusterOptions, needs Needs, log func(string)) (*Server, error) {
	if log == nil {
		log = func(string) {}
	}
	if spec.Kind == Pooled {
		pp, err := planPooler(spec, needs)
		if err != nil {
			return nil, err
		}
		if spec.Front.Ephemeral() {
			if _, err := binDir(*spec.Front, opt); err != nil {
				return nil, err
			}
		}
		return openPooled(ctx, spec, pp, opt, needs, log)
	}
	if !spec.Ephemeral() {
		return openDSN(spec, log)
	}
	bin, err := binDir(spec, opt)
	if err != nil {
		return nil, err
	}
	return startCluster(ctx, spec, bin, opt, needs, log)
}

// OpenAll opens every target: the binaries of every ephemeral one and of
// every pooler are found first, and each pooler's settings checked (a
// mistake is a usage error before any server starts), then the clusters
// start in parallel, then the poolers in front of them. A pooler fronts the
// server of the target its spec's Of names (that cluster is sized for the
// pooler's server connections too), or, when that target is not among
// specs, a server of its own. It returns every server opened, in spec
// order (nil where one failed), also on error, so that the caller can
// close them.
func OpenAll(ctx context.Context, specs []Spec, opt ClusterOptions, needs Needs, log func(string)) ([]*Server, error) {
	if log == nil {
		log = func(string) {}
	}
	bins := make([]string, len(specs))
	poolers := make([]*poolerPlan, len(specs))
	fronts := make([]int, len(specs)) // a pooler's target index; -1: a server of its own
	extra := make([]int, len(specs))  // server connections of the poolers in front of a target
	for i, s := range specs {
		if s.Kind == Pooled {
			pp, err := planPooler(s, needs)
			if err != nil {
				return nil, err
			}
			poolers[i], fronts[i] = pp, -1
			for j, o := range specs {
				if o.Name == s.Of && o.Kind != Pooled {
					fronts[i] = j
					extra[j] += pp.servers
				}
			}
			if fronts[i] < 0 && s.Front.Ephemeral() {
				if _, err := binDir(*s.Front, opt); err != nil {
					return nil, err
				}
			}
			continue
		}
		if s.Ephemeral() {
			bin, err := binDir(s, opt)
			if err != nil {
				return nil, err
			}
			bins[i] = bin
		}
	}
	// A settings target may run on the baseline's cluster (DecideSharing,
	// from its pg_settings): those wait until the baseline is up.
	fronted := map[string]bool{}
	for _, s := range specs {
		if s.Kind == Pooled {
			fronted[s.Of] = true
		}
	}
	mayShare := func(i int) bool {
		return i > 0 && !opt.Separate && specs[0].Kind == Settings && specs[i].Kind == Settings && !fronted[specs[i].Name]
	}
	servers := make([]*Server, len(specs))
	errs := make([]error, len(specs))
	var wg sync.WaitGroup
	start := func(which func(int) bool) {
		for i, s := range specs {
			if s.Kind == Pooled || !which(i) {
				continue
			}
			if !s.Ephemeral() {
				servers[i], errs[i] = openDSN(s, log)
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				n := needs
				n.Connections += extra[i]
				servers[i], errs[i] = startCluster(ctx, s, bins[i], opt, n, log)
			}()
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
		shared, err := shareBaseline(ctx, servers[0], specs, separate, opt, needs, extra[0], log)
		if err != nil {
			return servers, err
		}
		for i, srv := range shared {
			servers[i] = srv
			delete(separate, i)
		}
	}
	start(func(i int) bool { return separate[i] })
	wg.Wait()
	for i, s := range specs {
		if s.Kind != Pooled || FirstError(errs) != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if j := fronts[i]; j >= 0 {
				servers[i], errs[i] = startPooled(ctx, s, poolers[i], servers[j], opt, log)
			} else {
				servers[i], errs[i] = openPooled(ctx, s, poolers[i], opt, needs, log)
			}
		}()
	}
	wg.Wait()
	return servers, FirstError(errs)
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

// binDir finds the server binaries of an ephemeral spec.
func binDir(spec Spec, opt ClusterOptions) (string, error) {
	dir := opt.PGBin
	if spec.Kind == Bin {
		dir = spec.BinDir
	}
	bin, err := FindBinDir(dir)
	if err != nil {
		return "", usage.Wrap(named(spec, err))
	}
	return bin, nil
}

// named puts the target's name in front of err, when it has one.
func named(spec Spec, err error) error {
	if spec.Name == "" {
		return err
	}
	return usage.Prefix("target "+spec.Name+": ", err)
}

func openDSN(spec Spec, log func(string)) (*Server, error) {
	cfg, err := ParseDSN(spec.DSN)
	if err != nil {
		return nil, usage.Wrap(named(spec, err))
	}
	return &Server{Config: cfg, log: log, Info: result.Target{Kind: "dsn", Name: spec.Name, Description: Describe(cfg)}}, nil
}

// clusterConnections is the client connections an ephemeral cluster is
// sized for (max_connections, DefaultSettings) to meet needs.
func clusterConnections(needs Needs) int { return needs.Connections + 10 }

// shareBaseline decides, from the baseline's pg_settings, which of the
// settings targets in maybe run on its cluster, says so, makes room in
// the cluster for their connections (restarting it when max_connections
// grows), and returns those targets' servers by index.
func shareBaseline(ctx context.Context, base *Server, specs []Spec, maybe map[int]bool, opt ClusterOptions, needs Needs, extra int,
	log func(string)) (map[int]*Server, error) {
	var names []string
	for _, s := range specs {
		if s.Kind == Settings {
			for _, st := range s.Settings {
				names = append(names, st.Name)
			}
		}
	}
	conn, err := base.Connect(ctx)
	if err != nil {
		return nil, named(specs[0], err)
	}
	info, err := SettingContexts(ctx, conn, names)
	conn.Close(context.Background())
	if err != nil {
		return nil, named(specs[0], err)
	}
	common, err := commonSettings(opt, base.Cluster)
	if err != nil {
		return nil, err
	}
	out := map[int]*Server{}
	for i, s := range specs {
		if !maybe[i] {
			continue
		}
		sh := DecideSharing(specs[0], s, common, info)
		log(sessionNotice(s, specs[0].Name, sh))
		if sh.Share {
			out[i] = openSession(s, base, sh.Session, log)
		}
	}
	if len(out) == 0 {
		return out, nil
	}
	n := needs
	n.Connections += extra + len(out)*needs.Connections
	base.how.needs = n
	if err := base.Cluster.resize(ctx, clusterConnections(n)); err != nil {
		return nil, named(specs[0], fmt.Errorf("ephemeral cluster: %w", err))
	}
	return out, nil
}

// commonSettings are the settings every ephemeral cluster of a run gets
// before its own: pgscale's defaults as c (the baseline's) got them, then
// --set.
func commonSettings(opt ClusterOptions, c *Cluster) ([]Setting, error) {
	out := DefaultSettings(c.opts.DataSizeHint, c.opts.MaxConnections, c.Preloaded)
	for _, s := range opt.Settings {
		st, err := ParseSetting(s)
		if err != nil {
			return nil, usage.Errorf("--set: %v", err)
		}
		out = append(out, st)
	}
	return out, nil
}

// startCluster starts an ephemeral cluster from the binaries in bin, with
// the --set settings and then the spec's own, sized for needs.
func startCluster(ctx context.Context, spec Spec, bin string, opt ClusterOptions, needs Needs, log func(string)) (*Server, error) {
	var settings []Setting
	if opt.Valgrind != nil {
		settings = CountingSettings()
	}
	for _, s := range opt.Settings {
		st, err := ParseSetting(s)
		if err != nil {
			return nil, usage.Errorf("--set: %v", err)
		}
		settings = append(settings, st)
	}
	settings = append(settings, spec.Settings...)
	log(fmt.Sprintf("starting an ephemeral PostgreSQL cluster from %s...", bin))
	c, err := Start(ctx, Options{BinDir: bin, Tmpfs: opt.Tmpfs, TCP: opt.TCP, Settings: settings, OSUser: opt.OSUser, HBA: opt.HBA,
		DataSizeHint: needs.DataBytes, MaxConnections: needs.Connections + 10, Detach: opt.Keep, Valgrind: opt.Valgrind})
	if err != nil {
		if c != nil {
			c.Stop()
		}
		return nil, named(spec, fmt.Errorf("ephemeral cluster: %w", err))
	}
	dsn := c.ConnString("postgres")
	if opt.TCP {
		dsn = c.TCPConnString("postgres")
	}
	cfg, err := ParseDSN(dsn)
	if err != nil {
		c.Stop()
		return nil, err
	}
	srv := &Server{Config: cfg, Cluster: c, keep: opt.Keep, log: log, how: &startPlan{spec: spec, bin: bin, opt: opt, needs: needs},
		Info: result.Target{
			Kind: "ephemeral", Name: spec.Name, Description: Describe(cfg), BinDir: bin, Preloaded: c.Preloaded, Tmpfs: opt.Tmpfs,
		}}
	if opt.Valgrind != nil {
		srv.Info.Valgrind = opt.Valgrind.info()
	}
	return srv, nil
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
// it), and a pooler with the server of its own it fronts. It does nothing
// for an existing server, and is safe to call twice.
func (s *Server) Close() {
	if s != nil && s.Pooler != nil {
		if err := s.Pooler.Stop(); err != nil {
			s.log(fmt.Sprintf("warning: removing pgbouncer's directory: %v", err))
		}
		if s.ownsFront {
			s.Fronts.Close()
		}
		return
	}
	if s == nil || s.Cluster == nil {
		return
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
