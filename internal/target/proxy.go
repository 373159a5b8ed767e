package target

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/template"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/proc"
	"github.com/pgscale/pgscale/internal/secret"
	"github.com/pgscale/pgscale/internal/watch"
)

// ProxyDef says how to run a pooler or proxy: its command line and the
// files it reads, each a Go text/template of where it runs ({{dir}},
// {{port}}) and of the servers it fronts ({{upstream.host}},
// {{range .Upstreams}}...{{end}}). It is what a proxy: target's YAML holds;
// the built-in pgbouncer: target is one, written by pgscale.
type ProxyDef struct {
	// Program names it in messages and in the name of its log kept with a
	// result ("pgbouncer"); empty: the base name of the command's first word.
	Program string
	// Command is the command line, run by /bin/sh in {{dir}}: a simple
	// command is exec'd, so that the program keeps the shell's pid.
	Command string
	// Files are written into {{dir}} before the start, private to the
	// program's user (they may hold an upstream's password).
	Files []ProxyFile
	// Connect is where the clients connect, as connection keywords
	// (host, port, options...); default "host=127.0.0.1 port={{port}}".
	// The upstream's user and database are added unless it names them.
	Connect string
	// Ready is how long the program has to answer a startup and SELECT 1
	// through Connect; default 30 s.
	Ready time.Duration
	// Stop is the signal that asks it to stop; default SIGTERM, then,
	// after 5 s, SIGKILL of its whole process tree.
	Stop syscall.Signal
	// Build, when set, is the program's own source tree at a revision and
	// its build command: built (or found) in the build cache before the
	// start, its directory {{build}}.
	Build *ProxyBuild
	// Admin, when set, is the program's admin console (admin:), for a
	// probe of the pooler's pools.
	Admin *ProxyAdmin
	// ReadOnly says it may send any statement to a replica (read_only:,
	// a pgbouncer balancing over a host list): a workload that writes is
	// refused before the run (plan).
	ReadOnly bool
	// Shards say how it shards the rows of the servers it fronts, as its
	// own configuration does (shards:, TABLE: COLUMN): a workload whose
	// transaction writes beyond one shard is refused before the run
	// (plan).
	Shards []ProxyShard
}

// ProxyShard is a table a sharding proxy routes by one of its columns.
type ProxyShard struct{ Table, Column string }

// ProxyAdmin is a proxy's admin console as its definition names it:
// Connect, connection keywords (a template, as Connect is) that turn where
// the clients connect into the console ("dbname=pgbouncer"), and the
// commands run there with how their columns map to pool figures.
type ProxyAdmin struct {
	Connect  string
	Commands []watch.AdminCommand
}

// ProxyBuild is how a proxy's program is built: a source PATH[@REV][+PATCH]
// (internal/build's form), a shell command run in the exported tree, and
// what to keep, the tree after the command (default) or what it
// installed into $PREFIX.
type ProxyBuild struct {
	Source, Run, Keep string
}

// ProxyFile is one file a proxy reads: its name in {{dir}} and its
// template.
type ProxyFile struct{ Name, Template string }

// Upstream is one server a proxy fronts, as its templates see it: in
// {{range .Upstreams}} as .Host, .Port..., and the first as
// {{upstream.host}}, {{upstream.port}}... (upstream's keys are the field
// names in lower case).
type Upstream struct {
	Name     string // the target it is, when it is one
	Host     string // address, or unix socket directory
	Port     int
	User     string
	Password string
	Database string
	// Role is "primary", or "replica" for a streaming replica of the
	// upstream before it.
	Role string
	// Index is its place among the upstreams, from 0.
	Index int
}

// lower is the upstream as a map with lower-case keys, for
// {{upstream.host}}.
func (u Upstream) lower() map[string]any {
	return map[string]any{"name": u.Name, "host": u.Host, "port": u.Port, "user": u.User, "password": u.Password,
		"database": u.Database, "dbname": u.Database, "role": u.Role, "index": u.Index}
}

// UpstreamOf is the upstream a server's connection config names.
func UpstreamOf(name string, cfg *pgconn.Config) Upstream {
	db := cfg.Database
	if db == "" {
		db = cfg.User
	}
	return Upstream{Name: name, Host: cfg.Host, Port: int(cfg.Port), User: cfg.User, Password: cfg.Password, Database: db, Role: "primary"}
}

