package target

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/proc"
	"github.com/pgscale/pgscale/internal/secret"
	"github.com/pgscale/pgscale/internal/watch"
)

// PgBouncerOptions say how to start a pgbouncer in front of a server.
type PgBouncerOptions struct {
	Binary string         // the executable; FindPgBouncer("") when empty
	Server *pgconn.Config // the server to pool: host (socket directory or address), port, user, password
	// Settings go into the [pgbouncer] section after pgscale's own
	// (pool_mode, default_pool_size, max_client_conn, ...), so they win.
	Settings []Setting
	// Clients is how many client connections it must hold at once: it
	// raises max_client_conn to fit (unless Settings set it) and is checked
	// against the open-files limit.
	Clients      int
	TCP          bool          // also listen on 127.0.0.1 at a free port
	OSUser       string        // OS user running it when pgscale runs as root; default "postgres"
	StartTimeout time.Duration // default 30 s
	// Valgrind, when set, runs it under callgrind (--count instructions).
	Valgrind *Valgrind
	// Replicas, with Balance, are the server's streaming replicas: its
	// database is then a host list of the server and them, server
	// connections opened to each in turn (Balance is "round-robin", which
	// pgbouncer 1.24 and later write load_balance_hosts=round-robin in
	// [databases]), and idle ones handed out in turn too
	// (server_round_robin=1 unless Settings say otherwise).
	Replicas []*pgconn.Config
	Balance  string
	// Words are what the edge calls the run's options: TCP's is said
	// when balancing cannot be done over TCP.
	Words Words
}

// PgBouncer is a running pgbouncer owned by this process, in a temporary
// directory of its own (its configuration, its log and its unix socket):
// a proxy (StartProxy) whose definition pgscale writes. Every client logs
// in without a password (auth_type any) and every database name is passed
// through to the server, logged in as Server.User: an ephemeral benchmark
// pooler, not one to expose.
type PgBouncer struct {
	Dir        string    // the temporary directory holding everything below
	ConfigFile string    // pgbouncer.ini
	LogFile    string    // its log (standard error)
	SocketDir  string    // where its unix socket lives
	Port       int       // listen_port: the socket's name, and the TCP port with TCP
	TCP        bool      // listening on 127.0.0.1:Port
	Version    string    // e.g. "1.18.0"
	Settings   []Setting // the [pgbouncer] section as written, in order
	FileLimit  uint64    // the open-files limit it runs with
	User       string    // the user clients log in as by default (Server.User)

	// Process is pgbouncer's process once started (PID, Exited,
	// ExitError, Kill); nil before.
	*Process

	proxy *Proxy
}

// pgbouncerFDSlack is what pgbouncer needs beside one descriptor per client
// and per server connection: listening sockets, its log, DNS, the console.
const pgbouncerFDSlack = 32

var settingName = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// StartPgBouncer writes a configuration, starts pgbouncer and waits until it
// answers on its admin console and passes a query through to the server.
// It is StartProxy with a definition of pgscale's: the command line, the
// pgbouncer.ini template, where clients connect and the check above. The
// caller must call Stop (also on error paths: a partly started pooler is
// stopped and removed by it).
func StartPgBouncer(ctx context.Context, opts PgBouncerOptions) (p *PgBouncer, err error) {
	if opts.Server == nil {
		return nil, errors.New("pgbouncer: no server to pool")
	}
	if opts.Binary, err = FindPgBouncer(opts.Binary); err != nil {
		return nil, err
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 30 * time.Second
	}
	if opts.OSUser == "" {
		opts.OSUser = "postgres"
	}
	for _, s := range opts.Settings {
		if !settingName.MatchString(s.Name) || strings.ContainsAny(s.Value, "\n\r") {
			return nil, fmt.Errorf("pgbouncer setting %s=%q: want name=value, the name in lower case letters, digits and _", s.Name, s.Value)
		}
	}
	version, err := pgbouncerVersion(opts.Binary)
	if err != nil {
		return nil, err
	}
	p = &PgBouncer{Port: 6432, TCP: opts.TCP, Version: version, User: opts.Server.User}
	defer func() {
		if err != nil {
			p.Stop()
		}
	}()
	// The settings as a template: the directory and the port are the
	// proxy's to choose.
	tmpl := pgbouncerSettings("{{port}}", "{{dir}}", opts)
	if p.FileLimit, err = checkPgBouncerFiles(tmpl); err != nil {
		return p, err
	}
	ups := []Upstream{UpstreamOf("", opts.Server)}
	if opts.Balance != "" {
		for _, r := range opts.Replicas {
			u := UpstreamOf("", r)
			u.Role = "replica"
			ups = append(ups, u)
		}
	}
	db, err := pgbouncerDatabase(ups, opts.Balance, version, opts.Words)
	if err != nil {
		return p, err
	}
	def := pgbouncerDef(opts.Binary, db, tmpl, opts.TCP)
	def.Ready = opts.StartTimeout
	port := 6432 // the socket's name, in a directory of its own
	if opts.TCP {
		port = 0
	}
	have := func(px *Proxy) {
		p.proxy, p.Process = px, px.Process
		p.Dir, p.SocketDir, p.LogFile, p.Port = px.Dir, px.Dir, px.LogFile, px.Port
		p.ConfigFile = filepath.Join(px.Dir, "pgbouncer.ini")
		p.Settings = pgbouncerSettings(strconv.Itoa(px.Port), px.Dir, opts)
	}
	px, err := StartProxy(ctx, ProxyOptions{Def: def, Upstreams: ups, Port: port,
		DirPrefix: "pgscale-pgbouncer-", OSUser: opts.OSUser, OpenFiles: p.FileLimit, Valgrind: opts.Valgrind,
		Check: func(ctx context.Context, px *Proxy) error {
			have(px)
			return p.waitReady(ctx, opts)
		}})
	if px != nil {
		have(px)
	}
	return p, err
}

