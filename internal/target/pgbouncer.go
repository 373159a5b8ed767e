package target

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/secret"
)

// ErrNoPgBouncer says no pgbouncer executable was found.
var ErrNoPgBouncer = errors.New("pgbouncer not found")

// FindPgBouncer finds the pgbouncer executable: path when given, otherwise
// $PGSCALE_PGBOUNCER, PATH and /usr/sbin (where Debian's package puts it,
// often not on a user's PATH).
func FindPgBouncer(path string) (string, error) {
	if path != "" {
		if isExecutable(path) {
			return path, nil
		}
		return "", fmt.Errorf("%w at %s", ErrNoPgBouncer, path)
	}
	if env := os.Getenv("PGSCALE_PGBOUNCER"); env != "" {
		if isExecutable(env) {
			return env, nil
		}
		return "", fmt.Errorf("%w at $PGSCALE_PGBOUNCER=%s", ErrNoPgBouncer, env)
	}
	if p, err := exec.LookPath("pgbouncer"); err == nil {
		return p, nil
	}
	for _, p := range []string{"/usr/sbin/pgbouncer", "/usr/local/sbin/pgbouncer", "/usr/local/bin/pgbouncer"} {
		if isExecutable(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w (searched PATH, /usr/sbin, /usr/local/sbin, /usr/local/bin); install it (Debian: apt-get install pgbouncer) or name it with $PGSCALE_PGBOUNCER",
		ErrNoPgBouncer)
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

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
}

// PgBouncer is a running pgbouncer owned by this process, in a temporary
// directory of its own (its configuration, its log and its unix socket).
// Every client logs in without a password (auth_type any) and every
// database name is passed through to the server, logged in as
// Server.User: an ephemeral benchmark pooler, not one to expose.
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

	cred    *syscall.Credential
	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{}
	stopped bool
}

// pgbouncerFDSlack is what pgbouncer needs beside one descriptor per client
// and per server connection: listening sockets, its log, DNS, the console.
const pgbouncerFDSlack = 32

