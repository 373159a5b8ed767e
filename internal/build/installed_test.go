package build_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/build"
	"github.com/pgscale/pgscale/internal/build/buildtest"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/testenv"
)

// loopExt is a PGXS extension with one SQL-callable C function; loops
// steps of work per call (0: none).
func loopExt(name, loops string) map[string]string {
	return map[string]string{
		"Makefile": "MODULES = " + name + "\nEXTENSION = " + name + "\nDATA = " + name + "--1.0.sql\n" +
			"PG_CONFIG ?= pg_config\nPGXS := $(shell $(PG_CONFIG) --pgxs)\ninclude $(PGXS)\n",
		name + ".c": "#include \"postgres.h\"\n#include \"fmgr.h\"\nPG_MODULE_MAGIC;\nPG_FUNCTION_INFO_V1(" + name + "_work);\n" +
			"Datum " + name + "_work(PG_FUNCTION_ARGS) { volatile uint32 h = 0; for (int i = 0; i < " + loops + "; i++) h = h * 31 + i;\n" +
			"  PG_RETURN_INT32(PG_GETARG_INT32(0) + 1 + (int32) (h & 0)); }\n",
		name + ".control":  "default_version = '1.0'\nmodule_pathname = '$libdir/" + name + "'\nrelocatable = true\n",
		name + "--1.0.sql": "CREATE FUNCTION " + name + "_work(int) RETURNS int AS 'MODULE_PATHNAME' LANGUAGE C STRICT;\n",
	}
}

// installedBin is the installed server's bin directory, and skips (or
// fails, with CI=true) when it or its development files are missing.
func installedBin(t *testing.T) string {
	t.Helper()
	bin, err := target.FindBinDir("", target.Words{})
	testenv.Need(t, err)
	out, err := exec.Command(filepath.Join(bin, "pg_config"), "--pgxs").Output()
	if err == nil {
		_, err = os.Stat(strings.TrimSpace(string(out)))
	}
	if err != nil {
		testenv.Need(t, errors.New("the installed server's PGXS is missing (Debian: apt-get install postgresql-server-dev-15)"))
	}
	return bin
}

