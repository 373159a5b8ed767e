package target_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/target/targettest"
)

// needPgBouncer skips the test when pgbouncer is not installed, unless
// CI=true, where that is a failure.
func needPgBouncer(t *testing.T) {
	t.Helper()
	targettest.NeedPgBouncer(t)
}

// startPgBouncer starts a pgbouncer in front of the package's cluster (over
// its socket unless opts names a server) and stops it when the test ends,
// failed or not.
func startPgBouncer(t *testing.T, opts target.PgBouncerOptions) *target.PgBouncer {
	t.Helper()
	needPgBouncer(t)
	if opts.Server == nil {
		server, err := target.ParseDSN(cluster.ConnString("postgres"))
		if err != nil {
			t.Fatal(err)
		}
		opts.Server = server
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := target.StartPgBouncer(ctx, opts)
	if p != nil {
		t.Cleanup(func() { p.Stop() })
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// showConfig reads the pooler's running configuration from its admin console.
func showConfig(t *testing.T, p *target.PgBouncer) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgconn.Connect(ctx, p.ConnString("pgbouncer"))
	if err != nil {
		t.Fatalf("admin console: %v", err)
	}
	defer conn.Close(ctx)
	// The console speaks the simple protocol only.
	res, err := conn.Exec(ctx, "SHOW CONFIG").ReadAll()
	if err != nil {
		t.Fatalf("SHOW CONFIG: %v", err)
	}
	m := map[string]string{}
	for _, row := range res[0].Rows {
		m[string(row[0])] = string(row[1])
	}
	return m
}

// procLimit returns the soft open-files limit of process pid.
func procLimit(t *testing.T, pid int) uint64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "Max open files") {
			f := strings.Fields(strings.TrimPrefix(line, "Max open files"))
			n, _ := strconv.ParseUint(f[0], 10, 64)
			return n
		}
	}
	t.Fatalf("no open-files line in /proc/%d/limits", pid)
	return 0
}

