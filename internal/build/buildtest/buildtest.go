// Package buildtest gives tests the PostgreSQL source fixture that
// .ci/pg-source makes and the build cache tests share, so a CI run builds
// each key once however many packages build it.
package buildtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/pgscale/pgscale/internal/build"
)

// PGSource returns the git repository .ci/pg-source makes ($PGSCALE_PG_SOURCE,
// else fixtures/postgresql-15 in pgscale's user cache directory), with tags
// base and fp21. Without it the test skips, or fails when CI=true.
func PGSource(t testing.TB) string {
	t.Helper()
	return fixture(t, "PGSCALE_PG_SOURCE", "postgresql-15", ".ci/pg-source", "fp21")
}

// PGBisectSource returns the PostgreSQL source fixture with the commit
// lines .ci/pg-bisect-source adds on top of base (tags bisect,
// bisect-halves and bisect-broken). Without them the test skips, or fails
// when CI=true.
func PGBisectSource(t testing.TB) string {
	t.Helper()
	return fixture(t, "PGSCALE_PG_SOURCE", "postgresql-15", ".ci/pg-bisect-source", "bisect-broken")
}

// PgBouncerSource returns the git repository .ci/pgbouncer-source makes
// ($PGSCALE_PGBOUNCER_SOURCE, else fixtures/pgbouncer beside the
// PostgreSQL one), with tags base and slow. Without it the test skips, or
// fails when CI=true.
func PgBouncerSource(t testing.TB) string {
	t.Helper()
	return PgBouncerSourceWith(t, "slow")
}

// PgBouncerSourceWith is PgBouncerSource for a test that needs the
// fixture's tag tag (few, added after base and slow).
func PgBouncerSourceWith(t testing.TB, tag string) string {
	t.Helper()
	return fixture(t, "PGSCALE_PGBOUNCER_SOURCE", "pgbouncer", ".ci/pgbouncer-source", tag)
}

// PgBouncerBisectSource returns the pgbouncer source fixture with the
// lines .ci/pgbouncer-bisect-source adds on top of base (tags bisect and
// bisect-short). Without them the test skips, or fails when CI=true.
func PgBouncerBisectSource(t testing.TB) string {
	t.Helper()
	return fixture(t, "PGSCALE_PGBOUNCER_SOURCE", "pgbouncer", ".ci/pgbouncer-bisect-source", "bisect-short")
}

// ExtSource returns the git repository .ci/ext-source makes
// ($PGSCALE_EXT_SOURCE, else fixtures/pg_rational beside the PostgreSQL
// one): Debian's pg_rational, a PGXS extension, with tags base and slow
// (a loop in rational_add). Without it the test skips, or fails when
// CI=true.
func ExtSource(t testing.TB) string {
	t.Helper()
	return fixture(t, "PGSCALE_EXT_SOURCE", "pg_rational", ".ci/ext-source", "slow")
}

func fixture(t testing.TB, env, name, script, tag string) string {
	t.Helper()
	dir := os.Getenv(env)
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			t.Fatalf("no user cache directory for the %s fixture: %v", name, err)
		}
		dir = filepath.Join(cache, "pgscale", "fixtures", name)
	}
	if exec.Command("git", "-C", dir, "rev-parse", "-q", "--verify", "refs/tags/"+tag).Run() != nil {
		msg := "no " + name + " source fixture at " + dir + " (with tag " + tag + "): run " + script
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return dir
}

// Builder returns a builder on the shared cache (build.DefaultCacheDir:
// $PGSCALE_BUILD_CACHE when set) with one job per CPU, logging its phases to t.
func Builder(t testing.TB) *build.Builder {
	t.Helper()
	dir, err := build.DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	return &build.Builder{Cache: dir, Progress: Log(t)}
}

// Log returns a progress function that logs each phase's end to t.
func Log(t testing.TB) func(build.Event) {
	return func(e build.Event) {
		if e.Done {
			t.Logf("build %s %s: %s done in %s", e.Name, e.Key[:8], e.Phase, e.Elapsed.Round(1e6))
		}
	}
}
