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
func planPooler(spec Spec, needs Needs) (*poolerPlan, error) {
	bin, err := FindPgBouncer("")
	if err != nil {
		return nil, usage.Wrap(named(spec, err))
	}
	version, err := pgbouncerVersion(bin)
	if err != nil {
		return nil, usage.Wrap(named(spec, err))
	}
	pp := &poolerPlan{binary: bin, version: version,
		settings: poolerSettings(version, needs, spec.Pooler)}
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

// frontNeeds is what a pooler's own server (run --pooler) must hold: the
// pooler's server connections and the sessions that go to the server
// directly (disturbances), not the clients.
func frontNeeds(needs Needs, pp *poolerPlan) Needs {
	direct := max(needs.Connections-needs.Clients, 0)
	return Needs{DataBytes: needs.DataBytes, Connections: pp.servers + direct}
}

// openPooled opens a pgbouncer target on its own server: run --pooler, or
// an A/B pooler whose of= target is not run (--calibrate).
func openPooled(ctx context.Context, spec Spec, pp *poolerPlan, opt ClusterOptions, needs Needs, log func(string)) (*Server, error) {
	front, err := Open(ctx, *spec.Front, opt, frontNeeds(needs, pp), log)
	if err != nil {
		return nil, err
	}
	srv, err := startPooled(ctx, spec, pp, front, opt, log)
	if err != nil {
		front.Close()
		return nil, err
	}
	srv.ownsFront = true
	srv.Info.Pooler.Of = ""
	return srv, nil
}

// startPooled starts pgbouncer in front of front and returns it as a Server
// whose Config points at the pooler.
func startPooled(ctx context.Context, spec Spec, pp *poolerPlan, front *Server, opt ClusterOptions, log func(string)) (*Server, error) {
	log(fmt.Sprintf("starting pgbouncer %s in front of %s...", pp.version, front.Info.Description))
	pb, err := StartPgBouncer(ctx, PgBouncerOptions{Binary: pp.binary, Server: front.Config, Settings: pp.settings,
		TCP: opt.TCP, OSUser: opt.OSUser})
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
	fi := front.Info
	return &Server{Config: cfg, Pooler: pb, Fronts: front, log: log, how: &startPlan{spec: spec, opt: opt, pp: pp}, Info: result.Target{
		Kind: "pgbouncer", Name: spec.Name, Description: Describe(cfg), BinDir: fi.BinDir, Preloaded: fi.Preloaded, Tmpfs: fi.Tmpfs,
		Pooler: &result.Pooler{Program: "pgbouncer", Version: pb.Version, Settings: settings, Server: fi.Description,
			ServerKind: fi.Kind, Of: spec.Of},
	}}, nil
}