// pgbouncerDef is the proxy definition of a pgbouncer whose every
// database is db (pgbouncerDatabase's connection string, a template), with
// these [pgbouncer] settings (templates for listen_port and
// unix_socket_dir): clients over the unix socket in its directory, or over
// TCP.
func pgbouncerDef(bin, db string, settings []Setting, tcp bool) ProxyDef {
	var b strings.Builder
	b.WriteString("; written by pgscale\n[databases]\n")
	b.WriteString("* =" + db + "\n")
	b.WriteString("\n[pgbouncer]\n")
	for _, s := range settings {
		v := s.Value
		if v != "{{port}}" && v != "{{dir}}" {
			v = "{{" + strconv.Quote(v) + "}}" // as it is, braces and all
		}
		fmt.Fprintf(&b, "%s = %s\n", s.Name, v)
	}
	connect := "host={{dir}} port={{port}}"
	if tcp {
		connect = "host=127.0.0.1 port={{port}}"
	}
	return ProxyDef{Program: "pgbouncer", Command: shellQuote(bin) + " {{dir}}/pgbouncer.ini",
		Files: []ProxyFile{{Name: "pgbouncer.ini", Template: b.String()}}, Connect: connect, Admin: PgBouncerAdmin()}
}

// loadBalanceSince is the first pgbouncer that names how a host list is
// balanced (load_balance_hosts, a [databases] option; round-robin is its
// default, and what a host list always did before).
var loadBalanceSince = [2]int{1, 24}

// pgbouncerDatabase is the connection string of the [databases] entry
// every database name goes to, as a template of the upstreams: the first
// as its server and user, and with balance every upstream's host in a
// list (one port for all: pgbouncer's host list has no port per host).
func pgbouncerDatabase(ups []Upstream, balance, version string, w Words) (string, error) {
	if balance == "" || len(ups) == 1 {
		return "{{with upstream.host}} host={{connquote .}}{{end}} port={{upstream.port}}" +
			"{{with upstream.user}} user={{connquote .}}{{end}}{{with upstream.password}} password={{connquote .}}{{end}}", nil
	}
	tcp := w.TCP
	if tcp == "" {
		tcp = "TCP"
	}
	hosts := make([]string, len(ups))
	for i, u := range ups {
		if u.Port != ups[0].Port {
			return "", fmt.Errorf("balance=%s: the server listens on port %d and its replica %s on %d, but pgbouncer's host list has one port for all: leave %s out (each server then has a unix socket of its own, on the same port)",
				balance, ups[0].Port, u.Host, u.Port, tcp)
		}
		hosts[i] = u.Host
	}
	db := " host={{" + strconv.Quote(connQuote(strings.Join(hosts, ","))) + "}} port={{upstream.port}}" +
		"{{with upstream.user}} user={{connquote .}}{{end}}{{with upstream.password}} password={{connquote .}}{{end}}"
	if versionAtLeast(version, loadBalanceSince) {
		db += " load_balance_hosts=" + balance
	}
	return db, nil
}

