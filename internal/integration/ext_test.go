package integration_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/build/buildtest"
	"github.com/pgscale/pgscale/internal/cli"
	"github.com/pgscale/pgscale/internal/testenv"
)

// loopRepo makes a git repository of a PGXS extension of one SQL-callable
// C function, pgscale_cli_work(int), at two tags: base, and slow, where the
// function gains a 20 000-step loop.
func loopRepo(t *testing.T) string {
	t.Helper()
	body := func(loop string) string {
		return "#include \"postgres.h\"\n#include \"fmgr.h\"\nPG_MODULE_MAGIC;\nPG_FUNCTION_INFO_V1(pgscale_cli_work);\n" +
			"Datum pgscale_cli_work(PG_FUNCTION_ARGS) {\n  volatile uint32 h = 0;\n" + loop +
			"  PG_RETURN_INT32(PG_GETARG_INT32(0) + 1 + (int32) (h & 0));\n}\n"
	}
	dir, commit := gitLine(t)
	files := pgxsFiles("pgscale_cli")
	files["pgscale_cli.c"] = body("")
	commit("base", files, "base")
	commit("slow", map[string]string{"pgscale_cli.c": body("  for (int i = 0; i < 20000; i++)\n    h = h * 31 + i;\n")}, "slow")
	return dir
}

