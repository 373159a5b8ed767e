// Package targettest starts one real ephemeral PostgreSQL cluster for a test
// package (from TestMain) and fails if a server process outlives it.
package targettest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/procfs"

	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/testenv"
)

// Run is the body of a TestMain whose tests need PostgreSQL. It starts a
// cluster with opts, hands it to use (which stores it for the tests), runs the
// tests, stops the cluster and returns the exit code. Without server binaries
// it skips the package, unless CI=true, where that is a failure (testenv).
func Run(m *testing.M, opts target.Options, use func(*target.Cluster)) int {
	if _, err := target.FindBinDir(opts.BinDir, target.Words{}); err != nil {
		return testenv.Missing(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	c, err := target.Start(ctx, opts)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: start ephemeral cluster: %v\n", err)
		if c != nil {
			c.Stop()
		}
		return 1
	}
	pgid := c.PID()
	use(c)
	code := m.Run()
	if err := c.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: stop cluster: %v\n", err)
		code = 1
	}
	if left := ProcessesInGroup(pgid); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: server processes outlived the test package: %v\n", left)
		code = 1
	}
	if _, err := os.Stat(c.Dir); err == nil {
		fmt.Fprintf(os.Stderr, "FAIL: cluster directory %s was not removed\n", c.Dir)
		code = 1
	}
	return code
}

// NeedPgBouncer skips t when pgbouncer is not installed, unless CI=true,
// where that is a failure (testenv).
func NeedPgBouncer(t testing.TB) {
	t.Helper()
	_, err := target.FindPgBouncer("")
	testenv.Need(t, err)
}

// NeedPgpool skips t when pgpool-II (Debian: pgpool2) is not installed,
// unless CI=true, where that is a failure (testenv).
func NeedPgpool(t testing.TB) {
	t.Helper()
	for _, p := range []string{"/usr/sbin/pgpool", "/usr/local/bin/pgpool"} {
		if _, err := os.Stat(p); err == nil {
			return
		}
	}
	testenv.NeedProgram(t, "pgpool", "Debian: apt-get install pgpool2")
}

// Example is the path of one of the repository's example proxy
// definitions (examples/proxy/NAME.yaml), from a test in any package.
func Example(t testing.TB, name string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for ; dir != "/"; dir = filepath.Dir(dir) {
		p := filepath.Join(dir, "examples", "proxy", name+".yaml")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Fatalf("no examples/proxy/%s.yaml above the test's directory", name)
	return ""
}

// ProcessesInGroup lists the live processes in process group pgid. An
// ephemeral server runs in its own group, so this finds every server
// process, orphans included.
func ProcessesInGroup(pgid int) []int {
	if pgid == 0 {
		return nil
	}
	procs, err := procfs.AllProcs()
	if err != nil {
		return nil
	}
	var out []int
	for _, p := range procs {
		st, err := p.Stat()
		if err == nil && st.PGRP == pgid && st.State != "Z" {
			out = append(out, p.PID)
		}
	}
	return out
}