// ProxyOptions say how to start a proxy.
type ProxyOptions struct {
	Def       ProxyDef
	Upstreams []Upstream
	// Port is the port it listens on ({{port}}); 0 picks a free TCP port
	// on 127.0.0.1 (and another if the program finds it taken).
	Port int
	// DirPrefix names its temporary directory; default "pgscale-proxy-".
	DirPrefix string
	// OSUser runs it when pgscale runs as root; default "postgres".
	OSUser string
	// OpenFiles is the open-files limit it runs with; 0: the hard limit.
	OpenFiles uint64
	// Build is the directory of the program's build ({{build}}); empty
	// without one.
	Build string
	// Clients is how many client connections it must hold at once: a
	// proxy target's are the run's largest client count and ten more (the
	// start's check, a probe); {{clients}} (100 when 0), for a pooler's
	// client or process limit.
	Clients int
	// Data are extra template values, as .Data.NAME.
	Data map[string]any
	// Funcs are extra template functions.
	Funcs template.FuncMap
	// Valgrind, when set, runs the program under Valgrind's callgrind,
	// instrumentation off until the instruction probe turns it on
	// (--count instructions); the readiness check then waits ten times as
	// long.
	Valgrind *Valgrind
	// Check, when set, replaces the readiness check (a startup and
	// SELECT 1 through Connect until Def.Ready passes).
	Check func(ctx context.Context, p *Proxy) error
}

// Proxy is a running pooler or proxy owned by this process, in a
// temporary directory of its own holding its files and its log.
type Proxy struct {
	Name      string // its program: what it is called in messages
	Dir       string // {{dir}}
	LogFile   string // its standard output and error
	Port      int    // {{port}}
	FileLimit uint64 // the open-files limit it runs with
	// Command is the command line as run, passwords redacted.
	Command string
	// Files are the files as written, by name, passwords redacted.
	Files map[string]string
	// Connect is the rendered Connect, without user and database.
	Connect string
	// adminConnect is the rendered Admin.Connect.
	adminConnect string
	// Upstreams are the servers it fronts.
	Upstreams []Upstream

	// Process is the program's process once started; nil before.
	*Process

	opts    ProxyOptions
	cmdline string // the rendered command line, unredacted
	cred    *syscall.Credential
	mu      sync.Mutex
	stopped bool
}

// StartProxy renders a proxy's files and command line, starts it as
// OSUser (when pgscale runs as root) with the open-files limit raised, and
// waits until it passes a query through to its first upstream. The caller
// must call Stop, also after an error (a proxy returned with an error is
// stopped already, and Stop only removes what is left).
func StartProxy(ctx context.Context, opts ProxyOptions) (p *Proxy, err error) {
	def := opts.Def
	if strings.TrimSpace(def.Command) == "" {
		return nil, errors.New("a proxy needs a command")
	}
	if len(opts.Upstreams) == 0 {
		return nil, errors.New("a proxy needs a server to stand in front of")
	}
	if def.Program == "" {
		def.Program = programName(def.Command)
	}
	if def.Ready <= 0 {
		def.Ready = 30 * time.Second
	}
	if opts.Valgrind != nil {
		def.Ready *= 10
	}
	if def.Connect == "" {
		def.Connect = "host=127.0.0.1 port={{port}}"
	}
	if opts.OSUser == "" {
		opts.OSUser = "postgres"
	}
	if opts.DirPrefix == "" {
		opts.DirPrefix = "pgscale-proxy-"
	}
	opts.Def = def
	for i := range opts.Upstreams {
		opts.Upstreams[i].Index = i
	}
	dir, err := os.MkdirTemp("", opts.DirPrefix)
	if err != nil {
		return nil, fmt.Errorf("create %s's directory: %w", def.Program, err)
	}
	p = &Proxy{Name: def.Program, Dir: dir, LogFile: filepath.Join(dir, def.Program+".log"), Port: opts.Port,
		Upstreams: opts.Upstreams, opts: opts}
	defer func() {
		if err != nil {
			p.shutdown()
		}
	}()
	if p.cred, err = proc.RunAs(opts.OSUser); err != nil {
		return p, fmt.Errorf("%s runs as %s: %w", def.Program, opts.OSUser, err)
	}
	if err = proc.GiveTo(dir, p.cred, opts.OSUser); err != nil {
		return p, err
	}
	if p.FileLimit = opts.OpenFiles; p.FileLimit == 0 {
		var lim syscall.Rlimit
		if err = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			return p, fmt.Errorf("read the open-files limit: %w", err)
		}
		p.FileLimit = lim.Max
	}
	pick := opts.Port == 0
	for attempt := 0; ; attempt++ {
		if pick {
			if p.Port, err = freePort(); err != nil {
				return p, err
			}
		}
		if err = p.render(); err != nil {
			return p, err
		}
		err = p.start(ctx)
		if err == nil || !pick || attempt == 3 || !strings.Contains(p.Log(20), "in use") {
			return p, err
		}
		// Another process took the free port between our probe and the bind: pick another.
		p.shutdown()
	}
}

