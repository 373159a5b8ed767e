package build_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/build"
	"github.com/pgscale/pgscale/internal/build/buildtest"
	"github.com/pgscale/pgscale/internal/testenv"
)

// A pooler built by its own command at two revisions of the fixture: two
// keys, two programs that run.
func TestPgBouncerBuild(t *testing.T) {
	testenv.Slow(t) // builds from source (minutes)
	// Beside the PostgreSQL builds of .ci/run's warm-up (69 s of its 9.5
	// minutes cold, most of it configure and make on one core).
	t.Parallel()
	repo := buildtest.PgBouncerSource(t)
	b := buildtest.Builder(t)
	keys := map[string]bool{}
	for _, rev := range []string{"base", "slow"} {
		bld, err := b.Build(context.Background(), build.Command{
			Name:   "pgbouncer@" + rev,
			Source: build.Source{Path: repo, Rev: rev},
			Run:    "./configure --without-openssl && make",
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %s (cached %v, build took %.0fs)", rev, bld.Key, bld.Cached, bld.Manifest.Seconds)
		keys[bld.Key] = true
		out, err := exec.Command(filepath.Join(bld.Dir, "pgbouncer"), "--version").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "PgBouncer 1.") {
			t.Errorf("pgbouncer --version: %q, %v", out, err)
		}
	}
	if len(keys) != 2 {
		t.Error("base and slow share a key")
	}
}
