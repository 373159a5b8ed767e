package integration_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/cli"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/testenv"
)

// bisectExtRepo makes a git repository of a PGXS extension, pgscale_bx, one
// SQL-callable C function pgscale_bx_work(int), whose commits are, in
// order (tags in brackets):
//
//	[base]    pgscale_bx: one function
//	[start]   README: what it is
//	          work: say what it returns
//	          README: how to install it
//	[broken]  work: the seed without its semicolon (does not compile; it
//	          also names the test's directory, so that its tree, and its
//	          build key, are new on every run: the bisect builds it itself)
//	[still]   work: drop the note, still without the semicolon (does not
//	          compile; the same tree on every run, so its failure can be
//	          remembered from pgscale build)
//	          work: put the semicolon back
//	[loop]    work: a 2000-step hash loop per call
//	[bisect]  README: a line on bisecting
//
// Every commit has a fixed date and author (gitLine); only broken's
// differs between runs.
func bisectExtRepo(t *testing.T) string {
	t.Helper()
	const head = "#include \"postgres.h\"\n#include \"fmgr.h\"\nPG_MODULE_MAGIC;\nPG_FUNCTION_INFO_V1(pgscale_bx_work);\n"
	body := func(comment, semicolon, loop string) string {
		return head + comment + "Datum pgscale_bx_work(PG_FUNCTION_ARGS) {\n  volatile uint32 h = 2166136261u" + semicolon + "\n" + loop +
			"  PG_RETURN_INT32(PG_GETARG_INT32(0) + 1 + (int32) (h & 0));\n}\n"
	}
	const comment = "/* pgscale_bx_work returns its argument plus one. */\n"
	const loop = "  for (int i = 0; i < 2000; i++)\n    h = (h ^ (uint32) i) * 16777619u;\n"
	dir, commit := gitLine(t)
	files := pgxsFiles("pgscale_bx")
	files["pgscale_bx.c"] = body("", ";", "")
	commit("pgscale_bx: one function", files, "base")
	commit("README: what it is", map[string]string{"README": "pgscale_bx: a function to bisect.\n"}, "start")
	commit("work: say what it returns", map[string]string{"pgscale_bx.c": body(comment, ";", "")}, "")
	commit("README: how to install it", map[string]string{"README": "pgscale_bx: a function to bisect.\nmake install, then CREATE EXTENSION pgscale_bx.\n"}, "")
	note := "/* made for " + dir + " */\n"
	commit("work: the seed without its semicolon (does not compile)", map[string]string{"pgscale_bx.c": body(comment+note, "", "")}, "broken")
	commit("work: drop the note, still without the semicolon (does not compile)", map[string]string{"pgscale_bx.c": body(comment, "", "")}, "still")
	commit("work: put the semicolon back", map[string]string{"pgscale_bx.c": body(comment, ";", "")}, "")
	commit("work: a 2000-step hash loop per call", map[string]string{"pgscale_bx.c": body(comment, ";", loop)}, "loop")
	commit("README: a line on bisecting", map[string]string{"README": "pgscale_bx: a function to bisect.\nmake install, then CREATE EXTENSION pgscale_bx.\nIts history has a loop.\n"}, "bisect")
	return dir
}

