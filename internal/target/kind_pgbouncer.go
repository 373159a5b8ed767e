package target

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/build"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/usage"
)

// Pooled is a pgbouncer this process starts in front of another target's
// server, with its own settings: NAME=pgbouncer:[of=NAME,]k=v,... (run:
// --pooler pgbouncer[:k=v,...]).
const Pooled Kind = "pgbouncer"

var pgbouncerKind = kind{
	name: Pooled, form: "pgbouncer:k=v,...", fronts: 1, counts: true, builds: true,
	help: func(Words) string {
		return "a pgbouncer pgscale starts in front of target NAME's server (by default the first target that is not a pooler), " +
			"with those pgbouncer settings (pool_mode, default_pool_size, max_client_conn...; transaction pooling unless pool_mode says otherwise): " +
			"direct and pooled targets on one server compare what the pooler costs; src=PATH[@REV][+PATCH...] builds it from its source tree " +
			"at that revision (a release tarball's or a git checkout), balance=round-robin spreads its server connections over the server and its replicas"
	},
	parse: parsePgBouncerArg,
}

// PgBouncerArg is a pgbouncer target's settings (pool_mode,
// default_pool_size, max_client_conn...), applied after pgscale's
// defaults, and pgscale's own items among them: the source its program is
// built from (src=), and whether it balances over the server's replicas
// (balance=).
type PgBouncerArg struct {
	Settings []Setting
	// Source, when set, is the pgbouncer tree it is built from (src=),
	// in the build cache; nil: the installed pgbouncer.
	Source *build.Source
	// Balance, when set ("round-robin", balance=), makes its database a
	// host list of the server it fronts and that server's streaming
	// replicas, server connections opened to each in turn: it may send any
	// statement to a replica (ReadOnly).
	Balance string
}

// BalanceRoundRobin is the one way a pgbouncer: target balances
// (balance=round-robin): pgbouncer's own name for it, load_balance_hosts =
// round-robin in [databases] from 1.24, what a host list always did before.
const BalanceRoundRobin = "round-robin"

// parsePgBouncerArg reads k=v,..., taking pgscale's own items (src=,
// balance=) out of pgbouncer's settings.
func parsePgBouncerArg(arg string) (Arg, error) {
	settings, err := parsePoolerSettings(arg)
	if err != nil {
		return nil, err
	}
	a := PgBouncerArg{}
	for _, st := range settings {
		switch st.Name {
		case "src":
			if a.Source != nil {
				return nil, errors.New("src= is given twice: one pgbouncer tree per target")
			}
			src, err := build.ParseSource(st.Value)
			if err != nil {
				return nil, fmt.Errorf("src=%s: %v (want src=PATH[@REV][+PATCH...], a pgbouncer tree)", st.Value, err)
			}
			a.Source = &src
		case "balance":
			if st.Value != BalanceRoundRobin {
				return nil, fmt.Errorf("balance=%s: want balance=%s (server connections to the server and its replicas in turn)", st.Value, BalanceRoundRobin)
			}
			a.Balance = st.Value
		case "load_balance_hosts":
			return nil, fmt.Errorf("load_balance_hosts is a [databases] option of pgbouncer 1.24 and later, not a [pgbouncer] setting: give balance=%s, which writes it where it belongs", BalanceRoundRobin)
		default:
			a.Settings = append(a.Settings, st)
		}
	}
	return a, nil
}

// String returns src= and balance= (when set), then the settings, as
// k=v,...
func (a PgBouncerArg) String() string {
	var own []Setting
	if a.Source != nil {
		own = append(own, Setting{"src", a.Source.String()})
	}
	if a.Balance != "" {
		own = append(own, Setting{"balance", a.Balance})
	}
	return SettingsArg{Settings: append(own, a.Settings...)}.String()
}

func (a PgBouncerArg) plan(ctx context.Context, spec Spec, o *opening) (starter, error) {
	bin := ""
	var built *build.Build
	if a.Source != nil {
		var err error
		if built, err = buildOf(ctx, spec, a, o); err != nil {
			return nil, err
		}
		bin = filepath.Join(built.Dir, "pgbouncer")
	}
	pp, err := planPooler(spec, bin, a.Settings, o.needs)
	if err != nil {
		return nil, err
	}
	pp.balance, pp.built = a.Balance, built
	if built != nil {
		pp.source = *a.Source
	}
	return &pgbouncerStart{spec: spec, pp: pp, opt: o.opt}, nil
}

