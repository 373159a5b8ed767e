package target

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/usage"
)

// Pooled is a pgbouncer this process starts in front of another target's
// server, with its own settings: NAME=pgbouncer:[of=NAME,]k=v,... (run:
// --pooler pgbouncer[:k=v,...]).
const Pooled Kind = "pgbouncer"

var pgbouncerKind = kind{
	name: Pooled, form: "pgbouncer:k=v,...", fronts: 1, counts: true,
	help: "a pgbouncer pgscale starts in front of target NAME's server (by default the first target that is not a pooler), " +
		"with those pgbouncer settings (pool_mode, default_pool_size, max_client_conn...; transaction pooling unless pool_mode says otherwise): " +
		"direct and pooled targets on one server compare what the pooler costs",
	parse: func(arg string) (Arg, error) {
		settings, err := parsePoolerSettings(arg)
		if err != nil {
			return nil, err
		}
		return PgBouncerArg{Settings: settings}, nil
	},
}

// PgBouncerArg is a pgbouncer target's settings (pool_mode,
// default_pool_size, max_client_conn...), applied after pgscale's
// defaults.
type PgBouncerArg struct{ Settings []Setting }

// String returns the settings as k=v,...
func (a PgBouncerArg) String() string { return SettingsArg{Settings: a.Settings}.String() }

func (a PgBouncerArg) plan(_ context.Context, spec Spec, o *opening) (starter, error) {
	pp, err := planPooler(spec, a.Settings, o.needs)
	if err != nil {
		return nil, err
	}
	return &pgbouncerStart{spec: spec, pp: pp, opt: o.opt}, nil
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
}

// planPooler finds pgbouncer and checks what the pooler is asked to do:
// the prepared protocol through transaction pooling, and the open files
// max_client_conn takes. Its errors are usage errors.
func planPooler(spec Spec, own []Setting, needs Needs) (*poolerPlan, error) {
	bin, err := FindPgBouncer("")
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
	log(fmt.Sprintf("starting pgbouncer %s%s in front of %s...", pp.version, forTarget(spec), front.Info.Description))
	pb, err := StartPgBouncer(ctx, PgBouncerOptions{Binary: pp.binary, Server: front.Config, Settings: pp.settings,
		TCP: opt.TCP, OSUser: opt.OSUser, Valgrind: opt.Valgrind})
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
			ServerKind: fi.Kind, Of: of},
	}}, nil
}
