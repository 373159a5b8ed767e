package target_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/target/targettest"
)

var cluster *target.Cluster

func TestMain(m *testing.M) {
	os.Exit(targettest.Run(m, target.Options{
		TCP:      true,
		Settings: []target.Setting{{Name: "work_mem", Value: "7MB"}},
		HBA:      []string{"host all bench 127.0.0.1/32 scram-sha-256"},
	}, func(c *target.Cluster) { cluster = c }))
}

func query(t *testing.T, connString, sql string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgconn.Connect(ctx, connString)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	res := conn.ExecParams(ctx, sql, nil, nil, nil, nil).Read()
	if res.Err != nil {
		t.Fatalf("%s: %v", sql, res.Err)
	}
	if len(res.Rows) == 0 {
		return ""
	}
	return string(res.Rows[0][0])
}

func TestClusterSettingsApplied(t *testing.T) {
	if got := query(t, cluster.ConnString("postgres"), "SHOW work_mem"); got != "7MB" {
		t.Errorf("work_mem = %q, want the --set value 7MB", got)
	}
	if got := query(t, cluster.ConnString("postgres"), "SHOW max_wal_size"); got != "8GB" {
		t.Errorf("max_wal_size = %q, want pgscale's default 8GB", got)
	}
	if got := query(t, cluster.ConnString("postgres"), "SHOW shared_preload_libraries"); !strings.Contains(got, "pg_stat_statements") {
		t.Errorf("shared_preload_libraries = %q, want pg_stat_statements preloaded", got)
	}
	if os.Geteuid() == 0 {
		if got := query(t, cluster.ConnString("postgres"), "SELECT pg_read_file('PG_VERSION') IS NOT NULL"); got != "t" {
			t.Errorf("server cannot read its own data directory")
		}
	}
}

func TestClusterTCP(t *testing.T) {
	if got := query(t, cluster.TCPConnString("postgres"), "SELECT 1"); got != "1" {
		t.Errorf("SELECT 1 over TCP = %q", got)
	}
}

func TestWrongPasswordIsAUsageErrorWithoutThePassword(t *testing.T) {
	query(t, cluster.ConnString("postgres"), "DROP ROLE IF EXISTS bench")
	query(t, cluster.ConnString("postgres"), "CREATE ROLE bench LOGIN PASSWORD 'right-horse'")
	dsn := "postgres://bench:wrong-battery@127.0.0.1:" + strconv.Itoa(cluster.Port) + "/postgres?sslmode=disable"
	cfg, err := target.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	_, err = pgconn.ConnectConfig(context.Background(), cfg)
	err = target.ClassifyConnectError(cfg, err)
	var ce *target.ConnectError
	if !errors.As(err, &ce) || !ce.Usage {
		t.Fatalf("wrong password: got %v, want a usage ConnectError", err)
	}
	if strings.Contains(err.Error(), "wrong-battery") {
		t.Errorf("error shows the password: %v", err)
	}
	if !strings.Contains(err.Error(), "password") {
		t.Errorf("error does not say what is wrong: %v", err)
	}
}

func TestUnreachableIsNotAUsageError(t *testing.T) {
	cfg, err := target.ParseDSN("host=/nonexistent-dir port=1 user=x dbname=y connect_timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	_, err = pgconn.ConnectConfig(context.Background(), cfg)
	err = target.ClassifyConnectError(cfg, err)
	var ce *target.ConnectError
	if !errors.As(err, &ce) || ce.Usage {
		t.Fatalf("unreachable server: got %#v, want a non-usage ConnectError", err)
	}
	if !strings.Contains(err.Error(), "no server is listening") {
		t.Errorf("message %q does not name the cause", err)
	}
}

func TestRestart(t *testing.T) {
	before := cluster.PID()
	if err := cluster.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	if after := cluster.PID(); after == 0 || after == before {
		t.Errorf("postmaster pid %d -> %d, want a new running server", before, after)
	}
	if got := query(t, cluster.ConnString("postgres"), "SELECT 1"); got != "1" {
		t.Errorf("after restart SELECT 1 = %q", got)
	}
}

// The directory named is said as the edge calls it (Words.PGBin).
func TestFindBinDirNamesWhatItSearched(t *testing.T) {
	_, err := target.FindBinDir("/no/such/dir", target.Words{PGBin: "the flag"})
	if !errors.Is(err, target.ErrNoBinaries) || !strings.HasSuffix(err.Error(), " at the flag /no/such/dir (it needs initdb and postgres)") {
		t.Errorf("FindBinDir(/no/such/dir) = %v", err)
	}
	_, err = target.FindBinDir("/no/such/dir", target.Words{})
	if !errors.Is(err, target.ErrNoBinaries) || !strings.HasSuffix(err.Error(), " at /no/such/dir (it needs initdb and postgres)") {
		t.Errorf("FindBinDir(/no/such/dir) without words = %v", err)
	}
}

func TestParseSetting(t *testing.T) {
	s, err := target.ParseSetting("shared_buffers = 2GB")
	if err != nil || s.Name != "shared_buffers" || s.Value != "2GB" {
		t.Errorf("ParseSetting = %+v, %v", s, err)
	}
	if _, err := target.ParseSetting("nonsense"); err == nil {
		t.Error("ParseSetting(nonsense) accepted")
	}
}
