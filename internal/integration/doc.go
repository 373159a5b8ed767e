// Package integration holds no code, only the end-to-end tests of the
// command line: pgscale run, ab, suite, pgbench, history and report as a
// user runs them, in-process or as the built binary, against one shared
// server (and the poolers, proxies and Valgrind runs the commands start
// themselves). They are the slow part of the full suite; go test -short
// keeps the quick ones and one smoke run. Each test's time is printed at
// the end of a verbose run (go test -v ./internal/integration), and
// written to the file $PGSCALE_TEST_TIMES names, as .ci/run prints it.
package integration