// readOnly says a balancing pgbouncer may send any statement to a
// replica.
func (a PgBouncerArg) readOnly() bool { return a.Balance != "" }

// balanced is the same pgbouncer (its build, its settings) balancing over
// the server's replicas.
func (a PgBouncerArg) balanced() (Arg, error) {
	a.Balance = BalanceRoundRobin
	return a, nil
}

// pgbouncerStart starts a pgbouncer target that planPooler checked.
type pgbouncerStart struct {
	spec Spec
	pp   *poolerPlan
	opt  ClusterOptions
}

func (p *pgbouncerStart) frontConnections() int { return p.pp.servers }

func (p *pgbouncerStart) start(ctx context.Context, fronts []*Server, _ Needs, log func(string)) (*Server, error) {
	return startPooled(ctx, p.spec, p.pp, fronts[0], p.opt, log)
}

// parsePoolerSettings reads a pooler's k=v,... (quotes as for settings:).
func parsePoolerSettings(arg string) ([]Setting, error) {
	settings, err := parseSettings(arg)
	if err != nil {
		return nil, err
	}
	for _, s := range settings {
		if !settingName.MatchString(s.Name) || strings.ContainsAny(s.Value, "\n\r") {
			return nil, fmt.Errorf("pgbouncer setting %q: want name=value, the name in lower-case letters, digits and _", s.Name+"="+s.Value)
		}
	}
	return settings, nil
}

// poolerDefaults are what a pgbouncer target runs with unless its spec says
// otherwise: transaction pooling (pgbouncer's own default, session pooling,
// holds a server connection per client, so thousands of clients would queue
// behind default_pool_size of them), pgbouncer's pool size written out so
// that the result file records it, and no line per connection in its log
// (thousands of lines per step cost the pooler, and so the run, CPU).
var poolerDefaults = []Setting{
	{"pool_mode", "transaction"},
	{"default_pool_size", "20"},
	{"log_connections", "0"},
	{"log_disconnections", "0"},
}

// preparedSince is the first pgbouncer that keeps protocol-level prepared
// statements across transaction pooling (max_prepared_statements).
var preparedSince = [2]int{1, 21}

// poolerPlan is a pgbouncer target checked before anything starts: its
// executable and version, and the settings it will run with.
type poolerPlan struct {
	binary   string
	version  string
	settings []Setting
	servers  int // server connections it may open
	// balance is how it balances over the server's replicas ("" not).
	balance string
	// built is its build, from source (nil: the installed pgbouncer).
	built  *build.Build
	source build.Source
}

// planPooler finds pgbouncer (bin, when not empty: a build's) and checks
// what the pooler is asked to do: the prepared protocol through
// transaction pooling, and the open files max_client_conn takes. Its
// errors are usage errors.
func planPooler(spec Spec, bin string, own []Setting, needs Needs) (*poolerPlan, error) {
	bin, err := FindPgBouncer(bin)
	if err != nil {
		return nil, usage.Wrap(named(spec, err))
	}
	version, err := pgbouncerVersion(bin)
	if err != nil {
		return nil, usage.Wrap(named(spec, err))
	}
	pp := &poolerPlan{binary: bin, version: version,
		settings: poolerSettings(version, needs, own)}
	if mode := settingValue(pp.settings, "pool_mode"); mode != "session" && needs.Prepared && !versionAtLeast(version, preparedSince) {
		return nil, usage.Wrap(named(spec, fmt.Errorf("pgbouncer %s with pool_mode=%s cannot keep prepared statements between transactions (-M prepared, the default; pgbouncer %d.%d and later can): use -M simple or -M extended, or pool_mode=session",
			version, mode, preparedSince[0], preparedSince[1])))
	}
	if _, err := checkPgBouncerFiles(pp.settings); err != nil {
		if errors.Is(err, ErrOpenFiles) {
			return nil, usage.Wrap(named(spec, err))
		}
		return nil, named(spec, err)
	}
	if _, pp.servers, _, err = pgbouncerNeeds(pp.settings); err != nil {
		return nil, usage.Wrap(named(spec, err))
	}
	return pp, nil
}

