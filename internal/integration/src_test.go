package integration_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/build"
	"github.com/pgscale/pgscale/internal/build/buildtest"
	"github.com/pgscale/pgscale/internal/cli"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/testenv"
)

// These tests run servers built from the PostgreSQL 15 source fixture
// (.ci/pg-source): base with 16 fast-path slots and fp21 with 21, found in
// the shared build cache (build.DefaultCacheDir) or built there once.

// parts18 is a table hash-partitioned into 18 partitions, each with an
// index: count(*) under the prepared protocol locks 19 relations, more
// than 16 fast-path slots hold and fewer than 21.
const parts18 = `DROP TABLE IF EXISTS fp;
CREATE TABLE fp (id int NOT NULL, v int) PARTITION BY HASH (id);
DO $$ BEGIN FOR i IN 0..17 LOOP
  EXECUTE format('CREATE TABLE fp_%s PARTITION OF fp FOR VALUES WITH (MODULUS 18, REMAINDER %s)', i, i);
END LOOP; END $$;
CREATE INDEX ON fp (id);
INSERT INTO fp SELECT g, g FROM generate_series(1, 1000) g;
ANALYZE fp;
`

// srcRepo returns the source fixture, skipping a short run outside CI.
func srcRepo(t *testing.T) string {
	t.Helper()
	testenv.Slow(t) // builds from source (minutes)
	return buildtest.PGSource(t)
}

func gitRev(t *testing.T, repo, rev string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", repo, "rev-parse", rev+"^{commit}").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

func writeFile(t *testing.T, path, text string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Two source builds in ab: each file records its build, and the lock
// probe takes the slot count from it: 16 and exhausted on base, 21 and not
// exhausted on fp21 with 19 relations locked per transaction.
func TestSrcTargetsInAB(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	repo := srcRepo(t)
	dir := t.TempDir()
	setup := writeFile(t, filepath.Join(dir, "parts.sql"), parts18)
	// The locks are held over the sleep too, where the probe's snapshots
	// find them.
	count := writeFile(t, filepath.Join(dir, "count.sql"), "BEGIN;\nSELECT count(*) FROM fp;\nSELECT pg_sleep(0.002);\nEND;\n")
	out := filepath.Join(dir, "ab")
	code, stdout, stderr := pgscale(t, "ab", "--target", "master=src:"+repo+"@base", "--target", "fp21=src:"+repo+"@fp21",
		"-f", count, "--setup", setup, "-c", "2", "-T", "2", "--rounds", "2", "--slice", "0", "--lock-snapshots", "8", "--out", out)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, lastLines(stderr, 20))
	}
	for _, want := range []string{"target master: " + repo + "@base is built", "target fp21: " + repo + "@fp21 is built"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, lastLines(stderr, 30))
		}
	}
	for _, tc := range []struct {
		name, rev string
		slots     int
		exhausted bool
	}{{"master", "base", 16, true}, {"fp21", "fp21", 21, false}} {
		f := readResult(t, filepath.Join(out, tc.name+".json"))
		b := f.Target.Build
		if b == nil {
			t.Fatalf("%s: no build in the target record", tc.name)
		}
		if b.Commit != gitRev(t, repo, tc.rev) || b.Rev != tc.rev || b.Mode != build.ModeCommit || len(b.Key) != 32 ||
			b.System != build.Autoconf || !contains(b.Configure, "--enable-debug") || b.Compiler == "" {
			t.Errorf("%s: build record %+v", tc.name, b)
		}
		if n, ok := b.FastPathSlots(); !ok || n != tc.slots {
			t.Errorf("%s: the build's fast-path slots %d (%v), want %d", tc.name, n, ok, tc.slots)
		}
		exhausted, most := 0, 0
		for _, s := range f.Steps {
			l := s.Probes.Locks()
			if l == nil || l.FastPathSlots != tc.slots || l.FastPathSlotsFrom != "build" {
				t.Fatalf("%s: lock probe %+v, want %d slots from the build", tc.name, l, tc.slots)
			}
			exhausted += l.Exhausted
			most = max(most, l.MaxFastPath)
		}
		if (exhausted > 0) != tc.exhausted || most < 16 {
			t.Errorf("%s: fast-path slots exhausted in %d backend snapshots, up to %d fast-path locks held; want exhausted %v",
				tc.name, exhausted, most, tc.exhausted)
		}
		code, text, _ := pgscale(t, "report", filepath.Join(out, tc.name+".json"))
		if want := "build:    " + repo + "@" + tc.rev + " (commit " + b.Commit[:7] + ")"; code != 0 || !strings.Contains(text, want) {
			t.Errorf("%s: the report's head does not say %q:\n%s", tc.name, want, lastLines(text, 100))
		}
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// A suite file's src: target runs a short cell, and the history records
// the commit the build was made from.
func TestSrcTargetInSuiteFile(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	repo := srcRepo(t)
	dir := t.TempDir()
	file := writeFile(t, filepath.Join(dir, "src.yaml"), `name: src
targets: ["fp21=src:`+repo+`@fp21"]
matrix:
  partitions: [18]
setup: |
  `+strings.ReplaceAll(strings.ReplaceAll(parts18, "\n", "\n  "), "18", "{{partitions}}")+`
scripts:
  - name: count
    sql: SELECT count(*) FROM fp;
clients: [2]
duration: 1s
`)
	out, store := filepath.Join(dir, "bundle"), filepath.Join(dir, "history.db")
	code, stdout, stderr := pgscale(t, "suite", file, "--out", out, "--store", store)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, lastLines(stderr, 20))
	}
	commit := gitRev(t, repo, "fp21")
	if want := "commit " + commit[:7] + " from the build of " + repo + "@fp21"; !strings.Contains(stdout, want) {
		t.Errorf("the stored line does not say %q:\n%s", want, stdout)
	}
	x, err := result.ReadSuiteIndex(out)
	if err != nil || len(x.Cells) != 1 || x.Cells[0].Status != result.CellComplete {
		t.Fatalf("index %+v: %v", x, err)
	}
	f := readResult(t, filepath.Join(out, x.Cells[0].Dir, "fp21.json"))
	if l := f.Steps[0].Probes.Locks(); l == nil || l.FastPathSlots != 21 || l.FastPathSlotsFrom != "build" || l.Exhausted != 0 {
		t.Errorf("locks %+v: want 21 slots from the build, none exhausted", l)
	}
}

