package target

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/proc"
)

// Options say how to start an ephemeral cluster.
type Options struct {
	BinDir         string        // server binaries; FindBinDir when empty
	Tmpfs          bool          // put the data directory under /dev/shm
	TCP            bool          // also listen on 127.0.0.1 at a free port
	Settings       []Setting     // --set name=value, applied after the defaults
	OSUser         string        // OS user running the server when pgscale runs as root; default "postgres"
	DataSizeHint   int64         // bytes of data the run will create, to size shared_buffers
	MaxConnections int           // client connections the run needs at most
	StartTimeout   time.Duration // default 60 s
	HBA            []string      // extra pg_hba.conf lines placed before the defaults
	NoPreload      bool          // do not preload pg_stat_statements / pg_wait_sampling
	// Valgrind, when set, is what the server is counted under: it starts
	// natively, so that the data is made and the set-up runs at native
	// speed, and Count restarts it under Valgrind's callgrind, with
	// instrumentation off until turned on (Cluster.Callgrind).
	Valgrind *Valgrind
	// Detach lets the server outlive pgscale (--keep). Otherwise the kernel
	// stops it if pgscale dies without cleaning up, and the cluster's
	// directory is marked as this process's, so that the next pgscale to
	// start removes it (RemoveStale).
	Detach bool
	// Log receives one-line notices: stale cluster directories removed.
	Log func(string)
	// Empty makes the cluster's directory and configuration but no data
	// directory and no server: CopyData gives it its data, Server.Resume
	// starts it (or Server.Initdb makes data of its own).
	Empty bool
}

// Setting is one server configuration parameter.
type Setting struct{ Name, Value string }

// ParseSetting parses "name=value" as given to --set.
func ParseSetting(s string) (Setting, error) {
	name, value, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return Setting{}, fmt.Errorf("setting %q is not name=value", s)
	}
	return Setting{Name: name, Value: strings.TrimSpace(value)}, nil
}

// Cluster is a running ephemeral PostgreSQL cluster owned by this process.
type Cluster struct {
	Dir       string    // the temporary directory holding everything below
	DataDir   string    // PGDATA
	SocketDir string    // where the unix socket lives
	LogFile   string    // the server's log
	Port      int       // the port (socket file name; TCP port with Options.TCP)
	TCP       bool      // listening on 127.0.0.1:Port
	BinDir    string    // server binaries used
	Version   string    // e.g. "15.18"
	Major     int       // e.g. 15
	User      string    // superuser role name
	Settings  []Setting // what pgscale wrote into postgresql.conf, in order
	Preloaded []string  // shared_preload_libraries

	opts    Options
	owner   *os.File // the directory's owner file, locked while this process lives (nil with Detach)
	cred    *syscall.Credential
	mu      sync.Mutex
	proc    *Process // the postmaster, replaced by every start
	stopped bool
	// counted says the server runs (or will, at its next start) under
	// opts.Valgrind: Count and Native switch it.
	counted bool
	// traces are the backtraces of its crashed processes, by pid, read
	// once from their core files (core.go), under traceMu: gdb takes
	// seconds, which mu must not wait for.
	traceMu sync.Mutex
	traces  map[int]*CrashError
	// crashed says Crash found a process of it that died of a signal.
	crashed atomic.Bool
}

const superuser = "postgres"

// Start creates a temporary cluster with initdb, starts it and waits until it
// accepts connections. The caller must call Stop (also on error paths).
func Start(ctx context.Context, opts Options) (c *Cluster, err error) {
	if opts.BinDir == "" {
		if opts.BinDir, err = FindBinDir("", Words{}); err != nil {
			return nil, err
		}
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 60 * time.Second
	}
	if opts.OSUser == "" {
		opts.OSUser = "postgres"
	}
	version, major, err := ServerVersion(opts.BinDir)
	if err != nil {
		return nil, err
	}
	parent := os.TempDir()
	if opts.Tmpfs {
		parent = "/dev/shm"
	}
	// What pgscale processes killed before they could clean up left here.
	removed, rerr := RemoveStale(parent)
	if opts.Log != nil {
		for _, d := range removed {
			opts.Log("removed the cluster directory a killed pgscale left: " + d)
		}
		if rerr != nil {
			opts.Log("stale cluster directory: " + rerr.Error())
		}
	}
	dir, err := mkdirTemp(parent)
	if err != nil {
		return nil, fmt.Errorf("create cluster directory: %w", err)
	}
	c = &Cluster{
		Dir: dir, DataDir: filepath.Join(dir, "data"), SocketDir: dir, LogFile: filepath.Join(dir, "server.log"),
		BinDir: opts.BinDir, Version: version, Major: major, User: superuser, opts: opts,
	}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	if !opts.Detach {
		if c.owner, err = own(dir); err != nil {
			return c, fmt.Errorf("mark cluster directory: %w", err)
		}
	}
	if c.cred, err = proc.RunAs(opts.OSUser); err != nil {
		return c, err
	}
	if err = proc.GiveTo(dir, c.cred, opts.OSUser); err != nil {
		return c, err
	}
	if err = c.configure(); err != nil {
		return c, err
	}
	if opts.Empty {
		return c, nil
	}
	return c, c.initialize(ctx)
}