// programName is the base name of a command line's first word.
func programName(command string) string {
	f := strings.Fields(command)
	if len(f) == 0 {
		return "proxy"
	}
	name := filepath.Base(strings.Trim(f[0], `'"`))
	if strings.Contains(name, "{{") || name == "" || name == "." || name == "/" {
		return "proxy"
	}
	return name
}

// templateData is what a proxy's templates see: .Dir, .Port, .Upstreams,
// .Upstream (the first) and .Data; the functions dir, port, build (the
// program's build directory, with build:), clients (the
// run's largest client count), upstream (the first upstream, lower-case
// keys), upstreams (all, likewise), connquote (a pgbouncer connection
// string value) and quote (a PostgreSQL-style 'string').
type templateData struct {
	Dir       string
	Port      int
	Upstreams []Upstream
	Upstream  Upstream
	Data      map[string]any
}

func (p *Proxy) funcs() template.FuncMap {
	fm := template.FuncMap{
		"dir":      func() string { return p.Dir },
		"port":     func() int { return p.Port },
		"upstream": func() map[string]any { return p.Upstreams[0].lower() },
		"upstreams": func() []map[string]any {
			out := make([]map[string]any, len(p.Upstreams))
			for i, u := range p.Upstreams {
				out[i] = u.lower()
			}
			return out
		},
		"clients": func() int {
			if p.opts.Clients <= 0 {
				return 100
			}
			return p.opts.Clients
		},
		"build": func() (string, error) {
			if p.opts.Build == "" {
				return "", errors.New("{{build}}: the definition has no build:")
			}
			return p.opts.Build, nil
		},
		"connquote": connQuote,
		"quote":     quote,
	}
	for k, v := range p.opts.Funcs {
		fm[k] = v
	}
	return fm
}

// ParseProxyTemplate checks one template of a proxy's definition: that it
// parses and names only functions a proxy's templates have.
func ParseProxyTemplate(name, text string, extra template.FuncMap) error {
	p := &Proxy{opts: ProxyOptions{Funcs: extra}}
	_, err := template.New(name).Funcs(p.funcs()).Option("missingkey=error").Parse(text)
	return err
}

// execute renders one template.
func (p *Proxy) execute(name, text string) (string, error) {
	t, err := template.New(name).Funcs(p.funcs()).Option("missingkey=error").Parse(text)
	if err != nil {
		return "", fmt.Errorf("%s's %s: %w", p.Name, name, err)
	}
	var b bytes.Buffer
	data := templateData{Dir: p.Dir, Port: p.Port, Upstreams: p.Upstreams, Upstream: p.Upstreams[0], Data: p.opts.Data}
	if err := t.Execute(&b, data); err != nil {
		return "", fmt.Errorf("%s's %s: %w", p.Name, name, err)
	}
	return b.String(), nil
}

// redact hides the upstreams' passwords, and anything that looks like a
// password, in text that is shown or recorded.
func (p *Proxy) redact(s string) string {
	for _, u := range p.Upstreams {
		if len(u.Password) >= 3 {
			s = strings.ReplaceAll(s, u.Password, secret.Mask)
		}
	}
	return secret.Redact(s)
}

// render writes the files and renders the command line and Connect.
func (p *Proxy) render() error {
	def := p.opts.Def
	p.Files = map[string]string{}
	for _, f := range def.Files {
		text, err := p.execute(f.Name, f.Template)
		if err != nil {
			return err
		}
		path := filepath.Join(p.Dir, f.Name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			return fmt.Errorf("write %s's %s: %w", p.Name, f.Name, err)
		}
		if err := proc.GiveTo(path, p.cred, p.opts.OSUser); err != nil {
			return err
		}
		p.Files[f.Name] = p.redact(text)
	}
	cmd, err := p.execute("command", def.Command)
	if err != nil {
		return err
	}
	p.Command = p.redact(strings.TrimSpace(cmd))
	if p.Connect, err = p.execute("connect", def.Connect); err != nil {
		return err
	}
	p.Connect = strings.TrimSpace(p.Connect)
	if a := def.Admin; a != nil {
		if p.adminConnect, err = p.execute("admin connect", a.Connect); err != nil {
			return err
		}
	}
	p.cmdline = strings.TrimSpace(cmd)
	return nil
}

// Admin is the proxy's admin console when its definition names one (nil
// otherwise): where the clients connect, with the console's keywords.
func (p *Proxy) Admin() *watch.Admin {
	a := p.opts.Def.Admin
	if a == nil {
		return nil
	}
	cfg, err := ParseDSN(p.ConnString(p.Upstreams[0].Database) + " " + strings.TrimSpace(p.adminConnect))
	if err != nil {
		return nil // checked when the definition was read
	}
	return &watch.Admin{Conn: cfg, Commands: a.Commands}
}

// shellMeta are the characters that make a command line more than one
// simple command.
const shellMeta = "\n;&|<>()`$"