// gitLine makes a git repository in a temporary directory and returns it
// with a function that commits files to it with a subject, tagging the
// commit when tag is not empty. The Nth commit is dated N minutes after
// 2025-01-02 00:00 UTC and has a fixed author, so a line's commits are the
// same on every run that writes the same files.
func gitLine(t *testing.T) (string, func(subject string, files map[string]string, tag string)) {
	t.Helper()
	dir := t.TempDir()
	git := func(env []string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=pgscale", "-c", "user.email=pgscale@localhost"}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git(nil, "init", "-q")
	n := 0
	return dir, func(subject string, files map[string]string, tag string) {
		t.Helper()
		for name, b := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(b), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		date := fmt.Sprintf("2025-01-02T00:%02d:00Z", n)
		env := []string{"GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date}
		git(env, "add", "-A")
		git(env, "commit", "-q", "-m", subject)
		if tag != "" {
			git(nil, "tag", tag)
		}
		n++
	}
}

// pgxsFiles are the files of a PGXS extension NAME of one SQL-callable C
// function NAME_work(int) but its C file (NAME.c, the caller's): the
// Makefile, the control file and the install script.
func pgxsFiles(name string) map[string]string {
	return map[string]string{
		"Makefile": "MODULES = " + name + "\nEXTENSION = " + name + "\nDATA = " + name + "--1.0.sql\n" +
			"PG_CONFIG ?= pg_config\nPGXS := $(shell $(PG_CONFIG) --pgxs)\ninclude $(PGXS)\n",
		name + ".control":  "default_version = '1.0'\nmodule_pathname = '$libdir/" + name + "'\nrelocatable = true\n",
		name + "--1.0.sql": "CREATE FUNCTION " + name + "_work(int) RETURNS int AS 'MODULE_PATHNAME' LANGUAGE C STRICT;\n",
	}
}

// needPGXS skips (fails with CI=true) without the installed server's
// development files.
func needPGXS(t *testing.T) {
	t.Helper()
	out, err := exec.Command("pg_config", "--pgxs").Output()
	if err == nil {
		_, err = os.Stat(strings.TrimSpace(string(out)))
	}
	if err != nil {
		testenv.Need(t, errString("the installed server's PGXS is missing (Debian: apt-get install postgresql-server-dev-15)"))
	}
}

// words is text with its line breaks and runs of blanks as single blanks,
// as a wrapped paragraph reads.
func words(s string) string { return strings.Join(strings.Fields(s), " ") }

type errString string

func (e errString) Error() string { return string(e) }

// An extension at two commits against the installed server, counted: the
// why names the function that gained the loop, and the result files
// record each build.
func TestExtensionCommitsCounted(t *testing.T) {
	trackTime(t)
	testenv.Slow(t) // counts under Valgrind (a minute)
	needPGXS(t)
	testenv.NeedProgram(t, "valgrind", "Debian: apt-get install valgrind")
	repo, dir := loopRepo(t), t.TempDir()
	setup, script := filepath.Join(dir, "setup.sql"), filepath.Join(dir, "q.sql")
	os.WriteFile(setup, []byte("CREATE EXTENSION pgscale_cli;\n"), 0o644)
	os.WriteFile(script, []byte("SELECT pgscale_cli_work(1);\n"), 0o644)
	code, stdout, stderr := pgscale(t, "ab", "--target", "a=settings:,ext="+repo+"@base", "--target", "b=settings:,ext="+repo+"@slow,make=OPTFLAGS=",
		"--setup", setup, "-f", script, "-c", "1", "-t", "100", "--rounds", "3", "--count", "instructions", "--out", filepath.Join(dir, "out"))
	if code != cli.ExitOK && code != cli.ExitRegression {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(words(stdout), "own instructions pgscale_cli_work +") {
		t.Errorf("the why does not name the function that gained the loop:\n%s", stdout)
	}
	f := readResult(t, filepath.Join(dir, "out", "b.json"))
	if b := f.Target.Build; b == nil || b.Mode != "installed" || len(b.Extensions) != 1 || b.Extensions[0].Name != "pgscale_cli" ||
		b.Extensions[0].Source != repo+"@slow" || strings.Join(b.Extensions[0].Make, " ") != "OPTFLAGS=" {
		t.Errorf("b's build record: %+v", f.Target.Build)
	}
}

// Debian's pg_rational (.ci/ext-source) at base and at slow (a loop in
// rational_add) against the installed server: it builds with PGXS, its
// operator runs, and counting names rational_add.
func TestRealExtensionCounted(t *testing.T) {
	trackTime(t)
	testenv.Slow(t) // counts under Valgrind (a minute)
	needPGXS(t)
	testenv.NeedProgram(t, "valgrind", "Debian: apt-get install valgrind")
	repo, dir := buildtest.ExtSource(t), t.TempDir()
	setup, script := filepath.Join(dir, "setup.sql"), filepath.Join(dir, "q.sql")
	// A table's values, not constants, which the planner would fold once.
	os.WriteFile(setup, []byte("CREATE EXTENSION pg_rational VERSION '0.0.1';\n"+
		"CREATE TABLE rt AS SELECT rational_create(i, 7) AS x FROM generate_series(1, 10) i;\n"), 0o644)
	os.WriteFile(script, []byte("SELECT x + x FROM rt LIMIT 1;\n"), 0o644)
	code, stdout, stderr := pgscale(t, "ab", "--target", "base=settings:,ext="+repo+"@base", "--target", "slow=settings:,ext="+repo+"@slow",
		"--setup", setup, "-f", script, "-c", "1", "-t", "100", "--rounds", "3", "--count", "instructions", "--out", filepath.Join(dir, "out"))
	if code != cli.ExitOK && code != cli.ExitRegression {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(words(stdout), "own instructions rational_add +") {
		t.Errorf("the why does not name rational_add:\n%s", stdout)
	}
}

// run --ext builds for the installed server and says it in the report's
// head; a missing extension tree or --ext with --dsn is one line, exit 2.
func TestRunExt(t *testing.T) {
	trackTime(t)
	testenv.Slow(t) // builds an extension for a cluster of its own
	needPGXS(t)
	repo, dir := loopRepo(t), t.TempDir()
	setup, script := filepath.Join(dir, "setup.sql"), filepath.Join(dir, "q.sql")
	os.WriteFile(setup, []byte("CREATE EXTENSION pgscale_cli;\n"), 0o644)
	os.WriteFile(script, []byte("SELECT pgscale_cli_work(1);\n"), 0o644)
	out := filepath.Join(dir, "r.json")
	code, stdout, stderr := pgscale(t, "run", "--ext", repo+"@slow,make=OPTFLAGS=", "--setup", setup, "-f", script, "-c", "1", "-T", "1", "--out", out)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "build:    the installed server ") || !strings.Contains(stdout, "extension pgscale_cli ("+repo+"@slow, commit ") ||
		!strings.Contains(stdout, "make OPTFLAGS=)") {
		t.Errorf("the report's head does not say the extension's build:\n%s", stdout)
	}
	if strings.Contains(stderr, "takes minutes") {
		t.Errorf("an extension build said it takes minutes:\n%s", stderr)
	}
	// The script uses no pgbench table: no pgbench data; the set-up says
	// it runs.
	if strings.Contains(stderr, "creating pgbench data") || !strings.Contains(stderr, "running --setup "+setup+"...") {
		t.Errorf("the data's set-up words:\n%s", stderr)
	}
	for _, args := range [][]string{
		{"run", "--ext", "/no/such/ext@v1", "-c", "1", "-T", "1"},
		{"run", "--dsn", dsn("postgres"), "--ext", repo + "@base", "-c", "1", "-T", "1"},
		{"ab", "--target", "a=settings:,make=OPTFLAGS=", "--target", "b=settings:", "-c", "1", "-T", "1"},
	} {
		code, stdout, stderr := pgscale(t, args...)
		if code != cli.ExitUsage || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, want 2 with one line\n%s\n%s", args, code, stdout, stderr)
		}
	}
}