// initialize makes the cluster's data directory (initdb, pg_hba.conf)
// and starts its server.
func (c *Cluster) initialize(ctx context.Context) error {
	if err := c.initdb(); err != nil {
		return err
	}
	if err := c.writeHBA(); err != nil {
		return err
	}
	return c.startRetrying(ctx)
}

// startRetrying starts the server, on another free port when another
// process took the one chosen between our probe and the server's bind.
func (c *Cluster) startRetrying(ctx context.Context) error {
	for attempt := 0; ; attempt++ {
		err := c.start(ctx)
		if err == nil || !c.TCP || attempt == 3 || !strings.Contains(c.Log(20), "Address already in use") {
			return err
		}
		if c.Port, err = freePort(); err != nil {
			return err
		}
		c.setPort()
	}
}

// mkdirTemp creates a new directory in parent named pgscale- and ten
// random digits: every cluster's paths have the same length, so that two
// servers started alike lay out their memory alike (argv and the paths
// in it sit on the initial stack, and a few bytes shift every stack
// address after them) — what two servers whose instructions are counted
// must do to count the same.
func mkdirTemp(parent string) (string, error) {
	for try := 0; ; try++ {
		dir := filepath.Join(parent, fmt.Sprintf("pgscale-%010d", rand.Uint32()))
		err := os.Mkdir(dir, 0o700)
		if err == nil || !os.IsExist(err) || try == 100 {
			return dir, err
		}
	}
}

// command runs one of the server's programs to its end, as the server's
// OS user, and returns what it printed.
func (c *Cluster) command(ctx context.Context, name string, args ...string) (string, error) {
	return proc.Output(ctx, proc.Spec{Name: name, Path: filepath.Join(c.BinDir, name), Args: args, Dir: c.Dir,
		Env: append(childEnv(), "LC_ALL=C"), Cred: c.cred})
}

func (c *Cluster) initdb() error {
	out, err := c.command(context.Background(), "initdb", "-D", c.DataDir, "-U", superuser, "--auth=trust", "-E", "UTF8",
		"--locale=C", "--no-sync", "--no-instructions")
	if err != nil {
		return fmt.Errorf("initdb failed: %v: %s", err, proc.LastLines(out, 5))
	}
	return nil
}

// configure chooses the port and the libraries to preload, and sets
// pgscale's benchmark defaults and the user's settings (written into the
// data directory at every start).
func (c *Cluster) configure() error {
	o := c.opts
	c.Port = 5432
	c.TCP = o.TCP
	if o.TCP {
		p, err := freePort()
		if err != nil {
			return err
		}
		c.Port = p
	}
	for _, lib := range []string{"pg_stat_statements", "pg_wait_sampling"} {
		if !o.NoPreload && HasModule(c.BinDir, lib) {
			c.Preloaded = append(c.Preloaded, lib)
		}
	}
	c.Settings = append(DefaultSettings(o.DataSizeHint, o.MaxConnections, c.Preloaded), o.Settings...)
	c.setPort()
	return nil
}

// writeHBA puts the extra pg_hba.conf lines before initdb's.
func (c *Cluster) writeHBA() error {
	if len(c.opts.HBA) == 0 {
		return nil
	}
	hba := filepath.Join(c.DataDir, "pg_hba.conf")
	old, err := os.ReadFile(hba)
	if err != nil {
		return err
	}
	return os.WriteFile(hba, []byte(strings.Join(c.opts.HBA, "\n")+"\n"+string(old)), 0o600)
}