// A pgbouncer started in front of the cluster pools it over its socket and
// TCP, runs with the settings given and the hard open-files limit, and is
// gone, directory and processes, after Stop.
func TestPgBouncerPoolsTheCluster(t *testing.T) {
	p := startPgBouncer(t, target.PgBouncerOptions{TCP: true, Clients: 500,
		Settings: []target.Setting{{Name: "pool_mode", Value: "transaction"}, {Name: "default_pool_size", Value: "3"}}})
	for _, dsn := range []string{p.ConnString("postgres"), p.TCPConnString("postgres")} {
		// work_mem=7MB is this package's cluster setting: the query reached it.
		if got := query(t, dsn, "SELECT current_setting('work_mem')"); got != "7MB" {
			t.Errorf("through %s: work_mem = %q, want the cluster's 7MB", dsn, got)
		}
	}
	cfg := showConfig(t, p)
	for name, want := range map[string]string{"pool_mode": "transaction", "default_pool_size": "3", "max_client_conn": "510"} {
		if cfg[name] != want {
			t.Errorf("pgbouncer runs with %s = %q, want %q", name, cfg[name], want)
		}
	}
	pid := p.PID()
	if pid == 0 {
		t.Fatal("no PID for a running pgbouncer")
	}
	if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); strings.TrimSpace(string(comm)) != "pgbouncer" {
		t.Errorf("PID %d is %q, want pgbouncer itself (the process probe accounts it)", pid, comm)
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if got := procLimit(t, pid); got != lim.Max || p.FileLimit != lim.Max {
		t.Errorf("pgbouncer's open-files limit is %d (FileLimit %d), want the hard limit %d", got, p.FileLimit, lim.Max)
	}
	if !strings.Contains(p.Log(50), "process up") {
		t.Errorf("log does not show pgbouncer starting: %s", p.Log(5))
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if p.Running() || syscall.Kill(pid, 0) == nil {
		t.Errorf("pgbouncer %d still runs after Stop", pid)
	}
	if left := targettest.ProcessesInGroup(pid); len(left) > 0 {
		t.Errorf("processes left in pgbouncer's group: %v", left)
	}
	if _, err := os.Stat(p.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("directory %s left after Stop (%v)", p.Dir, err)
	}
}

// A server that wants a password gets it from the pooler's configuration,
// quoted as pgbouncer reads it, and the file holding it is private.
func TestPgBouncerPasswordToServer(t *testing.T) {
	needPgBouncer(t)
	// This package's cluster asks role bench for a scram password over TCP.
	query(t, cluster.ConnString("postgres"), "DROP ROLE IF EXISTS bench")
	query(t, cluster.ConnString("postgres"), "CREATE ROLE bench LOGIN PASSWORD 'it''s a horse'")
	t.Cleanup(func() { query(t, cluster.ConnString("postgres"), "DROP ROLE IF EXISTS bench") })
	server, err := target.ParseDSN("host=127.0.0.1 port=" + strconv.Itoa(cluster.Port) + " user=bench password='it\\'s a horse' dbname=postgres sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	p := startPgBouncer(t, target.PgBouncerOptions{Server: server})
	if got := query(t, p.ConnString("postgres"), "SELECT current_user"); got != "bench" {
		t.Errorf("through the pooler current_user = %q, want bench", got)
	}
	fi, err := os.Stat(p.ConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600: it holds the password", p.ConfigFile, fi.Mode().Perm())
	}
	if strings.Contains(p.Log(100), "horse") {
		t.Errorf("the pooler's log shows the password")
	}
}

// More clients than the hard open-files limit allows is refused before
// anything starts, with the limit named.
func TestPgBouncerFileLimitNamed(t *testing.T) {
	needPgBouncer(t)
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	server, _ := target.ParseDSN(cluster.ConnString("postgres"))
	p, err := target.StartPgBouncer(context.Background(), target.PgBouncerOptions{Server: server, Clients: int(lim.Max)})
	if err == nil {
		p.Stop()
		t.Fatalf("%d clients under a hard limit of %d: started", lim.Max, lim.Max)
	}
	if !strings.Contains(err.Error(), "open-files limit") || !strings.Contains(err.Error(), strconv.FormatUint(lim.Max, 10)) {
		t.Errorf("error %q does not name the limit %d", err, lim.Max)
	}
	if p != nil {
		if _, serr := os.Stat(p.Dir); !errors.Is(serr, os.ErrNotExist) {
			t.Errorf("directory %s left after a refused start", p.Dir)
		}
	}
}

// A setting pgbouncer rejects fails the start with its own message, and
// nothing is left behind.
func TestPgBouncerBadSetting(t *testing.T) {
	needPgBouncer(t)
	server, _ := target.ParseDSN(cluster.ConnString("postgres"))
	p, err := target.StartPgBouncer(context.Background(), target.PgBouncerOptions{Server: server,
		Settings: []target.Setting{{Name: "pool_mode", Value: "sometimes"}}})
	if err == nil {
		p.Stop()
		t.Fatal("pool_mode=sometimes: started")
	}
	if !strings.Contains(err.Error(), `invalid value "sometimes" for parameter pool_mode`) {
		t.Errorf("error %q does not carry pgbouncer's reason", err)
	}
	if p == nil || p.Running() {
		t.Fatalf("pooler %v still running after a failed start", p)
	}
	if _, serr := os.Stat(p.Dir); !errors.Is(serr, os.ErrNotExist) {
		t.Errorf("directory %s left after a failed start", p.Dir)
	}
	_, err = target.StartPgBouncer(context.Background(), target.PgBouncerOptions{Server: server,
		Settings: []target.Setting{{Name: "pool_mode", Value: "session\nauth_type = trust"}}})
	if err == nil || !strings.Contains(err.Error(), "pool_mode") {
		t.Errorf("a value with a newline: err %v, want it refused by name", err)
	}
}

// A missing executable is one error that says where it looked and how to
// install it.
func TestPgBouncerMissing(t *testing.T) {
	_, err := target.FindPgBouncer("/no/such/pgbouncer")
	if !errors.Is(err, target.ErrNoPgBouncer) || !strings.Contains(err.Error(), "/no/such/pgbouncer") {
		t.Errorf("FindPgBouncer(/no/such/pgbouncer) = %v", err)
	}
	t.Setenv("PATH", t.TempDir())
	t.Setenv("PGSCALE_PGBOUNCER", "")
	if _, err := os.Stat("/usr/sbin/pgbouncer"); err == nil {
		return // installed where FindPgBouncer looks beside PATH
	}
	if _, err := target.FindPgBouncer(""); !errors.Is(err, target.ErrNoPgBouncer) || !strings.Contains(err.Error(), "apt-get install pgbouncer") {
		t.Errorf("FindPgBouncer with nothing installed = %v", err)
	}
}
