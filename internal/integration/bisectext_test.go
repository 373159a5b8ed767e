package integration_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/cli"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/testenv"
)

// bisectExtRepo makes a git repository of a PGXS extension, pgscale_bx, one
// SQL-callable C function pgscale_bx_work(int), with a line of six commits
// on base (tag base, the tip tagged bisect): a README, a comment, a commit
// that does not compile (tag broken), its fix, a 2 000-step hash loop per
// call (tag loop), and a README again. Every commit has its own fixed date,
// so the commits (and the build keys) are the same on every run.
func bisectExtRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	const head = "#include \"postgres.h\"\n#include \"fmgr.h\"\nPG_MODULE_MAGIC;\nPG_FUNCTION_INFO_V1(pgscale_bx_work);\n"
	body := func(comment, semicolon, loop string) string {
		return head + comment + "Datum pgscale_bx_work(PG_FUNCTION_ARGS) {\n  volatile uint32 h = 2166136261u" + semicolon + "\n" + loop +
			"  PG_RETURN_INT32(PG_GETARG_INT32(0) + 1 + (int32) (h & 0));\n}\n"
	}
	const comment = "/* pgscale_bx_work returns its argument plus one. */\n"
	const loop = "  for (int i = 0; i < 2000; i++)\n    h = (h ^ (uint32) i) * 16777619u;\n"
	n := 0
	commit := func(subject string, files map[string]string, tag string) {
		for name, b := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(b), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		date := fmt.Sprintf("GIT_AUTHOR_DATE=2025-01-02T00:%02d:00Z", n)
		for _, args := range [][]string{{"add", "-A"}, {"commit", "-q", "-m", subject}, {"tag", tag}} {
			if args[0] == "tag" && tag == "" {
				continue
			}
			cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=pgscale", "-c", "user.email=pgscale@localhost"}, args...)...)
			cmd.Env = append(os.Environ(), date, strings.Replace(date, "AUTHOR", "COMMITTER", 1))
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
		n++
	}
	if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	commit("pgscale_bx: one function", map[string]string{
		"Makefile": "MODULES = pgscale_bx\nEXTENSION = pgscale_bx\nDATA = pgscale_bx--1.0.sql\n" +
			"PG_CONFIG ?= pg_config\nPGXS := $(shell $(PG_CONFIG) --pgxs)\ninclude $(PGXS)\n",
		"pgscale_bx.c":        body("", ";", ""),
		"pgscale_bx.control":  "default_version = '1.0'\nmodule_pathname = '$libdir/pgscale_bx'\nrelocatable = true\n",
		"pgscale_bx--1.0.sql": "CREATE FUNCTION pgscale_bx_work(int) RETURNS int AS 'MODULE_PATHNAME' LANGUAGE C STRICT;\n",
	}, "base")
	commit("README: what it is", map[string]string{"README": "pgscale_bx: a function to bisect.\n"}, "")
	commit("work: say what it returns", map[string]string{"pgscale_bx.c": body(comment, ";", "")}, "")
	commit("work: the hash's seed without its semicolon (does not compile)", map[string]string{"pgscale_bx.c": body(comment, "", "")}, "broken")
	commit("work: put the semicolon back", map[string]string{"pgscale_bx.c": body(comment, ";", "")}, "")
	commit("work: a 2000-step hash loop per call", map[string]string{"pgscale_bx.c": body(comment, ";", loop)}, "loop")
	commit("README: how to install it", map[string]string{"README": "pgscale_bx: a function to bisect.\nmake install, then CREATE EXTENSION pgscale_bx.\n"}, "bisect")
	return dir
}

// pgscale bisect over an extension's own commits, on the installed server
// (settings:,ext=PATH): the commit that does not compile is built first
// with pgscale build, which fails and is remembered by the build cache; the
// bisect then skips it at once as a cached failure (the midpoint of the six
// commits, so the skip is its first midpoint) and names the loop's commit
// with the function, counted, in four steps. Each extension build takes
// seconds.
func TestBisectExtensionFindsTheLoopSkippingACachedFailure(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	needPGXS(t)
	testenv.NeedProgram(t, "valgrind", "Debian: apt-get install valgrind")
	repo, dir := bisectExtRepo(t), t.TempDir()
	setup := writeFile(t, filepath.Join(dir, "setup.sql"), "CREATE EXTENSION pgscale_bx;\n")
	script := writeFile(t, filepath.Join(dir, "q.sql"), "SELECT pgscale_bx_work(1);\n")

	code, _, stderr := pgscale(t, "build", "settings:,ext="+repo+"@broken")
	if code != cli.ExitUsage || !strings.Contains(stderr, "failed in phase ext pgscale_bx") {
		t.Fatalf("pgscale build of the broken commit: exit %d, want %d and the failed phase:\n%s", code, cli.ExitUsage, lastLines(stderr, 20))
	}

	out := filepath.Join(dir, "bisect")
	code, stdout, stderr := pgscale(t, "bisect", "--good", "base", "--bad", "bisect", "settings:,ext="+repo,
		"--setup", setup, "-f", script, "-c", "1", "-t", "50", "--count", "instructions", "--reshuffle", "0", "--out", out)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, lastLines(stdout, 60), lastLines(stderr, 40))
	}
	log, err := result.ReadBisect(filepath.Join(out, result.BisectFile))
	if err != nil {
		t.Fatal(err)
	}
	if log.Outcome != result.BisectFound || len(log.Culprits) != 1 {
		t.Fatalf("outcome %q, %d culprits (%s)\n%s", log.Outcome, len(log.Culprits), log.Reason, lastLines(stdout, 60))
	}
	c := log.Culprits[0]
	if loop := gitRev(t, repo, "loop"); c.Commit.Hash != loop {
		t.Errorf("culprit %s %q, want %s (the loop)", c.Commit.Short(), c.Commit.Subject, loop[:7])
	}
	named := false
	for _, f := range c.Change.Functions {
		named = named || f.Function == "pgscale_bx_work"
	}
	if !named || c.Change.Change < 0.05 {
		t.Errorf("the culprit's change %+.3f%%, functions %+v: want tens of per cent in pgscale_bx_work", 100*c.Change.Change, c.Change.Functions)
	}
	broken, skipped := gitRev(t, repo, "broken"), false
	for _, st := range log.Steps {
		if st.Commit == broken {
			skipped = st.Class == result.BisectUnbuildable && strings.Contains(st.Why, "cached failure: phase ext pgscale_bx") && st.BuildS == 0
		}
	}
	if !skipped {
		t.Errorf("the broken commit %s was not skipped as a cached failure: %s", broken[:7], stepsOf(log))
	}
	if len(log.Steps) != 4 {
		t.Errorf("%d steps, want 4 (the ends, the cached failure, two midpoints): %s", len(log.Steps), stepsOf(log))
	}
	for _, want := range []string{"did not build at", "first bad commit: " + c.Commit.Hash, "pgscale_bx_work"} {
		if !strings.Contains(stdout+stderr, want) {
			t.Errorf("the output does not say %q:\n%s\n%s", want, lastLines(stdout, 40), lastLines(stderr, 30))
		}
	}
	var build, measure float64
	for _, st := range log.Steps {
		build, measure = build+st.BuildS, measure+st.MeasureS
	}
	t.Logf("%s in %d steps: building %.1f s, measuring %.1f s", c.Commit.Short(), len(log.Steps), build, measure)
}
