package integration_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/cli"
	"github.com/pgscale/pgscale/internal/target/targettest"
	"github.com/pgscale/pgscale/internal/testenv"
)

// The gate decides under a CPU hog, as a simulation-mode CI does: two
// identical pgbouncers counted under Valgrind alone (--count pooler, the
// servers native) at 1 and 4 clients, given no --bound, decide on the
// pooler's instructions at one client and pass; at 4 clients the count is
// labelled timing-dependent and, where this runner's spread cannot decide
// it, left unbounded and said once — the same words in the text, the
// markdown, the comment and the verdict file — without making the verdict
// inconclusive. 21–42 s here at load 8–19 (one cluster per target, kept:
// --reshuffle 0, so that the test's time is the counting's).
func TestGateDecidesOnCountsUnderHog(t *testing.T) {
	trackTime(t)
	testenv.Slow(t) // two pgbouncers counted under Valgrind, rounds until decided under a CPU hog
	targettest.NeedPgBouncer(t)
	testenv.NeedProgram(t, "valgrind", "Debian: apt-get install valgrind")
	startHog(t, 1)
	dir := t.TempDir()
	out := func(name string) string { return filepath.Join(dir, name) }
	var stderr syncBuffer
	code, stdout := abCLI(t, &stderr, "ab", "--target", "a=pgbouncer:,of='settings:'", "--target", "b=pgbouncer:,of='settings:'", "-S", "-M", "simple", "-c", "1,4", "-t", "100",
		"--count", "pooler", "--reshuffle", "0", "--rounds", "auto:4", "--out", out("r"),
		"--verdict", out("v.json"), "--markdown", out("m.md"), "--comment", out("c.md"))
	if code != cli.ExitOK {
		t.Fatalf("an A/A of the pooler's counts under a hog: exit %d, want 0 (passed)", code)
	}
	if !strings.Contains(stderr.String(), "counted, and given no --bound: deciding on pooler-instr/txn@c=1=+1%, pooler-instr/txn=+1% if decidable") {
		t.Errorf("the default bounds are not said:\n%s", lastLines(stderr.String(), 20))
	}
	v := readVerdict(t, out("v.json"))
	one, four := measure(t, v, "pooler-instr/txn@c=1"), measure(t, v, "pooler-instr/txn@c=4")
	if v.Outcome != "pass" || one.Outcome != "pass" || one.Timing != "" {
		t.Errorf("verdict %s; at one client %s (timing %q), want pass", v.Outcome, one.Outcome, one.Timing)
	}
	if !strings.HasPrefix(four.Timing, "event-loop batching") {
		t.Errorf("at 4 clients: timing %q, want event-loop batching", four.Timing)
	}
	md, comment := string(mustRead(t, out("m.md"))), string(mustRead(t, out("c.md")))
	if !strings.Contains(stdout, "pooler-instr/txn (instructions, timing-dependent)") || !strings.Contains(comment, "_timing-dependent_") {
		t.Errorf("the step at 4 clients is not labelled timing-dependent in the table or the comment:\n%s", comment)
	}
	if four.Spread != nil {
		t.Logf("at 4 clients: %s, %s, spread ±%.1f%%", four.Text, four.Outcome, 100**four.Spread)
	}
	if !four.Undecidable {
		// This runner's spread decided it: bounded, and nothing to say.
		if v.Reach != nil || four.Outcome != "pass" {
			t.Errorf("decided at 4 clients (%s), yet a reach %+v", four.Outcome, v.Reach)
		}
		return
	}
	if v.Reach == nil || len(v.Reach.Timing) != 1 || v.Reach.Decided != "the counted measures decided" || four.Outcome != "no bound" {
		t.Fatalf("left to the spread at 4 clients (%s), reach %+v", four.Outcome, v.Reach)
	}
	// Said once, in every output, the same words (the text wraps them).
	for _, part := range []string{"pooler-instr/txn at 4 clients depends on timing (event-loop batching", "The counted measures decided."} {
		if !strings.Contains(v.Reach.Text, part) {
			t.Errorf("the verdict file's reach lacks %q: %s", part, v.Reach.Text)
		}
		for name, text := range map[string]string{"markdown": md, "comment": comment, "text": strings.Join(strings.Fields(stdout), " ")} {
			if n := strings.Count(text, part); n != 1 {
				t.Errorf("the %s says %q %d times, want once", name, part, n)
			}
		}
	}
	if strings.Contains(stdout, "would decide it") || strings.Contains(comment, "would decide it") {
		t.Errorf("advice of rounds for a measure left to the spread")
	}
	if _, err := os.Stat(out("r")); err != nil {
		t.Error(err)
	}
}