// run --pg-src runs the ephemeral cluster from a source build.
func TestRunPgSrc(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	repo := srcRepo(t)
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := pgscale(t, "run", "--pg-src", repo+"@fp21", "-S", "-c", "1", "-T", "1", "--out", out)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, lastLines(stderr, 20))
	}
	f := readResult(t, out)
	if b := f.Target.Build; b == nil || b.Commit != gitRev(t, repo, "fp21") || !strings.HasSuffix(f.Target.BinDir, filepath.Join(b.Key, "install", "bin")) {
		t.Errorf("target %+v, build %+v", f.Target, f.Target.Build)
	}
	code, _, stderr = pgscale(t, "run", "--pg-src", repo+"@fp21", "--pg-bin", "/usr/lib/postgresql/15/bin")
	if code != cli.ExitUsage || !strings.Contains(stderr, "--pg-src") {
		t.Errorf("--pg-src with --pg-bin: exit %d: %s", code, stderr)
	}
}

// A patch that does not apply fails the build: one line naming the target,
// the phase and the log, then the log's tail; exit 2, before any cluster
// starts, and nothing cached.
func TestSrcBuildFailure(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	repo := srcRepo(t)
	cache, err := build.DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	before, err := build.List(cache)
	if err != nil {
		t.Fatal(err)
	}
	patch := writeFile(t, filepath.Join(t.TempDir(), "bad.patch"), `--- a/src/include/storage/proc.h
+++ b/src/include/storage/proc.h
@@ -1,3 +1,3 @@
-this line is not in proc.h
+nor is this one
 and neither is this
`)
	spec := "bad=src:" + repo + "@base+" + patch
	for _, args := range [][]string{
		{"build", spec},
		{"ab", "--target", "a=settings:", "--target", spec, "-S", "-c", "1", "-T", "1"},
	} {
		code, stdout, stderr := pgscale(t, args...)
		// Progress lines come first; the error is the last thing said.
		_, errText, _ := strings.Cut(stderr, "pgscale: ")
		first, tail, _ := strings.Cut("pgscale: "+errText, "\n")
		if code != cli.ExitUsage || !strings.HasPrefix(first, "pgscale: target bad: building "+repo+"@base+"+patch+" failed in phase patch: ") ||
			!strings.Contains(first, "(log: "+filepath.Join(cache, "failed")) {
			t.Errorf("%s: exit %d, first line %q\n%s", args[0], code, first, stdout)
		}
		if !strings.Contains(tail, "    | ") || strings.Contains(stderr, "starting an ephemeral") {
			t.Errorf("%s: no log tail after the line, or a cluster started:\n%s", args[0], stderr)
		}
	}
	after, err := build.List(cache)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range after {
		if len(e.Manifest.Source.Patches) > 0 && e.Manifest.Source.Patches[0].Path == patch {
			t.Errorf("the failed build is in the cache: %s", e.Root)
		}
	}
	if len(after) != len(before) {
		t.Logf("cache entries %d before, %d after (other tests may build)", len(before), len(after))
	}
}

