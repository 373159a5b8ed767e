package build_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/build"
	"github.com/pgscale/pgscale/internal/build/buildtest"
	"github.com/pgscale/pgscale/internal/testenv"
)

// The base build is made once per test process (and once per cache: a
// second process finds it there).
var base struct {
	once   sync.Once
	build  *build.Build
	err    error
	phases []string
	took   time.Duration
}

func baseBuild(t *testing.T) (*build.Build, []string) {
	t.Helper()
	testenv.Slow(t) // builds from source (minutes)
	repo := buildtest.PGSource(t)
	base.once.Do(func() {
		b := buildtest.Builder(t)
		log := b.Progress
		b.Progress = func(e build.Event) {
			log(e)
			if e.Done {
				base.phases = append(base.phases, e.Phase)
			}
		}
		start := time.Now()
		base.build, base.err = b.Build(context.Background(), build.Postgres{Name: "base", Source: build.Source{Path: repo, Rev: "base"}})
		base.took = time.Since(start)
	})
	if base.err != nil {
		t.Fatal(base.err)
	}
	return base.build, base.phases
}

func TestPostgresBuild(t *testing.T) {
	t.Parallel()
	bld, phases := baseBuild(t)
	repo := buildtest.PGSource(t)
	t.Logf("base: %s in %s (cached %v, build took %.0fs: %v)", bld.Key, base.took.Round(time.Millisecond), bld.Cached, bld.Manifest.Seconds, bld.Manifest.Phases)
	if bld.Cached {
		if !slices.Equal(phases, []string{build.PhaseCached}) {
			t.Errorf("cached build's phases %v", phases)
		}
	} else {
		want := []string{build.PhaseExport, build.PhaseConfigure, build.PhaseMake, build.PhaseInstall, build.PhaseContrib, build.PhaseCheck}
		if !slices.Equal(phases, want) {
			t.Errorf("phases %v, want %v", phases, want)
		}
	}
	m := bld.Manifest
	if m.Kind != build.KindPostgres || m.System != build.Autoconf || m.Source.Mode != build.ModeCommit || m.Source.Rev != "base" {
		t.Errorf("manifest %+v", m)
	}
	if tree := runGit(t, repo, "rev-parse", "base^{tree}"); m.Source.Tree != tree {
		t.Errorf("tree %s, git says %s", m.Source.Tree, tree)
	}
	if commit := runGit(t, repo, "rev-parse", "base^{commit}"); m.Source.Commit != commit {
		t.Errorf("commit %s, git says %s", m.Source.Commit, commit)
	}
	if got := m.Constants["FP_LOCK_SLOTS_PER_BACKEND"]; got != 16 {
		t.Errorf("FP_LOCK_SLOTS_PER_BACKEND %d, want 16", got)
	}
	for _, a := range []string{"--enable-debug", "--disable-cassert", "CFLAGS=-O2"} {
		if !slices.Contains(m.Configure, a) {
			t.Errorf("configure %v lacks %s", m.Configure, a)
		}
	}
	if !slices.Equal(m.Contrib, []string{"pg_stat_statements"}) || m.Compiler == "" || m.Key != bld.Key || m.Created.IsZero() {
		t.Errorf("manifest %+v", m)
	}
	t.Logf("notes: %v; compiler %s; ccache %v", m.Notes, m.Compiler, m.CCache)
	out, err := exec.Command(filepath.Join(bld.BinDir(), "postgres"), "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "postgres (PostgreSQL) 15.") || strings.TrimSpace(string(out)) != m.Version {
		t.Errorf("postgres --version: %q, %v; manifest %q", out, err, m.Version)
	}
	pkglib := pgConfig(t, bld, "--pkglibdir")
	share := pgConfig(t, bld, "--sharedir")
	for _, f := range []string{filepath.Join(pkglib, "pg_stat_statements.so"), filepath.Join(share, "extension", "pg_stat_statements.control")} {
		if _, err := os.Stat(f); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(filepath.Join(bld.Root, "build.log")); err != nil {
		t.Error(err)
	}
	if st := runGit(t, repo, "status", "--porcelain"); st != "" {
		t.Errorf("the fixture's checkout changed:\n%s", st)
	}
}

func pgConfig(t *testing.T, bld *build.Build, arg string) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(bld.BinDir(), "pg_config"), arg).Output()
	if err != nil {
		t.Fatalf("pg_config %s: %v", arg, err)
	}
	dir := strings.TrimSpace(string(out))
	if !strings.HasPrefix(dir, bld.Dir+"/") {
		t.Errorf("pg_config %s = %s, outside the build %s", arg, dir, bld.Dir)
	}
	return dir
}

