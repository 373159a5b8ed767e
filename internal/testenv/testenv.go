// Package testenv holds the rules every test package shares: a test that
// needs something of the machine (server binaries, pgbouncer, chromium,
// valgrind, perf) skips where it is missing, unless CI=true, where it
// fails; and a test of the full suite alone says so (Slow), which
// go test -short skips.
package testenv

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// CI reports whether the tests run in CI (the variable CI is "true"), where
// nothing a test needs may be missing.
func CI() bool { return os.Getenv("CI") == "true" }

// Need lets t run when err is nil; otherwise err says what is missing, and
// t skips, or fails with CI=true.
func Need(t testing.TB, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if CI() {
		t.Fatalf("%v (CI=true: a missing dependency fails the test)", err)
	}
	t.Skip(err)
}

// NeedProgram is Need for an executable on PATH, which it returns; hint
// says how to install it ("Debian: apt-get install valgrind").
func NeedProgram(t testing.TB, name, hint string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		err = fmt.Errorf("%s is not installed (%s)", name, hint)
	}
	Need(t, err)
	return path
}

// Missing is Need for a whole test package, from TestMain, when err says
// what is missing: it prints err and returns the exit code, 1 with
// CI=true, else 0 with the package's tests skipped.
func Missing(err error) int {
	if CI() {
		fmt.Fprintf(os.Stderr, "FAIL: %v (CI=true: a missing dependency fails the test)\n", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "SKIP: %v\n", err)
	return 0
}

// The two tiers. go test -short, the loop a developer runs all day, runs
// each package's unit tests, goldens and quick tests against its one
// shared cluster; the full suite (go test -p 1 ./..., CI's) runs every test.
// A test of the full suite alone says so first, with Slow or, where the
// reason is one of these kinds, Simulation or Browser; no test reads
// testing.Short itself (TestOneTieringConvention), so the skip and its
// message are the same everywhere (docs/architecture.md, "Tests").

// Slow marks a test of the full suite alone: go test -short skips it.
// Called after part of a test, it leaves the rest to the full suite.
func Slow(t testing.TB) {
	t.Helper()
	skipShort(t, "slow")
}

// Simulation marks a statistical simulation (a rate over many simulated
// runs): the full suite alone runs it.
func Simulation(t testing.TB) {
	t.Helper()
	skipShort(t, "a simulation")
}

// Browser marks a test that opens a page in a real browser: the full
// suite alone runs it.
func Browser(t testing.TB) {
	t.Helper()
	skipShort(t, "a browser run")
}

// Short reports whether go test runs the quick tier (-short). It is for a
// TestMain, which has no t, to leave out starting what only the full
// suite's tests use (a cluster, a browser); a test calls Slow instead.
// It parses the command line if TestMain has not: register the package's
// own flags (golden.RegisterFlag) first.
func Short() bool {
	if !flag.Parsed() {
		flag.Parse()
	}
	return testing.Short()
}

func skipShort(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skip(what + ": left to the full suite (go test without -short)")
	}
}