// An extension is built with the installed server's PGXS and installed
// into a copy of the server's tree, never the system's; the copy's server
// finds the copy's files; the build is cached, keyed by the extension's
// commit and make arguments.
func TestInstalledExtension(t *testing.T) {
	testenv.Slow(t) // compiles with the server's headers into a copy of its tree
	bin := installedBin(t)
	ext := gitRepo(t, loopExt("pgscale_inst", "0"))
	b := &build.Builder{Cache: t.TempDir(), Progress: buildtest.Log(t)}
	ctx := context.Background()
	spec := build.Installed{Name: "inst", BinDir: bin, Extensions: []build.Extension{{Source: build.Source{Path: ext, Rev: "HEAD"}}}}
	bld, err := b.Build(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	m := bld.Manifest
	if m.Kind != build.KindInstalled || len(m.Extensions) != 1 || !slices.Equal(m.Extensions[0].Controls, []string{"pgscale_inst"}) {
		t.Errorf("manifest kind %s extensions %+v", m.Kind, m.Extensions)
	}
	sys := func(flag string) string {
		out, err := exec.Command(filepath.Join(bin, "pg_config"), flag).Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	if _, err := os.Stat(filepath.Join(sys("--pkglibdir"), "pgscale_inst.so")); err == nil {
		t.Fatal("the extension was installed into the system's pkglibdir")
	}
	if want := filepath.Join(bld.Dir, sys("--bindir")); bld.BinDir() != want {
		t.Errorf("bin dir %s, want %s", bld.BinDir(), want)
	}
	copyConfig := filepath.Join(bld.BinDir(), "pg_config")
	out, err := exec.Command(copyConfig, "--pkglibdir").Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != filepath.Join(bld.Dir, sys("--pkglibdir")) {
		t.Errorf("the copy's pkglibdir is %s: the copy's server would not load the copy's modules", got)
	}
	for _, f := range []string{filepath.Join(sys("--pkglibdir"), "pgscale_inst.so"), filepath.Join(sys("--sharedir"), "extension", "pgscale_inst.control")} {
		if _, err := os.Stat(filepath.Join(bld.Dir, f)); err != nil {
			t.Error(err)
		}
	}
	if fi, err := os.Lstat(filepath.Join(bld.BinDir(), "postgres")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the copy's postgres is not a regular file (%v): PostgreSQL would follow a link back to the system's directories", err)
	}

	again, err := b.Build(ctx, spec)
	if err != nil || !again.Cached || again.Key != bld.Key {
		t.Errorf("second build: %v, cached %v, key %s want %s", err, again != nil && again.Cached, keyOf(again), bld.Key)
	}
	withMake := spec
	withMake.Extensions = []build.Extension{{Source: spec.Extensions[0].Source, Make: []string{"OPTFLAGS="}}}
	k2, err := b.Key(ctx, withMake)
	if err != nil || k2 == bld.Key {
		t.Errorf("make=OPTFLAGS= left the key %s (%v)", k2, err)
	}
	writeFiles(t, ext, loopExt("pgscale_inst", "1000"))
	runGit(t, ext, "commit", "-q", "-a", "-m", "loop")
	k3, err := b.Key(ctx, spec)
	if err != nil || k3 == bld.Key {
		t.Errorf("a new commit left the key %s (%v)", k3, err)
	}
}

// Headers of another version than the server's are refused, saying both.
func TestInstalledHeadersMismatch(t *testing.T) {
	bin := installedBin(t)
	fake := t.TempDir()
	inc := filepath.Join(fake, "include")
	writeFiles(t, fake, map[string]string{
		"include/pg_config.h": "#define PG_VERSION \"15.18 (Debian 15.18-0+deb12u1)\"\n",
	})
	// A bin directory whose postgres is the server and whose pg_config
	// names the other headers.
	for _, p := range []string{"postgres"} {
		if err := os.Symlink(filepath.Join(bin, p), filepath.Join(fake, p)); err != nil {
			t.Fatal(err)
		}
	}
	real := filepath.Join(bin, "pg_config")
	writeFiles(t, fake, map[string]string{"pg_config": "#!/bin/sh\n" + real + " \"$@\" | sed 's|^INCLUDEDIR-SERVER = .*|INCLUDEDIR-SERVER = " + inc + "|'\n"})
	ext := gitRepo(t, loopExt("pgscale_hdr", "0"))
	b := &build.Builder{Cache: t.TempDir()}
	_, err := b.Build(context.Background(), build.Installed{BinDir: fake, Extensions: []build.Extension{{Source: build.Source{Path: ext, Rev: "HEAD"}}}})
	var he *build.HeadersError
	if !errors.As(err, &he) || he.Headers != "15.18" || he.Server == "" || !strings.Contains(err.Error(), "15.18") ||
		!strings.Contains(err.Error(), he.Server) || strings.Contains(err.Error(), "\n") {
		t.Errorf("headers of 15.18: %v, want a one-line HeadersError naming both versions", err)
	}
}

// A build command instead of PGXS (run=): what it installs under $DESTDIR
// goes into the copy; a command that installs nothing there has its tree's
// .so, .control and NAME--VERSION.sql files taken.
func TestInstalledExtensionCommand(t *testing.T) {
	testenv.Slow(t) // compiles with the server's headers into a copy of its tree
	bin := installedBin(t)
	files := loopExt("pgscale_cmd", "0")
	// A plain Makefile, no PGXS: compile with the server's headers.
	files["build.mk"] = "INC := $(shell $(PG_CONFIG) --includedir-server)\n" +
		"pgscale_cmd.so: pgscale_cmd.c\n\t$(CC) -fPIC -shared -I$(INC) -o $@ $<\n"
	ext := gitRepo(t, files)
	b := &build.Builder{Cache: t.TempDir(), Progress: buildtest.Log(t)}
	ctx := context.Background()
	install := `make -f build.mk && lib=$("$PG_CONFIG" --pkglibdir) && share=$("$PG_CONFIG" --sharedir)/extension && ` +
		`mkdir -p "$DESTDIR$lib" "$DESTDIR$share" && cp pgscale_cmd.so "$DESTDIR$lib" && cp pgscale_cmd.control pgscale_cmd--1.0.sql "$DESTDIR$share"`
	for name, run := range map[string]string{"destdir": install, "tree": "make -f build.mk"} {
		bld, err := b.Build(ctx, build.Installed{Name: name, BinDir: bin, Extensions: []build.Extension{{Source: build.Source{Path: ext, Rev: "HEAD"}, Run: run}}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out, _ := exec.Command(filepath.Join(bld.BinDir(), "pg_config"), "--pkglibdir").Output()
		if _, err := os.Stat(filepath.Join(strings.TrimSpace(string(out)), "pgscale_cmd.so")); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if c := bld.Manifest.Extensions[0].Controls; !slices.Equal(c, []string{"pgscale_cmd"}) || bld.Manifest.Extensions[0].Run != run {
			t.Errorf("%s: extension record %+v", name, bld.Manifest.Extensions[0])
		}
	}
	_, err := b.Build(ctx, build.Installed{Name: "nothing", BinDir: bin, Extensions: []build.Extension{{Source: build.Source{Path: ext, Rev: "HEAD"}, Run: "rm -f *.control *.sql"}}})
	var be *build.Error
	if !errors.As(err, &be) || !strings.Contains(be.Err.Error(), "installed nothing") {
		t.Errorf("a command that builds nothing: %v", err)
	}
}

func keyOf(b *build.Build) string {
	if b == nil {
		return ""
	}
	return b.Key
}