// setPort (re)writes the settings that depend on the port, then all settings.
func (c *Cluster) setPort() {
	listen := "''"
	if c.TCP {
		listen = "'127.0.0.1'"
	}
	head := []Setting{
		{"listen_addresses", listen},
		{"port", strconv.Itoa(c.Port)},
		{"unix_socket_directories", quote(c.SocketDir)},
	}
	var rest []Setting
	for _, s := range c.Settings {
		if s.Name != "listen_addresses" && s.Name != "port" && s.Name != "unix_socket_directories" {
			rest = append(rest, s)
		}
	}
	c.Settings = append(head, rest...)
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func (c *Cluster) writeConf() error {
	var b strings.Builder
	b.WriteString("\n# written by pgscale\n")
	for _, s := range c.Settings {
		v := s.Value
		if !strings.HasPrefix(v, "'") {
			v = quote(v)
		}
		fmt.Fprintf(&b, "%s = %s\n", s.Name, v)
	}
	return os.WriteFile(filepath.Join(c.DataDir, "pgscale.conf"), []byte(b.String()), 0o644)
}

func (c *Cluster) start(ctx context.Context) error {
	if err := c.writeConf(); err != nil {
		return err
	}
	conf := filepath.Join(c.DataDir, "postgresql.conf")
	if b, err := os.ReadFile(conf); err == nil && !strings.Contains(string(b), "include_if_exists = 'pgscale.conf'") {
		if err := os.WriteFile(conf, append(b, "\ninclude_if_exists = 'pgscale.conf'\n"...), 0o600); err != nil {
			return err
		}
	}
	ps := proc.Spec{Name: "postgres", Path: filepath.Join(c.BinDir, "postgres"), Args: []string{"-D", c.DataDir}, Dir: c.Dir,
		Env: append(childEnv(), "LC_ALL=C"), Log: c.LogFile, Cred: c.cred,
		// Fast shutdown, then immediate.
		Stop: []StopStep{{Signal: syscall.SIGINT, Wait: 30 * time.Second}, {Signal: syscall.SIGQUIT, Wait: 5 * time.Second}}}
	c.mu.Lock()
	counted := c.counted
	c.mu.Unlock()
	if v := c.opts.Valgrind; v != nil && counted {
		ps.Path, ps.Args = v.command(c.Dir, ps.Path, ps.Args...)
		ps.Env = valgrindEnv()
	} else {
		// An environment of random size moves the initial stack of the server
		// and of every backend it forks, which changes how their frames fall
		// on cache lines and pages (Mytkowicz et al., "Producing wrong data
		// without doing anything obviously wrong"): each start draws one, so
		// that a cluster re-created for a new layout does not keep that part
		// of its placement. (Under Valgrind the environment is fixed
		// instead: an instruction count must not move with it.)
		ps.Env = append(ps.Env, "PGSCALE_LAYOUT="+strings.Repeat("x", rand.IntN(4096)))
		// A backend that crashes leaves a core file, from which the
		// crash's message names its function and line (core.go).
		ps.CoreFiles = true
	}
	// If pgscale dies without cleaning up, the kernel tells the postmaster to
	// shut down immediately.
	if !c.opts.Detach {
		ps.ParentDeath = syscall.SIGQUIT
	}
	pr, err := proc.Start(ps)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.proc, c.stopped = pr, false
	c.mu.Unlock()
	return c.waitReady(ctx)
}

func (c *Cluster) waitReady(ctx context.Context) error {
	return c.process().WaitReady(ctx, c.opts.StartTimeout, 50*time.Millisecond, "accept connections", func(ctx context.Context) error {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		conn, err := pgconn.Connect(cctx, c.ConnString("postgres"))
		if err == nil {
			conn.Close(context.Background())
		}
		return err
	})
}

// ConnString returns a keyword/value connection string for database dbname,
// over the unix socket.
func (c *Cluster) ConnString(dbname string) string {
	return fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable", c.SocketDir, c.Port, c.User, dbname)
}

// TCPConnString is ConnString over TCP; only valid with Options.TCP.
func (c *Cluster) TCPConnString(dbname string) string {
	return fmt.Sprintf("host=127.0.0.1 port=%d user=%s dbname=%s sslmode=disable", c.Port, c.User, dbname)
}

// process is the postmaster's Process (nil before the first start).
func (c *Cluster) process() *Process {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.proc
}

// PID returns the postmaster's process id, or 0 when it is not running.
func (c *Cluster) PID() int { return c.process().PID() }

// Running reports whether the postmaster is alive.
func (c *Cluster) Running() bool { return c.process().Running() }

// shutdown stops the server: fast shutdown, then immediate, then SIGKILL of
// its whole process group.
func (c *Cluster) shutdown() { c.process().Stop() }

// Stop shuts the server down and removes the cluster's directory. It is safe
// to call more than once and on a partly started cluster.
func (c *Cluster) Stop() error {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return nil
	}
	c.stopped = true
	died := c.proc != nil && !c.proc.Running()
	c.mu.Unlock()
	if died {
		c.reclaimShm()
	}
	if c.crashed.Load() {
		// After a crash the server is in crash recovery, which ignores a
		// fast shutdown until it has synced the whole data directory (30 s
		// on a loaded disk here): an immediate shutdown ends a cluster
		// about to be removed at once, its shared memory released.
		_ = c.process().Signal(syscall.SIGQUIT)
	}
	c.shutdown()
	if c.Dir == "" {
		return nil
	}
	err := os.RemoveAll(c.Dir)
	if c.owner != nil {
		c.owner.Close()
	}
	return err
}

