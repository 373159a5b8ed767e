package target_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/testenv"
)

// extRepo makes a git repository of a PGXS extension whose function
// pgscale_t_work(int) returns its argument plus add, tagged tag.
func extRepo(t *testing.T, add, tag string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"Makefile": "MODULES = pgscale_t\nEXTENSION = pgscale_t\nDATA = pgscale_t--1.0.sql\n" +
			"PG_CONFIG ?= pg_config\nPGXS := $(shell $(PG_CONFIG) --pgxs)\ninclude $(PGXS)\n",
		"pgscale_t.c": "#include \"postgres.h\"\n#include \"fmgr.h\"\nPG_MODULE_MAGIC;\nPG_FUNCTION_INFO_V1(pgscale_t_work);\n" +
			"Datum pgscale_t_work(PG_FUNCTION_ARGS) { PG_RETURN_INT32(PG_GETARG_INT32(0) + " + add + "); }\n",
		"pgscale_t.control":  "default_version = '1.0'\nmodule_pathname = '$libdir/pgscale_t'\nrelocatable = true\n",
		"pgscale_t--1.0.sql": "CREATE FUNCTION pgscale_t_work(int) RETURNS int AS 'MODULE_PATHNAME' LANGUAGE C STRICT;\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", tag}, {"tag", tag}} {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// A settings: target with ext= runs the installed server from a copy of
// its tree with the extension built by the server's own PGXS: CREATE
// EXTENSION finds it there, two commits give two functions, a per-session
// setting does not put it on the baseline's cluster, and the result
// records the build.
func TestSettingsExtension(t *testing.T) {
	testenv.Slow(t) // builds an extension at two commits and runs two clusters
	bin, err := target.FindBinDir("", target.Words{})
	testenv.Need(t, err)
	if out, err := exec.Command(filepath.Join(bin, "pg_config"), "--pgxs").Output(); err != nil || !exists(strings.TrimSpace(string(out))) {
		testenv.Need(t, errAt("the installed server's PGXS is missing (Debian: apt-get install postgresql-server-dev-15)"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	one, two := extRepo(t, "1", "one"), extRepo(t, "2", "two")
	specs, err := target.ParseSpecs([]string{"a=settings:work_mem=5MB,ext=" + one + "@one", "b=settings:log_statement=all,ext=" + two + "@two,make=OPTFLAGS="}, "", 2)
	if err != nil {
		t.Fatal(err)
	}
	// A cache of its own, which the postgres user that runs root's
	// clusters can enter (t.TempDir's is root's alone).
	cache, err := os.MkdirTemp("", "pgscale-ext-cache-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(cache) })
	if err := os.Chmod(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	opt := target.ClusterOptions{BuildCache: cache}
	for _, s := range specs {
		line, err := target.BuildStatus(ctx, s, opt)
		if err != nil || !strings.Contains(line, "not in the build cache") {
			t.Errorf("%s before the run: %q, %v", s.Name, line, err)
		}
	}
	var notices []string
	servers, err := target.OpenAll(ctx, specs, opt, target.Needs{Clients: 1, Connections: 1}, func(s string) { notices = append(notices, s) })
	defer func() {
		for _, s := range servers {
			s.Close()
		}
	}()
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"2", "3"} {
		s := servers[i]
		if s.Cluster == nil || s.Fronts != nil {
			t.Fatalf("%s: no cluster of its own", s.Info.Name)
		}
		c := connect(t, ctx, s.Config)
		for _, sql := range []string{"CREATE EXTENSION pgscale_t"} {
			if err := c.Exec(ctx, sql).Close(); err != nil {
				t.Fatalf("%s: %s: %v", s.Info.Name, sql, err)
			}
		}
		res := c.ExecParams(ctx, "SELECT pgscale_t_work(1)", nil, nil, nil, nil).Read()
		c.Close(ctx)
		if res.Err != nil || len(res.Rows) != 1 || string(res.Rows[0][0]) != want {
			t.Errorf("%s: pgscale_t_work(1) = %v, %v; want %s", s.Info.Name, res.Rows, res.Err, want)
		}
		b := s.Info.Build
		if b == nil || b.Mode != "installed" || len(b.Extensions) != 1 || b.Extensions[0].Name != "pgscale_t" || b.Extensions[0].Commit == "" {
			t.Errorf("%s: build record %+v", s.Info.Name, b)
		}
		if !strings.HasPrefix(s.Info.BinDir, opt.BuildCache) {
			t.Errorf("%s: the cluster ran from %s, not from the build cache's copy", s.Info.Name, s.Info.BinDir)
		}
	}
	if got := servers[1].Info.Build.Extensions[0].Make; len(got) != 1 || got[0] != "OPTFLAGS=" {
		t.Errorf("b's make arguments recorded as %v", got)
	}
	joined := strings.Join(notices, "\n")
	if !strings.Contains(joined, "only its extensions are built") || strings.Contains(joined, "takes minutes") {
		t.Errorf("notices:\n%s", joined)
	}
	for _, s := range specs {
		if line, err := target.BuildStatus(ctx, s, opt); err != nil || !strings.Contains(line, ": in the build cache") {
			t.Errorf("%s after the run: %q, %v", s.Name, line, err)
		}
	}
}

type errAt string

func (e errAt) Error() string { return string(e) }

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