// pgscale history bisect end to end, over an extension's own commits on a
// server built from source (src:PATH@base,ext=EXTPATH: the server is the
// CI's warm-up build, each extension build takes seconds). Three runs are
// recorded, one ab of the extension at base, start and bisect counted
// under Valgrind, each file under its commit; the store finds the change
// between start and bisect; history bisect takes that range, the target
// and the workload from the runs and bisects the seven commits: the
// midpoint does not build (built now: skipped as such), the next one's
// failure is remembered from pgscale build (skipped at once), and the
// loop's commit is named with its function in four measured steps. A
// --resume of the log then builds and measures nothing.
func TestHistoryBisectFindsTheCommitSkippingOnesThatDoNotBuild(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	noCIEnv(t)
	pg := srcRepo(t)
	needPGXS(t)
	testenv.NeedProgram(t, "valgrind", "Debian: apt-get install valgrind")
	repo, dir := bisectExtRepo(t), t.TempDir()
	setup := writeFile(t, filepath.Join(dir, "setup.sql"), "CREATE EXTENSION pgscale_bx;\n")
	script := writeFile(t, filepath.Join(dir, "q.sql"), "SELECT pgscale_bx_work(1);\n")
	at := func(rev string) string { return "src:" + pg + "@base,ext=" + repo + "@" + rev }
	rev := func(tag string) string { return gitRev(t, repo, tag) }

	// still does not build: pgscale build fails, and the cache remembers it.
	code, _, stderr := pgscale(t, "build", at("still"))
	if code != cli.ExitUsage || !strings.Contains(stderr, "failed in phase ext pgscale_bx") {
		t.Fatalf("pgscale build of a commit that does not compile: exit %d, want %d and the failed phase:\n%s", code, cli.ExitUsage, lastLines(stderr, 20))
	}

	db := filepath.Join(dir, "history.db")
	args := []string{"ab", "--setup", setup, "-f", script, "-c", "1", "-t", "50", "--count", "instructions", "--rounds", "2", "--reshuffle", "0",
		"--store", db, "--label", "main", "--out", filepath.Join(dir, "runs")}
	for _, tag := range []string{"base", "start", "bisect"} {
		args = append(args, "--target", tag+"="+at(tag), "--commit", tag+"="+rev(tag))
	}
	// Counted and given no --bound, ab decides on the counts at one
	// client, which 2 rounds may leave undecided: the runs are recorded
	// whatever the verdict.
	if code, stdout, stderr := pgscale(t, args...); code != cli.ExitOK && code != cli.ExitRegression && code != cli.ExitInconclusive {
		t.Fatalf("recording the runs: exit %d\n%s\n%s", code, lastLines(stdout, 30), lastLines(stderr, 30))
	}

	out := filepath.Join(dir, "bisect")
	code, stdout, stderr := pgscale(t, "history", "bisect", "--store", db, "measure=instr/txn", "--reshuffle", "0", "--out", out)
	if code != cli.ExitOK {
		t.Fatalf("history bisect: exit %d\n%s\n%s", code, lastLines(stdout, 60), lastLines(stderr, 40))
	}
	if want := "history bisect: pgscale bisect --good " + rev("start") + " --bad " + rev("bisect"); !strings.Contains(stderr, want) {
		t.Errorf("stderr does not say %q:\n%s", want, lastLines(stderr, 60))
	}
	log, err := result.ReadBisect(filepath.Join(out, result.BisectFile))
	if err != nil {
		t.Fatal(err)
	}
	if log.Outcome != result.BisectFound || len(log.Culprits) != 1 {
		t.Fatalf("outcome %q, %d culprits (%s)\n%s", log.Outcome, len(log.Culprits), log.Reason, lastLines(stdout, 60))
	}
	c := log.Culprits[0]
	if c.Commit.Hash != rev("loop") {
		t.Errorf("culprit %s %q, want %s (the loop)", c.Commit.Short(), c.Commit.Subject, rev("loop")[:7])
	}
	named := false
	for _, f := range c.Change.Functions {
		named = named || f.Function == "pgscale_bx_work"
	}
	if !named || c.Change.Change < 0.05 || c.Change.Outcome != "fail" {
		t.Errorf("the culprit's change %+.3f%% (%s), functions %+v: want tens of per cent in pgscale_bx_work", 100*c.Change.Change, c.Change.Outcome, c.Change.Functions)
	}
	var built, cached bool
	measured := 0
	for _, st := range log.Steps {
		switch st.Commit {
		case rev("broken"):
			built = st.Class == result.BisectUnbuildable && strings.Contains(st.Why, "does not build: its build failed in phase ext pgscale_bx")
		case rev("still"):
			cached = st.Class == result.BisectUnbuildable && strings.Contains(st.Why, "cached failure: phase ext pgscale_bx") && st.BuildS == 0
		}
		if st.Rounds > 0 {
			measured++
		}
	}
	if !built || !cached {
		t.Errorf("broken skipped after building it: %v; still skipped as a cached failure: %v\n%s", built, cached, stepsOf(log))
	}
	if len(log.Steps) != 6 || measured != 4 {
		t.Errorf("%d steps, %d measured; want 6: the ends, two that do not build, three midpoints: %s", len(log.Steps), measured, stepsOf(log))
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

	// --resume on the complete log: every step is in it, nothing is built
	// or measured again, and the same commit is named.
	code, stdout, stderr = pgscale(t, "bisect", "--resume", out)
	if code != cli.ExitOK || !strings.Contains(stdout, "first bad commit: "+c.Commit.Hash) {
		t.Fatalf("--resume: exit %d\n%s\n%s", code, lastLines(stdout, 30), lastLines(stderr, 30))
	}
	if strings.Contains(stderr, "building ") || strings.Contains(stderr, "after round") || !strings.Contains(stderr, "is in the log") {
		t.Errorf("--resume built or measured again, or did not take the steps from the log:\n%s", lastLines(stderr, 30))
	}
}

// What pgscale history bisect needs that a store cannot give is one line
// each, exit 2, before anything is built: a filter of several series, a
// series without a change point, points without commits, files that do
// not record their target, a target not built from source, commits its
// source's repository does not have, and commits one apart. The series
// are copies of one real result file (tps 20 % lower from the 6th of 10),
// their recorded target edited.
func TestHistoryBisectRefuses(t *testing.T) {
	trackTime(t)
	testenv.Slow(t) // eight series of ten history adds
	noCIEnv(t)
	// A repository of three commits, for a target whose source is real.
	repo, commit := gitLine(t)
	var commits []string
	for _, msg := range []string{"one", "two", "three"} {
		commit(msg, map[string]string{"f": msg + "\n"}, "")
		commits = append(commits, gitRev(t, repo, "HEAD"))
	}
	ext := "settings:,ext=" + repo
	for _, tc := range []struct {
		name    string
		change  float64
		spec    string // the files' target.spec: "-" none, "" as recorded
		commits func(i int) string
		filter  []string
		want    string
	}{
		{"several series", -0.2, "", nil, []string{"label=main"}, "matches 8 series; name one"},
		{"no change point", 0, "", nil, nil, "has no change point since the acknowledged one"},
		{"no commit", -0.2, "", func(int) string { return "" }, nil, "recorded no commit (label main): record runs with --commit"},
		{"no target", -0.2, "-", nil, nil, "does not record its target as given"},
		{"not from source", -0.2, "", nil, nil, "was not built from source"},
		{"commits not in the tree", -0.2, ext, nil, nil, "which " + repo + " cannot bisect: --good"},
		{"one commit apart", -0.2, ext, func(i int) string { return commits[min(i/5, 1)+1] }, nil, "it is the one (nothing between them to bisect)"},
		{"the change point asked for", -0.2, "", nil, []string{"--result", "3"}, "has no change point at result 3"},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "-"), func(t *testing.T) {
			dir := t.TempDir()
			paths, names := series(t, dir, 10, 5, tc.change, 11)
			db := filepath.Join(dir, "h.db")
			for i, p := range paths {
				f := readResult(t, p)
				switch tc.spec {
				case "-":
					f.Target.Spec = ""
				case "":
				default:
					f.Target.Spec = tc.spec
				}
				if err := result.Write(p, f); err != nil {
					t.Fatal(err)
				}
				args := []string{"history", "add", "--store", db, "--label", "main", p}
				commit := names[i]
				if tc.commits != nil {
					commit = tc.commits(i)
				}
				if commit != "" {
					args = append(args, "--commit", commit)
				}
				if code, _, stderr := pgscale(t, args...); code != cli.ExitOK {
					t.Fatalf("history add: exit %d: %s", code, stderr)
				}
			}
			filter := tc.filter
			if filter == nil || filter[0] == "--result" {
				filter = append([]string{"measure=tps", "c=1"}, filter...)
			}
			code, stdout, stderr := pgscale(t, append([]string{"history", "bisect", "--store", db, "--out", filepath.Join(dir, "b")}, filter...)...)
			if code != cli.ExitUsage || !strings.Contains(stderr, tc.want) || !oneLine(stderr) || stdout != "" {
				t.Errorf("exit %d, want %d and one line saying %q:\n%s%s", code, cli.ExitUsage, tc.want, stdout, stderr)
			}
			t.Log(strings.TrimSpace(stderr))
		})
	}
}