// pgscale build finds a build in the cache and says so; --list shows it;
// --prune removes what it is told to, on a cache of its own.
func TestBuildListAndPrune(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	repo := srcRepo(t)
	code, stdout, stderr := pgscale(t, "build", "master=src:"+repo+"@base", "src:"+repo+"@fp21")
	if code != cli.ExitOK || !strings.Contains(stdout, "master: build ") || !strings.Contains(stdout, "fast-path slots 16") ||
		!strings.Contains(stdout, repo+"@fp21: build ") || !strings.Contains(stdout, "fast-path slots 21") {
		t.Fatalf("build: exit %d\n%s\n%s", code, stdout, stderr)
	}
	key := strings.Fields(strings.SplitN(stdout, "master: build ", 2)[1])[0]
	code, stdout, _ = pgscale(t, "build", "--list")
	if code != cli.ExitOK || !strings.Contains(stdout, key) || !strings.Contains(stdout, repo+"@base") {
		t.Errorf("--list: exit %d, no %s:\n%s", code, key, stdout)
	}

	// A cache of its own holding a copy of that build.
	cache, err := build.DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	mine := t.TempDir()
	if err := exec.Command("cp", "-a", filepath.Join(cache, key), filepath.Join(mine, key)).Run(); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ = pgscale(t, "build", "--list", "--build-cache", mine)
	if code != cli.ExitOK || !strings.Contains(stdout, "1 builds") || !strings.Contains(stdout, key) {
		t.Errorf("--list --build-cache: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = pgscale(t, "build", "--prune", "--build-cache", mine, "master=src:"+repo+"@base")
	if code != cli.ExitOK || !strings.Contains(stdout, "0 removed") {
		t.Errorf("--prune keeping master: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = pgscale(t, "build", "--prune", "--build-cache", mine)
	if code != cli.ExitOK || !strings.Contains(stdout, "0 removed") {
		t.Errorf("--prune (unused for 30 days): exit %d\n%s", code, stdout)
	}
	code, stdout, _ = pgscale(t, "build", "--prune", "--all", "--build-cache", mine)
	if _, err := os.Stat(filepath.Join(mine, key)); code != cli.ExitOK || !strings.Contains(stdout, "removed "+key) || err == nil {
		t.Errorf("--prune --all: exit %d, entry left: %v\n%s", code, err == nil, stdout)
	}
	for _, args := range [][]string{{"build"}, {"build", "--list", "--prune"}, {"build", "--all"}, {"build", "x=settings:"}} {
		if code, _, stderr := pgscale(t, args...); code != cli.ExitUsage {
			t.Errorf("%q: exit %d, want 2: %s", args, code, stderr)
		}
	}
}

// --matrix replaces an axis's values: the fastpath preset at 18
// partitions; a name that is no axis is a usage error.
func TestSuiteMatrixOverride(t *testing.T) {
	trackTime(t)
	code, stdout, stderr := pgscale(t, "suite", "--preset", "fastpath", "--quick", "--matrix", "partitions=18", "--dry-run")
	if code != cli.ExitOK || !strings.Contains(stdout, "partitions=18,rows=1000") || strings.Contains(stdout, "partitions=32") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
	code, _, stderr = pgscale(t, "suite", "--preset", "fastpath", "--matrix", "parts=18", "--dry-run")
	if code != cli.ExitUsage || !strings.Contains(stderr, "no such axis (axes: partitions, rows)") {
		t.Errorf("--matrix parts=18: exit %d: %s", code, stderr)
	}
}