func TestPostgresCacheHit(t *testing.T) {
	first, _ := baseBuild(t)
	repo := buildtest.PGSource(t)
	b := buildtest.Builder(t)
	var phases []string
	b.Progress = func(e build.Event) { phases = append(phases, e.Phase) }
	start := time.Now()
	bld, err := b.Build(context.Background(), build.Postgres{Source: build.Source{Path: repo, Rev: "base"}})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cache hit in %s", took)
	if !bld.Cached || bld.Root != first.Root || !slices.Equal(phases, []string{build.PhaseCached}) {
		t.Errorf("second build: cached %v root %s phases %v; want the cached %s", bld.Cached, bld.Root, phases, first.Root)
	}
	if took > 10*time.Second {
		t.Errorf("a cache hit took %s", took)
	}
}

func TestPostgresFP21(t *testing.T) {
	t.Parallel()
	first, _ := baseBuild(t)
	repo := buildtest.PGSource(t)
	b := buildtest.Builder(t)
	start := time.Now()
	bld, err := b.Build(context.Background(), build.Postgres{Name: "fp21", Source: build.Source{Path: repo, Rev: "fp21"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("fp21: %s in %s (cached %v, build took %.0fs: %v)", bld.Key, time.Since(start).Round(time.Millisecond), bld.Cached, bld.Manifest.Seconds, bld.Manifest.Phases)
	if bld.Key == first.Key {
		t.Fatal("fp21 has base's key")
	}
	if got, ok := bld.Manifest.FastPathSlots(); got != 21 || !ok {
		t.Errorf("fast-path slots %d (%v), want 21", got, ok)
	}
}

// appendPatch returns a patch file adding line at the end of path as it is
// at rev in repo.
func appendPatch(t *testing.T, repo, rev, path, line string) string {
	t.Helper()
	body := runGit(t, repo, "show", rev+":"+path)
	lines := strings.Split(body, "\n")
	n := len(lines)
	ctx := lines[n-3:]
	p := fmt.Sprintf("--- a/%s\n+++ b/%s\n@@ -%d,3 +%d,4 @@\n %s\n %s\n %s\n+%s\n", path, path, n-2, n-2, ctx[0], ctx[1], ctx[2], line)
	f := filepath.Join(t.TempDir(), "append.patch")
	if err := os.WriteFile(f, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// failed checks that a failed build of spec is an *Error of the phase,
// with the log and its tail, and that nothing of it is in the cache.
func failed(t *testing.T, b *build.Builder, spec build.Spec, err error, phase string) *build.Error {
	t.Helper()
	var be *build.Error
	if !errors.As(err, &be) {
		t.Fatalf("got %v, want a *build.Error", err)
	}
	t.Logf("%v\n%s", be, strings.Join(be.Tail, "\n"))
	if be.Phase != phase {
		t.Errorf("failed in phase %q, want %q", be.Phase, phase)
	}
	if _, err := os.Stat(be.Log); err != nil || len(be.Tail) == 0 {
		t.Errorf("log %q (%v), tail %d lines", be.Log, err, len(be.Tail))
	}
	if bld, err := b.Lookup(context.Background(), spec); bld != nil || err != nil {
		t.Errorf("after the failure the cache holds %v (%v)", bld, err)
	}
	if _, err := os.Stat(filepath.Join(b.Cache, be.Key)); err == nil {
		t.Errorf("the failed build's entry %s exists", be.Key)
	}
	left, _ := filepath.Glob(filepath.Join(b.Cache, "tmp", be.Key+"-*"))
	if len(left) > 0 {
		t.Errorf("scratch left: %v", left)
	}
	return be
}

func TestPostgresPatchDoesNotApply(t *testing.T) {
	testenv.Slow(t) // builds from source (minutes)
	repo := buildtest.PGSource(t)
	bad := filepath.Join(t.TempDir(), "bad.patch")
	os.WriteFile(bad, []byte("--- a/src/include/storage/proc.h\n+++ b/src/include/storage/proc.h\n@@ -83,1 +83,1 @@\n-#define\t\tFP_LOCK_SLOTS_PER_BACKEND 99\n+#define\t\tFP_LOCK_SLOTS_PER_BACKEND 21\n"), 0o644)
	b := buildtest.Builder(t)
	spec := build.Postgres{Name: "bad", Source: build.Source{Path: repo, Rev: "base", Patches: []string{bad}}}
	_, err := b.Build(context.Background(), spec)
	be := failed(t, b, spec, err, build.PhasePatch)
	if !strings.Contains(be.Error(), "bad.patch does not apply") {
		t.Errorf("message %q does not name the patch", be.Error())
	}
}

func TestPostgresSyntaxErrorFailsInMake(t *testing.T) {
	testenv.Slow(t) // builds from source (minutes)
	t.Parallel()    // its configure (45 s) beside the other failing build's: configure keeps one core
	repo := buildtest.PGSource(t)
	// src/common is compiled first, so the error comes early.
	patch := appendPatch(t, repo, "base", "src/common/string.c", "int pgscale_syntax_error(void) { return 1 }")
	b := buildtest.Builder(t)
	spec := build.Postgres{Name: "broken", Source: build.Source{Path: repo, Rev: "base", Patches: []string{patch}}}
	_, err := b.Build(context.Background(), spec)
	be := failed(t, b, spec, err, build.PhaseMake)
	if !strings.Contains(strings.Join(be.Tail, "\n"), "string.c") {
		t.Errorf("the tail does not name string.c")
	}
}

func TestPostgresCancel(t *testing.T) {
	testenv.Slow(t) // builds from source (minutes)
	t.Parallel()
	repo := buildtest.PGSource(t)
	patch := appendPatch(t, repo, "base", "src/common/string.c", "/* pgscale: a build interrupted in make */")
	b := buildtest.Builder(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := b.Progress
	b.Progress = func(e build.Event) {
		log(e)
		if e.Phase == build.PhaseMake && !e.Done {
			time.AfterFunc(3*time.Second, cancel)
		}
	}
	spec := build.Postgres{Name: "cancelled", Source: build.Source{Path: repo, Rev: "base", Patches: []string{patch}}}
	_, err := b.Build(ctx, spec)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	be := failed(t, b, spec, err, build.PhaseMake)
	procs, _ := filepath.Glob("/proc/[0-9]*/cwd")
	for _, p := range procs {
		if cwd, err := os.Readlink(p); err == nil && strings.Contains(cwd, be.Key) {
			t.Errorf("process %s still runs in %s", filepath.Base(filepath.Dir(p)), cwd)
		}
	}
}

// A working tree's key is its commit's while it is clean, and changes with
// an uncommitted change; the key is computed from the files, not by git.
func TestPostgresWorktreeKey(t *testing.T) {
	testenv.Slow(t) // builds from source (minutes)
	repo := buildtest.PGSource(t)
	clone := filepath.Join(t.TempDir(), "pg")
	runGit(t, repo, "clone", "-q", "--shared", "--branch", "fp21", repo, clone)
	b := buildtest.Builder(t)
	ctx := context.Background()
	key := func(rev string) string {
		k, err := b.Key(ctx, build.Postgres{Source: build.Source{Path: clone, Rev: rev}})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	fp21, wt := key("fp21"), key("")
	if wt != fp21 {
		t.Errorf("the clean working tree's key %s differs from fp21's %s", wt, fp21)
	}
	h := filepath.Join(clone, "src/include/storage/proc.h")
	body, _ := os.ReadFile(h)
	os.WriteFile(h, []byte(strings.Replace(string(body), "FP_LOCK_SLOTS_PER_BACKEND 21", "FP_LOCK_SLOTS_PER_BACKEND 20", 1)), 0o644)
	if changed := key(""); changed == fp21 {
		t.Error("an uncommitted change to proc.h left the key as fp21's")
	}
	if st := runGit(t, clone, "status", "--porcelain"); st != "M src/include/storage/proc.h" {
		t.Errorf("status %q, want only the change made", st)
	}
}

// An extension is built with PGXS against a copy of the cached server; a
// new commit of the extension builds only the extension.
func TestPostgresExtension(t *testing.T) {
	server, _ := baseBuild(t)
	repo := buildtest.PGSource(t)
	ext := gitRepo(t, map[string]string{
		"Makefile": "MODULES = pgscale_test_ext\nEXTENSION = pgscale_test_ext\nDATA = pgscale_test_ext--1.0.sql\n" +
			"PG_CONFIG ?= pg_config\nPGXS := $(shell $(PG_CONFIG) --pgxs)\ninclude $(PGXS)\n",
		"pgscale_test_ext.c": "#include \"postgres.h\"\n#include \"fmgr.h\"\nPG_MODULE_MAGIC;\nPG_FUNCTION_INFO_V1(add_one);\n" +
			"Datum add_one(PG_FUNCTION_ARGS) { PG_RETURN_INT32(PG_GETARG_INT32(0) + 1); }\n",
		"pgscale_test_ext.control":  "default_version = '1.0'\nmodule_pathname = '$libdir/pgscale_test_ext'\nrelocatable = true\n",
		"pgscale_test_ext--1.0.sql": "CREATE FUNCTION add_one(int) RETURNS int AS 'MODULE_PATHNAME' LANGUAGE C STRICT;\n",
	})
	b := buildtest.Builder(t)
	ctx := context.Background()
	var phases []string
	log := b.Progress
	b.Progress = func(e build.Event) {
		log(e)
		if e.Done {
			phases = append(phases, e.Key[:8]+" "+e.Phase)
		}
	}
	spec := build.Postgres{Name: "with-ext", Source: build.Source{Path: repo, Rev: "base"}, Extensions: []build.Extension{{Source: build.Source{Path: ext, Rev: "HEAD"}}}}
	bld, err := b.Build(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	m := bld.Manifest
	if m.Base != server.Key || bld.Key == server.Key || len(m.Extensions) != 1 || m.Extensions[0].Name != "pgscale_test_ext" || !slices.Equal(m.Extensions[0].Controls, []string{"pgscale_test_ext"}) {
		t.Errorf("manifest base %s extensions %+v; want base %s and pgscale_test_ext", m.Base, m.Extensions, server.Key)
	}
	if m.Constants["FP_LOCK_SLOTS_PER_BACKEND"] != 16 || m.Version != server.Manifest.Version {
		t.Errorf("manifest constants %v version %q: want the server's", m.Constants, m.Version)
	}
	if _, err := os.Stat(filepath.Join(pgConfig(t, bld, "--pkglibdir"), "pgscale_test_ext.so")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(pgConfig(t, server, "--pkglibdir"), "pgscale_test_ext.so")); err == nil {
		t.Error("the extension was installed into the server's own build")
	}
	writeFiles(t, ext, map[string]string{"pgscale_test_ext.c": "#include \"postgres.h\"\n#include \"fmgr.h\"\nPG_MODULE_MAGIC;\nPG_FUNCTION_INFO_V1(add_one);\n" +
		"Datum add_one(PG_FUNCTION_ARGS) { PG_RETURN_INT32(PG_GETARG_INT32(0) + 2); }\n"})
	runGit(t, ext, "commit", "-q", "-a", "-m", "two")
	phases = nil
	bld2, err := b.Build(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if bld2.Key == bld.Key || bld2.Manifest.Base != server.Key {
		t.Errorf("new extension commit: key %s base %s", bld2.Key, bld2.Manifest.Base)
	}
	// (Unless an earlier run left this very build in the cache.)
	if !bld2.Cached && (!slices.Contains(phases, server.Key[:8]+" "+build.PhaseCached) || slices.Contains(phases, server.Key[:8]+" "+build.PhaseMake)) {
		t.Errorf("phases %v: want the server found in the cache", phases)
	}
	// PGXS's make arguments (make=) are the extension's: another key,
	// the same server, and what they say reaches the compiler.
	withMake := spec
	withMake.Extensions = []build.Extension{{Source: spec.Extensions[0].Source, Make: []string{"PG_CPPFLAGS=-DPGSCALE_MAKE_ARG=1"}}}
	bld3, err := b.Build(ctx, withMake)
	if err != nil {
		t.Fatal(err)
	}
	if bld3.Key == bld2.Key || bld3.Manifest.Base != server.Key || !slices.Equal(bld3.Manifest.Extensions[0].Make, withMake.Extensions[0].Make) {
		t.Errorf("make=: key %s (without: %s), base %s, record %+v", bld3.Key, bld2.Key, bld3.Manifest.Base, bld3.Manifest.Extensions)
	}
	if _, err := os.Stat(filepath.Join(pgConfig(t, bld3, "--pkglibdir"), "pgscale_test_ext.so")); err != nil {
		t.Error(err)
	}
	if log, _ := os.ReadFile(filepath.Join(bld3.Root, "build.log")); !bld3.Cached && !strings.Contains(string(log), "-DPGSCALE_MAKE_ARG=1 ") {
		t.Errorf("the compiler never saw PG_CPPFLAGS from make=:\n%s", log)
	}
}