// PgBouncerAdmin is PgBouncer's admin console (the database "pgbouncer",
// open to every user under auth_type any) and how its SHOW POOLS and SHOW
// STATS columns map to pool figures: the built-in pgbouncer: target's,
// and a proxy definition's for PgBouncer.
func PgBouncerAdmin() *ProxyAdmin {
	return &ProxyAdmin{Connect: "dbname=pgbouncer", Commands: []watch.AdminCommand{
		{Command: "SHOW POOLS", Pool: []string{"database", "user"}, Columns: map[string]string{
			watch.ClientsActive: "cl_active", watch.ClientsWaiting: "cl_waiting", watch.ServersActive: "sv_active",
			watch.ServersIdle: "sv_idle", watch.ServersUsed: "sv_used", watch.MaxWaitSeconds: "maxwait", watch.MaxWaitMicros: "maxwait_us"}},
		{Command: "SHOW STATS", Pool: []string{"database"}, Columns: map[string]string{
			watch.Transactions: "total_xact_count", watch.Queries: "total_query_count", watch.WaitMicroTotals: "total_wait_time",
			watch.TransactionUS: "total_xact_time", watch.QueryUS: "total_query_time"}},
	}}
}

// Admin is pgbouncer's admin console (PgBouncerAdmin's).
func (p *PgBouncer) Admin() *watch.Admin {
	if p == nil || p.proxy == nil {
		return nil
	}
	return p.proxy.Admin()
}

// shellQuote quotes a word for /bin/sh when it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`;&|<>()*?[]#~!{}") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func pgbouncerVersion(bin string) (string, error) {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("run %s --version: %w", bin, err)
	}
	m := regexp.MustCompile(`(?i)pgbouncer\s+(\d+\.\d+(?:\.\d+)?)`).FindStringSubmatch(string(out))
	if m == nil {
		return "", fmt.Errorf("cannot read a version from %s --version: %q", bin, strings.TrimSpace(string(out)))
	}
	return m[1], nil
}