// argv is how the command line runs: a simple command is exec'd by the
// shell (the program keeps the pid the process probe accounts); anything
// else runs as the shell's script, the program a child of the shell.
func (p *Proxy) argv() []string {
	if strings.ContainsAny(p.cmdline, shellMeta) {
		return []string{"-c", p.cmdline}
	}
	return []string{"-c", "exec " + p.cmdline}
}

func (p *Proxy) start(ctx context.Context) error {
	stop := p.opts.Def.Stop
	if stop == 0 {
		stop = syscall.SIGTERM
	}
	env := append(os.Environ(), "PGSCALE_PROXY_DIR="+p.Dir, "PGSCALE_PROXY_PORT="+strconv.Itoa(p.Port))
	path, args := "/bin/sh", p.argv()
	if v := p.opts.Valgrind; v != nil {
		path, args = p.valgrindCommand(v)
		env = append(valgrindEnv(), "PGSCALE_PROXY_DIR="+p.Dir, "PGSCALE_PROXY_PORT="+strconv.Itoa(p.Port))
	}
	pr, err := proc.Start(proc.Spec{Name: p.Name, Path: path, Args: args, Dir: p.Dir, Env: env,
		Log: p.LogFile, Cred: p.cred, OpenFiles: p.FileLimit, ParentDeath: syscall.SIGTERM,
		Stop: []StopStep{{Signal: stop, Wait: 5 * time.Second}}})
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.Process, p.stopped = pr, false
	p.mu.Unlock()
	if p.opts.Check != nil {
		return p.opts.Check(ctx, p)
	}
	return p.waitReady(ctx)
}

// ConnString returns a keyword/value connection string through the proxy
// to database dbname of its first upstream, as its user (unless Connect
// names them).
func (p *Proxy) ConnString(dbname string) string {
	s := p.Connect
	has := func(k string) bool { return strings.Contains(" "+s, " "+k+"=") }
	if !has("user") {
		s += " user=" + connValue(p.Upstreams[0].User)
	}
	if !has("dbname") {
		s += " dbname=" + connValue(dbname)
	}
	if !has("sslmode") {
		s += " sslmode=disable"
	}
	return strings.TrimSpace(s)
}

// connValue quotes a libpq keyword value when it needs it.
func connValue(v string) string {
	if v != "" && !strings.ContainsAny(v, ` '\`) {
		return v
	}
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
}

// waitReady waits until a startup and SELECT 1 pass through the proxy to
// its first upstream's database, within Def.Ready.
func (p *Proxy) waitReady(ctx context.Context) error {
	dsn := p.ConnString(p.Upstreams[0].Database)
	err := p.Process.WaitReady(ctx, p.opts.Def.Ready, 50*time.Millisecond, "answer a startup and SELECT 1", func(ctx context.Context) error {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		conn, err := pgconn.Connect(cctx, dsn)
		if err != nil {
			return errors.New(secret.Redact(parseErrorReason(err)))
		}
		defer conn.Close(context.Background())
		_, err = conn.Exec(cctx, "SELECT 1").ReadAll()
		return err
	})
	if err != nil && ctx.Err() == nil {
		return errors.New(p.redact(err.Error()))
	}
	return err
}

// ExitError says in one line how the proxy ended, with the last lines of
// its log ("pgpool (pid 4711) exited with status 3: FATAL: ..."), or
// returns nil while it runs.
func (p *Proxy) ExitError() error {
	err := p.Process.ExitError()
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w; its log ends: %s", err, p.Log(3))
}

// Log returns the last n lines of the proxy's log, passwords redacted.
func (p *Proxy) Log(n int) string {
	return p.redact(proc.TailFile(p.LogFile, n, "(no "+p.Name+" log)"))
}

// SaveLog copies the proxy's whole log to path, passwords redacted.
func (p *Proxy) SaveLog(path string) error {
	b, err := os.ReadFile(p.LogFile)
	if err != nil {
		return fmt.Errorf("read %s's log: %w", p.Name, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("keep %s's log: %w", p.Name, err)
	}
	if err := os.WriteFile(path, []byte(p.redact(string(b))), 0o644); err != nil {
		return fmt.Errorf("keep %s's log: %w", p.Name, err)
	}
	return nil
}

// Program is the proxy's program: what it is called in messages and in
// the name of its log kept with a result.
func (p *Proxy) Program() string { return p.Name }

// shutdown stops the program and every process it started.
func (p *Proxy) shutdown() {
	p.mu.Lock()
	pr := p.Process
	p.mu.Unlock()
	pr.Stop()
}

// Stop stops the proxy and its children and removes its directory, log
// included: copy the log first (SaveLog) to keep it. It is safe to call
// more than once and on a partly started proxy.
func (p *Proxy) Stop() error {
	if p == nil {
		return nil
	}
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