// reclaimShm starts once more a server that died without shutting down
// (killed, as the crash tests do, or crashed), and only so that PostgreSQL
// removes the dead server's shared memory as it starts: its System V
// segment, and its dynamic segments in /dev/shm, which removing the
// directory would leave behind for good (one segment and two files per
// killed server). A server that shut down cleanly left no postmaster.pid
// and nothing to reclaim.
func (c *Cluster) reclaimShm() {
	if _, err := os.Stat(filepath.Join(c.DataDir, "postmaster.pid")); err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = c.start(ctx) // best effort: a server that cannot start holds nothing more
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
}

// resize makes room for maxConnections client connections: pgscale's
// defaults are written again for that many, and the server restarted when
// its max_connections changed.
func (c *Cluster) resize(ctx context.Context, maxConnections int) error {
	old := settingValue(c.Settings, "max_connections")
	c.opts.MaxConnections = maxConnections
	c.Settings = append(DefaultSettings(c.opts.DataSizeHint, maxConnections, c.Preloaded), c.opts.Settings...)
	c.setPort()
	if settingValue(c.Settings, "max_connections") == old {
		return nil
	}
	return c.Restart(ctx)
}

// Restart stops the server (fast shutdown) and starts it again on the same
// directory and port: what a crash-and-recover or a settings change looks like
// to clients.
func (c *Cluster) Restart(ctx context.Context) error {
	c.shutdown()
	return c.start(ctx)
}

// Count restarts a server started natively under Valgrind's callgrind
// (Options.Valgrind; nothing without it, or when it runs under it
// already): fast shutdown, then a start under Valgrind on the same
// directory and port. The data and the set-up are made before, at native
// speed — under Valgrind 10 000 rows and an index took nine minutes —
// and the counted steps' warm-up round fills the shared buffers the
// restart emptied. Valgrind cannot attach to a running process, so a
// restart is the only way to count only what runs after it.
func (c *Cluster) Count(ctx context.Context) error { return c.switchTo(ctx, true) }

// Native restarts a server counted under Valgrind natively again, for
// more set-up (a suite's next cell); nothing when it runs natively.
func (c *Cluster) Native(ctx context.Context) error { return c.switchTo(ctx, false) }

func (c *Cluster) switchTo(ctx context.Context, counted bool) error {
	c.mu.Lock()
	same := c.opts.Valgrind == nil || c.counted == counted
	c.mu.Unlock()
	if same {
		return nil
	}
	c.shutdown()
	c.mu.Lock()
	c.counted = counted
	c.mu.Unlock()
	return c.start(ctx)
}

// Kill sends SIGKILL to the postmaster alone, as a crash would, and waits
// until it is gone; the server does not come back until Restart.
func (c *Cluster) Kill() { c.process().Kill() }

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free TCP port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// ErrServerGone is returned when the server exited unexpectedly.
var ErrServerGone = errors.New("server exited")

// Log returns the last n lines of the server log, for error messages.
func (c *Cluster) Log(n int) string { return proc.TailFile(c.LogFile, n, "(no server log)") }
