package integration_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/cli"
	"github.com/pgscale/pgscale/internal/testenv"
)

// hogEnv makes the test binary a CPU hog (TestHogChild) instead of a test
// run.
const hogEnv = "PGSCALE_TEST_HOG"

// TestHogChild spins when started as a hog by startHog; otherwise it does
// nothing.
func TestHogChild(t *testing.T) {
	if os.Getenv(hogEnv) != "1" {
		t.Skip("only a CPU hog for the verdict tests")
	}
	deadline := time.Now().Add(10 * time.Minute) // never outlives a forgotten test
	x := 1
	for time.Now().Before(deadline) {
		for i := 0; i < 1e7; i++ {
			x = x*1664525 + 1013904223
		}
	}
	_ = x
}

// startHog starts n processes that each keep a CPU busy (this test binary
// as TestHogChild), as other work on a shared CI machine does, and stops
// them, by their pid, when the test ends.
func startHog(t *testing.T, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHogChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), hogEnv+"=1")
		if err := cmd.Start(); err != nil {
			t.Fatalf("start a CPU hog: %v", err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_, _ = cmd.Process.Wait()
		})
	}
	time.Sleep(200 * time.Millisecond) // running before the first round
}

// verdictBounds are the bounds of the A/A proofs: throughput, tail
// latency, and the server's CPU and context switches per transaction.
const verdictBounds = "tps=-5%,p99=+10%,server-cpu/txn=+5%,server-ctx/txn=+5%"

// An A/A run under a CPU hog the test starts never fails: it passes, or is
// inconclusive and says what would decide it; rounding until decided
// stops at its budget or once decided, and says which.
func TestABAAUnderHogNeverFails(t *testing.T) {
	trackTime(t)
	testenv.Slow(t) // rounds until decided under a CPU hog
	startHog(t, runtime.NumCPU())
	dir := t.TempDir()
	code, stdout := abCLI(t, nil, "ab", "--target", "a=settings:", "--target", "b=settings:", "-S", "-c", "2", "-T", "1", "--warmup", "0.3",
		"--rounds", "auto:10", "--bound", verdictBounds, "--out", filepath.Join(dir, "r"), "--verdict", filepath.Join(dir, "v.json"))
	if code != cli.ExitOK && code != cli.ExitInconclusive {
		t.Fatalf("A/A under a hog: exit %d, want 0 or 4", code)
	}
	v := readVerdict(t, filepath.Join(dir, "v.json"))
	if v.Outcome == "fail" || v.RoundsMax != 10 || !regexp.MustCompile(`^(decided after \d+ rounds|undecided: the budget of 10 rounds ran out)$`).MatchString(v.Stopped) {
		t.Errorf("verdict: outcome %s, rounds %d of at most %d, stopped %q", v.Outcome, v.Rounds, v.RoundsMax, v.Stopped)
	}
	if code == cli.ExitInconclusive && !strings.Contains(stdout, "would decide it") {
		t.Errorf("inconclusive without saying what would decide it:\n%s", stdout)
	}
	if !strings.Contains(stdout, "machine:") {
		t.Errorf("no machine section:\n%s", stdout)
	}
}

// A real regression (every plan logged: throughput about 60 % lower)
// under a CPU hog fails, rounding until decided: it stops as soon as the
// failure is certain, and the verdict says after how many rounds.
func TestABRegressionUnderHogDecided(t *testing.T) {
	trackTime(t)
	testenv.Slow(t) // rounds until decided under a CPU hog
	startHog(t, 1)
	dir := t.TempDir()
	code, stdout := abCLI(t, nil, "ab", "--target", "base=settings:", "--target", "slow="+regression, "-S", "-c", "1", "-T", "1", "--warmup", "0.3",
		"--rounds", "auto:20", "--bound", "tps=-20%", "--out", filepath.Join(dir, "r"), "--verdict", filepath.Join(dir, "v.json"))
	if code != cli.ExitRegression {
		t.Fatalf("the regression under a hog: exit %d, want 1", code)
	}
	v := readVerdict(t, filepath.Join(dir, "v.json"))
	if v.Outcome != "fail" || !strings.HasPrefix(v.Stopped, "decided after ") || v.Rounds >= 20 {
		t.Errorf("verdict: outcome %s, rounds %d of at most %d, stopped %q", v.Outcome, v.Rounds, v.RoundsMax, v.Stopped)
	}
	if !strings.Contains(stdout, "failed or inconclusive:\n  tps@c=1 ") {
		t.Errorf("no line for the failed measure with its why:\n%s", stdout)
	}
	// --inconclusive maps only what is undecided: a failure stays 1.
	code, _ = abCLI(t, nil, "compare", "--inconclusive", "pass", filepath.Join(dir, "r", "base.json"), filepath.Join(dir, "r", "slow.json"), "--bound", "tps=-20%")
	if code != cli.ExitRegression {
		t.Errorf("compare --inconclusive pass of a failure: exit %d, want 1", code)
	}
}

// A suite of two identical targets under a CPU hog never fails either,
// each cell rounding until decided.
func TestSuiteAAUnderHogNeverFails(t *testing.T) {
	trackTime(t)
	testenv.Slow(t) // rounds until decided under a CPU hog
	startHog(t, runtime.NumCPU())
	dir := t.TempDir()
	file := filepath.Join(dir, "aa.yaml")
	os.WriteFile(file, []byte(`name: aa
targets: ["a=settings:", "b=settings:"]
matrix:
  protocol: [prepared, simple]
scripts:
  - builtin: select-only
clients: [2]
duration: 1s
warmup: 0.3s
rounds: auto:8
bounds:
  - tps=-5%
  - p99=+10%
`), 0o644)
	out := filepath.Join(dir, "bundle")
	code, stdout, stderr := pgscale(t, "suite", file, "--out", out, "--verdict", filepath.Join(dir, "v.json"))
	if code != cli.ExitOK && code != cli.ExitInconclusive {
		t.Fatalf("suite A/A under a hog: exit %d, want 0 or 4\n%s\n%s", code, stdout, lastLines(stderr, 10))
	}
	v := readVerdict(t, filepath.Join(dir, "v.json"))
	if v.Outcome == "fail" || len(v.Candidates) != 1 || v.Candidates[0].Bounded != 4 {
		t.Errorf("verdict %s, %+v", v.Outcome, v.Candidates)
	}
	if !regexp.MustCompile(`(?m)^\s*protocol\s+clients\s+a tps\s+b tps\s+change\s+outcome`).MatchString(stdout) {
		t.Errorf("the suite's table has no outcome column:\n%s", stdout)
	}
}