// pgbouncerSettings is pgscale's [pgbouncer] section followed by the user's
// settings; a setting given twice keeps its last value, in the first place.
func pgbouncerSettings(port, socketDir string, opts PgBouncerOptions) []Setting {
	listen := ""
	if opts.TCP {
		listen = "127.0.0.1"
	}
	maxClients := defaultMaxClientConn(opts.Clients)
	s := []Setting{
		{"listen_addr", listen},
		{"listen_port", port},
		{"unix_socket_dir", socketDir},
		{"auth_type", "any"},
		{"max_client_conn", strconv.Itoa(maxClients)},
		// pgx and JDBC send it; pgbouncer refuses unknown startup parameters.
		{"ignore_startup_parameters", "extra_float_digits"},
	}
	if opts.Balance != "" {
		// Idle server connections handed out in turn too, not the last
		// one used first: otherwise one host gets most of the load.
		s = append(s, Setting{"server_round_robin", "1"})
	}
	if opts.Server.TLSConfig != nil {
		// sslmode=prefer (libpq's default) parses into TLS with a plain
		// fallback: pgbouncer's prefer does the same.
		mode := "require"
		for _, f := range opts.Server.Fallbacks {
			if f.TLSConfig == nil {
				mode = "prefer"
			}
		}
		s = append(s, Setting{"server_tls_sslmode", mode})
	}
	for _, u := range opts.Settings {
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

// defaultMaxClientConn is the max_client_conn pgscale gives a pgbouncer that
// must hold clients client connections: room for them and a few more (the
// start-up checks, a probe), never below pgbouncer's own default of 100.
func defaultMaxClientConn(clients int) int { return max(100, clients+10) }

// ErrOpenFiles says the open-files limit cannot fit the connections asked for.
var ErrOpenFiles = errors.New("too few open files")

// pgbouncerNeeds reads, from a pgbouncer's settings (with max_client_conn
// set), the client connections it allows, the server connections it may
// open, and the open files that takes.
func pgbouncerNeeds(settings []Setting) (clients, servers int, files uint64, err error) {
	get := func(name string, def int) (int, error) {
		v, ok := "", false
		for _, s := range settings {
			if s.Name == name {
				v, ok = s.Value, true
			}
		}
		if !ok {
			return def, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("pgbouncer setting %s=%q: want a whole number", name, v)
		}
		return n, nil
	}
	if clients, err = get("max_client_conn", 100); err != nil {
		return 0, 0, 0, err
	}
	pool, err := get("default_pool_size", 20)
	if err != nil {
		return 0, 0, 0, err
	}
	reserve, err := get("reserve_pool_size", 0)
	if err != nil {
		return 0, 0, 0, err
	}
	servers = pool + reserve
	if m, err := get("max_db_connections", 0); err != nil {
		return 0, 0, 0, err
	} else if m > 0 {
		servers = min(servers, m)
	}
	return clients, servers, uint64(clients + servers + pgbouncerFDSlack), nil
}

// checkPgBouncerFiles checks that a pgbouncer with these settings fits the
// hard open-files limit, and returns that limit.
func checkPgBouncerFiles(settings []Setting) (uint64, error) {
	clients, servers, need, err := pgbouncerNeeds(settings)
	if err != nil {
		return 0, err
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, fmt.Errorf("read the open-files limit: %w", err)
	}
	if need > lim.Max {
		return 0, fmt.Errorf("%w: pgbouncer needs about %d open files for max_client_conn=%d and %d server connections, but the hard open-files limit (RLIMIT_NOFILE, ulimit -Hn) is %d: use fewer clients or raise the hard limit",
			ErrOpenFiles, need, clients, servers, lim.Max)
	}
	return lim.Max, nil
}

// connQuote quotes a value of a [databases] connection string when it needs
// it, as pgbouncer reads them: values end at a space, and a quoted value
// doubles its quotes (no backslash escapes, unlike libpq).
func connQuote(v string) string {
	if !strings.ContainsAny(v, " '") {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", "''") + "'"
}

// waitReady waits until the admin console answers, then checks that a query
// passes through the pool to the server.
func (p *PgBouncer) waitReady(ctx context.Context, opts PgBouncerOptions) error {
	err := p.Process.WaitReady(ctx, opts.StartTimeout, 20*time.Millisecond, "accept connections", func(ctx context.Context) error {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		conn, err := pgconn.Connect(cctx, p.ConnString("pgbouncer"))
		if err == nil {
			conn.Close(context.Background())
		}
		return err
	})
	if err != nil {
		return err
	}
	dbname := opts.Server.Database
	if dbname == "" {
		dbname = "postgres"
	}
	cctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	conn, err := pgconn.Connect(cctx, p.ConnString(dbname))
	if err == nil {
		_, err = conn.Exec(cctx, "SELECT 1").ReadAll()
		conn.Close(context.Background())
	}
	if err != nil {
		return fmt.Errorf("pgbouncer started but cannot reach the server (%s): %s; log: %s",
			Describe(opts.Server), secret.Redact(err.Error()), p.Log(4))
	}
	return nil
}

// ConnString returns a keyword/value connection string for database dbname
// through the pooler's unix socket ("pgbouncer" is its admin console).
func (p *PgBouncer) ConnString(dbname string) string {
	return fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable", p.SocketDir, p.Port, p.loginUser(), dbname)
}

// TCPConnString is ConnString over TCP; only valid with PgBouncerOptions.TCP.
func (p *PgBouncer) TCPConnString(dbname string) string {
	return fmt.Sprintf("host=127.0.0.1 port=%d user=%s dbname=%s sslmode=disable", p.Port, p.loginUser(), dbname)
}

func (p *PgBouncer) loginUser() string {
	if p.User == "" {
		return superuser
	}
	return p.User
}

// Program is "pgbouncer": what it is called in messages and in the name
// of its log kept with a result.
func (p *PgBouncer) Program() string { return "pgbouncer" }

// SaveLog copies pgbouncer's whole log to path, before Stop removes it,
// with anything that looks like a password redacted.
func (p *PgBouncer) SaveLog(path string) error { return proc.SaveLog("pgbouncer", p.LogFile, path) }

// Log returns the last n lines of pgbouncer's log, for error messages. The
// whole log is LogFile, until Stop removes it.
func (p *PgBouncer) Log(n int) string { return proc.TailFile(p.LogFile, n, "(no pgbouncer log)") }

// Stop shuts pgbouncer down and removes its directory, log included: copy
// the log first (LogFile, Log) to keep it. It is safe to call more than
// once and on a partly started pooler.
func (p *PgBouncer) Stop() error {
	if p == nil || p.proxy == nil {
		return nil
	}
	return p.proxy.Stop()
}