// poolerSettings are pgscale's defaults for a pooler holding needs.Clients
// clients, then the spec's own (a setting given twice keeps its last value,
// in its first place).
func poolerSettings(version string, needs Needs, own []Setting) []Setting {
	s := append([]Setting{}, poolerDefaults...)
	s = append(s, Setting{"max_client_conn", strconv.Itoa(defaultMaxClientConn(needs.Clients))})
	if needs.Prepared && versionAtLeast(version, preparedSince) {
		// 0, pgbouncer 1.21's default, turns the tracking off.
		s = append(s, Setting{"max_prepared_statements", "200"})
	}
	for _, u := range own {
		replaced := false
		for i := range s {
			if s[i].Name == u.Name {
				s[i].Value, replaced = u.Value, true
			}
		}
		if !replaced {
			s = append(s, u)
		}
	}
	return s
}

func settingValue(settings []Setting, name string) string {
	v := ""
	for _, s := range settings {
		if s.Name == name {
			v = s.Value
		}
	}
	return v
}

// versionAtLeast compares a dotted version ("1.18.0") with major.minor.
func versionAtLeast(version string, want [2]int) bool {
	parts := strings.SplitN(version, ".", 3)
	var got [2]int
	for i := 0; i < 2 && i < len(parts); i++ {
		got[i], _ = strconv.Atoi(parts[i])
	}
	return got[0] > want[0] || got[0] == want[0] && got[1] >= want[1]
}

// startPooled starts pgbouncer in front of front and returns it as a Server
// whose Config points at the pooler.
func startPooled(ctx context.Context, spec Spec, pp *poolerPlan, front *Server, opt ClusterOptions, log func(string)) (*Server, error) {
	where := front.Info.Description
	var replicas []*pgconn.Config
	if pp.balance != "" {
		for _, r := range front.Replicas {
			replicas = append(replicas, r.Config)
			where += " and " + r.Info.Description + " (replica)"
		}
		if len(replicas) == 0 {
			log(fmt.Sprintf("target %s: balance=%s, but %s has no streaming replica to balance over (replicas=N in the spec of the server it fronts): every connection goes to it", spec.Name, pp.balance, front.Info.Description))
		}
	}
	log(fmt.Sprintf("starting pgbouncer %s%s in front of %s...", pp.version, forTarget(spec), where))
	pb, err := StartPgBouncer(ctx, PgBouncerOptions{Binary: pp.binary, Server: front.Config, Settings: pp.settings,
		TCP: opt.TCP, OSUser: opt.OSUser, Valgrind: opt.Valgrind, Replicas: replicas, Balance: pp.balance, Words: opt.Words})
	if err != nil {
		if pb != nil {
			pb.Stop()
		}
		return nil, named(spec, fmt.Errorf("pgbouncer: %w", err))
	}
	dbname := front.Config.Database
	if dbname == "" {
		dbname = front.Config.User
	}
	dsn := pb.ConnString(dbname)
	if opt.TCP {
		dsn = pb.TCPConnString(dbname)
	}
	cfg, err := ParseDSN(dsn)
	if err != nil {
		pb.Stop()
		return nil, err
	}
	settings := make(map[string]string, len(pb.Settings))
	for _, s := range pb.Settings {
		settings[s.Name] = s.Value
	}
	fi, of := front.Info, ""
	if len(spec.Of) > 0 {
		of = spec.Of[0]
	}
	return &Server{Config: cfg, Pooler: pb, Fronts: front, log: log, Info: result.Target{
		Kind: "pgbouncer", Name: spec.Name, Description: Describe(cfg), BinDir: fi.BinDir, Preloaded: fi.Preloaded, Tmpfs: fi.Tmpfs,
		Pooler: &result.Pooler{Program: "pgbouncer", Version: pb.Version, Settings: settings, Server: fi.Description,
			ServerKind: fi.Kind, Of: of, Build: pgbouncerBuildRecord(ctx, pp)},
	}}, nil
}

// pgbouncerBuildRecord is what the result file says of a pgbouncer built
// from source (nil for the installed one): its source as given, and the
// commit and tree that source resolves to here (the cache may hold the
// same tree built from another commit).
func pgbouncerBuildRecord(ctx context.Context, pp *poolerPlan) *result.PoolerBuild {
	b := pp.built
	if b == nil {
		return nil
	}
	m := b.Manifest
	rec := &result.PoolerBuild{Source: pp.source.String(), Key: b.Key}
	if m != nil {
		rec.Commit, rec.Tree, rec.Command = m.Source.Commit, m.Source.Tree, m.Command
	}
	if r, err := build.ResolveSource(ctx, pp.source); err == nil {
		rec.Commit, rec.Tree = r.Commit, r.Tree
	}
	return rec
}
