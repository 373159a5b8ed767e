package integration_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/build/buildtest"
	"github.com/pgscale/pgscale/internal/cli"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/target/targettest"
	"github.com/pgscale/pgscale/internal/testenv"
)

// pgscale bisect over a pooler's build: a proxy: definition (the example
// pgbouncer.yaml) whose build: names the pgbouncer fixture without a
// revision, bisected over its bisect-short line (.ci/pgbouncer-bisect-source:
// base, the 200-step hash loop per query packet, the AUTHORS line), each
// commit's pgbouncer built (base is CI's warm-up build) and counted under
// Valgrind in front of a server of its own: the ends differ by a third of
// the pooler's instructions per transaction, the one midpoint is the loop,
// named with the function it lands in and its diff.
func TestBisectProxyFindsTheCommit(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	testenv.Slow(t) // builds from source (minutes)
	testenv.NeedProgram(t, "valgrind", "Debian: apt-get install valgrind")
	repo := buildtest.PgBouncerBisectSource(t)
	dir := t.TempDir()
	example, err := os.ReadFile(targettest.Example(t, "pgbouncer"))
	if err != nil {
		t.Fatal(err)
	}
	def := writeFile(t, filepath.Join(dir, "bouncer.yaml"), strings.Replace(string(example), "command: pgbouncer {{dir}}/pgbouncer.ini",
		"build:\n  source: "+repo+"\n  run: ./configure --without-openssl && make\ncommand: \"{{build}}/pgbouncer {{dir}}/pgbouncer.ini\"", 1))
	out := filepath.Join(dir, "bisect")
	code, stdout, stderr := pgscale(t, "bisect", "--good", "base", "--bad", "bisect-short", "proxy:"+def,
		"-S", "-M", "simple", "-c", "1", "-t", "100", "--count", "instructions", "--reshuffle", "0", "--out", out)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, lastLines(stdout, 60), lastLines(stderr, 40))
	}
	log, err := result.ReadBisect(filepath.Join(out, result.BisectFile))
	if err != nil {
		t.Fatal(err)
	}
	if log.Outcome != result.BisectFound || len(log.Culprits) != 1 || log.Measure != "pooler-instr/txn" {
		t.Fatalf("outcome %q, %d culprits, measure %s (%s)\n%s", log.Outcome, len(log.Culprits), log.Measure, log.Reason, lastLines(stdout, 60))
	}
	c := log.Culprits[0]
	if loop := gitRev(t, repo, "bisect-short~1"); c.Commit.Hash != loop || !strings.Contains(c.Commit.Subject, "200-step hash loop") {
		t.Errorf("culprit %s %q, want %s (the loop)", c.Commit.Short(), c.Commit.Subject, loop[:7])
	}
	// 200 steps of a multiply and an xor per query packet, in a pooler's
	// some 4 200 instructions per select-only transaction: about a third.
	if c.Change.Change < 0.1 || c.Change.Change > 1 || c.Change.Outcome != "fail" {
		t.Errorf("the culprit's change %+.3f%% %s, want tens of per cent", 100*c.Change.Change, c.Change.Outcome)
	}
	if len(c.Change.Functions) == 0 || !strings.Contains(c.DiffStat, "src/client.c") {
		t.Errorf("the culprit's functions %+v, diff stat %q: want the function and src/client.c", c.Change.Functions, c.DiffStat)
	}
	if len(log.Steps) != 2 {
		t.Errorf("%d steps, want 2 (the ends, the midpoint): %s", len(log.Steps), stepsOf(log))
	}
	var build, measure float64
	for _, st := range log.Steps {
		build, measure = build+st.BuildS, measure+st.MeasureS
	}
	t.Logf("%s; %d steps, building %.0f s, measuring %.0f s; functions %+v", report.BisectHeadline(log), len(log.Steps), build, measure, c.Change.Functions)
}

// stepsOf lists a log's steps, for a failure message.
func stepsOf(b *result.Bisect) string {
	out, _ := json.Marshal(b.Steps)
	return string(out)
}

// Bad bisect command lines are one line each, exit 2, before anything is
// built: they need the fixture's repository, not a build.
func TestBisectUsageErrors(t *testing.T) {
	trackTime(t)
	repo := buildtest.PGBisectSource(t)
	src := "src:" + repo
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--good", "base", "--bad", "base", src}, "the same commit"},
		{[]string{"--good", "bisect", "--bad", "base", src}, "is not an ancestor"},
		{[]string{"--good", "bisect~1", "--bad", "bisect", src}, "nothing between them"},
		{[]string{"--good", "base", "--bad", "no-such-rev", src}, "no such commit"},
		{[]string{"--good", "base", "--bad", "bisect", "settings:"}, "builds nothing from source"},
		{[]string{"--good", "base", "--bad", "bisect", src + "@base"}, "every source has a revision"},
		{[]string{"--good", "base", "--bad", "bisect", "-c", "1,2", src}, "one client count"},
		{[]string{"--bad", "bisect", src}, "give both ends"},
		{[]string{"--good", "base", "--bad", "bisect", "--measure", "instr/txn", src}, "add --count instructions"},
		{[]string{"--good", "base", "--bad", "bisect", "--min-change", "x", src}, "not a change"},
		{[]string{"--resume", filepath.Join(t.TempDir(), "none")}, "no such file"},
	} {
		args := append([]string{"bisect", "--out", filepath.Join(t.TempDir(), "b")}, tc.args...)
		code, _, stderr := pgscale(t, args...)
		if code != cli.ExitUsage || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, want %d and one line saying %q:\n%s", tc.args, code, cli.ExitUsage, tc.want, stderr)
		}
		if strings.Contains(stderr, "building") {
			t.Errorf("%v: built something before refusing:\n%s", tc.args, stderr)
		}
	}
}