var settingName = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// StartPgBouncer writes a configuration, starts pgbouncer and waits until it
// answers on its admin console and passes a query through to the server.
// The caller must call Stop (also on error paths: a partly started pooler
// is stopped and removed by it).
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
	dir, err := os.MkdirTemp("", "pgscale-pgbouncer-")
	if err != nil {
		return nil, fmt.Errorf("create pgbouncer directory: %w", err)
	}
	p = &PgBouncer{Dir: dir, ConfigFile: filepath.Join(dir, "pgbouncer.ini"), LogFile: filepath.Join(dir, "pgbouncer.log"),
		SocketDir: dir, Port: 6432, TCP: opts.TCP, Version: version, User: opts.Server.User}
	defer func() {
		if err != nil {
			p.Stop()
		}
	}()
	if os.Geteuid() == 0 {
		if p.cred, err = credentialFor(opts.OSUser); err != nil {
			return p, fmt.Errorf("pgbouncer refuses to run as root: %w", err)
		}
		if err = os.Chown(dir, int(p.cred.Uid), int(p.cred.Gid)); err != nil {
			return p, fmt.Errorf("give %s to %s: %w", dir, opts.OSUser, err)
		}
	}
	if opts.TCP {
		if p.Port, err = freePort(); err != nil {
			return p, err
		}
	}
	p.Settings = pgbouncerSettings(p, opts)
	if p.FileLimit, err = p.fileLimit(); err != nil {
		return p, err
	}
	for attempt := 0; ; attempt++ {
		if err = p.writeConfig(opts.Server); err != nil {
			return p, err
		}
		err = p.start(ctx, opts)
		if err == nil || !p.TCP || attempt == 3 || !strings.Contains(p.Log(20), "Address already in use") {
			return p, err
		}
		// Another process took the free port between our probe and the bind: pick another.
		p.shutdown()
		if p.Port, err = freePort(); err != nil {
			return p, err
		}
		p.Settings = pgbouncerSettings(p, opts)
	}
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
func pgbouncerSettings(p *PgBouncer, opts PgBouncerOptions) []Setting {
	listen := ""
	if p.TCP {
		listen = "127.0.0.1"
	}
	maxClients := defaultMaxClientConn(opts.Clients)
	s := []Setting{
		{"listen_addr", listen},
		{"listen_port", strconv.Itoa(p.Port)},
		{"unix_socket_dir", p.SocketDir},
		{"auth_type", "any"},
		{"max_client_conn", strconv.Itoa(maxClients)},
		// pgx and JDBC send it; pgbouncer refuses unknown startup parameters.
		{"ignore_startup_parameters", "extra_float_digits"},
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

// fileLimit returns the open-files limit pgbouncer is given: the hard limit,
// once it is known to fit max_client_conn and the server connections.
func (p *PgBouncer) fileLimit() (uint64, error) { return checkPgBouncerFiles(p.Settings) }

func (p *PgBouncer) writeConfig(server *pgconn.Config) error {
	// The server connection string pgbouncer uses for every database name.
	var db strings.Builder
	db.WriteString("* =")
	for _, kv := range [][2]string{{"host", server.Host}, {"port", strconv.Itoa(int(server.Port))},
		{"user", server.User}, {"password", server.Password}} {
		if kv[1] != "" {
			fmt.Fprintf(&db, " %s=%s", kv[0], connQuote(kv[1]))
		}
	}
	var b strings.Builder
	b.WriteString("; written by pgscale\n[databases]\n")
	b.WriteString(db.String() + "\n\n[pgbouncer]\n")
	for _, s := range p.Settings {
		fmt.Fprintf(&b, "%s = %s\n", s.Name, s.Value)
	}
	// 0600 and owned by pgbouncer's user: it may hold the server's password.
	if err := os.WriteFile(p.ConfigFile, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("write pgbouncer configuration: %w", err)
	}
	if p.cred != nil {
		if err := os.Chown(p.ConfigFile, int(p.cred.Uid), int(p.cred.Gid)); err != nil {
			return fmt.Errorf("give %s to pgbouncer's user: %w", p.ConfigFile, err)
		}
	}
	return nil
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

func (p *PgBouncer) start(ctx context.Context, opts PgBouncerOptions) error {
	logf, err := os.OpenFile(p.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open pgbouncer log: %w", err)
	}
	defer logf.Close()
	// The shell raises the soft open-files limit (a child gets the limit Go
	// started with, not the one it raised for itself), then becomes
	// pgbouncer, which keeps the shell's PID and logs the limit it has.
	cmd := exec.Command("/bin/sh", "-c", `ulimit -Sn "$1" || exit 1; shift; exec "$@"`, "sh",
		strconv.FormatUint(p.FileLimit, 10), opts.Binary, p.ConfigFile)
	cmd.Dir = p.Dir
	cmd.Stdout, cmd.Stderr = logf, logf
	// If pgscale dies without cleaning up, the kernel stops pgbouncer.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred, Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start pgbouncer: %w", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	p.mu.Lock()
	p.cmd, p.exited, p.stopped = cmd, exited, false
	p.mu.Unlock()
	return p.waitReady(ctx, opts)
}

// waitReady waits until the admin console answers, then checks that a query
// passes through the pool to the server.
func (p *PgBouncer) waitReady(ctx context.Context, opts PgBouncerOptions) error {
	deadline := time.Now().Add(opts.StartTimeout)
	for {
		select {
		case <-p.exited:
			return fmt.Errorf("pgbouncer exited during start-up: %s", p.Log(8))
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		conn, err := pgconn.Connect(cctx, p.ConnString("pgbouncer"))
		cancel()
		if err == nil {
			conn.Close(context.Background())
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pgbouncer did not accept connections within %v: %v; log: %s", opts.StartTimeout, err, p.Log(8))
		}
		time.Sleep(20 * time.Millisecond)
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

// PID returns pgbouncer's process id (for the process probe, which accounts
// it as the pooler), or 0 when it is not running.
func (p *PgBouncer) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil || p.isExited() {
		return 0
	}
	return p.cmd.Process.Pid
}

func (p *PgBouncer) isExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// Running reports whether pgbouncer is alive.
func (p *PgBouncer) Running() bool { return p.PID() != 0 }

// Exited is closed when pgbouncer's process has exited, by Stop or
// otherwise (nil before it started).
func (p *PgBouncer) Exited() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exited
}

// ExitError says how pgbouncer's process ended, in one line ("pgbouncer
// (pid 4711) was killed by signal 9"), or returns nil while it runs.
func (p *PgBouncer) ExitError() error {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil || exited == nil {
		return nil
	}
	select {
	case <-exited:
	default:
		return nil
	}
	how := "exited"
	if st := cmd.ProcessState; st != nil {
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			how = fmt.Sprintf("was killed by signal %d (%v)", int(ws.Signal()), ws.Signal())
		} else {
			how = fmt.Sprintf("exited with status %d", st.ExitCode())
		}
	}
	return fmt.Errorf("pgbouncer (pid %d) %s", cmd.Process.Pid, how)
}

// SaveLog copies pgbouncer's whole log to path, before Stop removes it,
// with anything that looks like a password redacted.
func (p *PgBouncer) SaveLog(path string) error {
	b, err := os.ReadFile(p.LogFile)
	if err != nil {
		return fmt.Errorf("read pgbouncer's log: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("keep pgbouncer's log: %w", err)
	}
	if err := os.WriteFile(path, []byte(secret.Redact(string(b))), 0o644); err != nil {
		return fmt.Errorf("keep pgbouncer's log: %w", err)
	}
	return nil
}

// Log returns the last n lines of pgbouncer's log, for error messages. The
// whole log is LogFile, until Stop removes it.
func (p *PgBouncer) Log(n int) string {
	b, err := os.ReadFile(p.LogFile)
	if err != nil {
		return "(no pgbouncer log)"
	}
	return lastLines(string(b), n)
}

// Kill sends SIGKILL to pgbouncer, as a crash would.
func (p *PgBouncer) Kill() {
	if pid := p.PID(); pid != 0 {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		<-p.exited
	}
}

// shutdown stops pgbouncer: immediate shutdown (SIGTERM), then SIGKILL of
// its process group.
func (p *PgBouncer) shutdown() {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	pid := cmd.Process.Pid
	select {
	case <-exited:
	default:
		_ = syscall.Kill(pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
		}
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL) // anything left in its process group
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
	}
}

// Stop shuts pgbouncer down and removes its directory, log included: copy
// the log first (LogFile, Log) to keep it. It is safe to call more than
// once and on a partly started pooler.
func (p *PgBouncer) Stop() error {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return nil
	}
	p.stopped = true
	p.mu.Unlock()
	p.shutdown()
	if p.Dir == "" {
		return nil
	}
	return os.RemoveAll(p.Dir)
}
