// Package testenv holds the one rule for tests that need something of the
// machine (server binaries, pgbouncer, chromium, valgrind, perf): where it
// is missing the test skips, unless CI=true, where it fails.
package testenv

import (
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

// Slow marks a test of the full suite alone: go test -short, the loop a
// developer runs all day, skips it (docs/architecture.md). Each package
// keeps its unit tests, goldens and one real-server smoke test in -short.
func Slow(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("slow: the full suite runs it (go test without -short)")
	}
}
