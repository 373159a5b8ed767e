package disturbtest_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pgscale/pgscale/internal/cli"
	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/target/targettest"
	"github.com/pgscale/pgscale/internal/testenv"
)

var cluster *target.Cluster

// TestMain starts the package's cluster under /dev/shm with
// synchronous_commit off: the ddl-churn loop, which creates and unlinks
// files and commits on every iteration, then runs at the speed of the CPU
// it takes from the workload, not at the speed of a disk that other
// programs on the machine share.
func TestMain(m *testing.M) {
	os.Exit(targettest.Run(m, target.Options{Tmpfs: true, Settings: []target.Setting{{Name: "synchronous_commit", Value: "off"}}},
		func(c *target.Cluster) { cluster = c }))
}

var initOnce sync.Once

// dsn returns the cluster's DSN, with pgbench's data at scale 1 in it.
func dsn(t *testing.T) string {
	t.Helper()
	d := cluster.ConnString("postgres")
	initOnce.Do(func() {
		var out, errb bytes.Buffer
		if code := cli.Main([]string{"init", "-s", "1", "--dsn", d}, &out, &errb); code != 0 {
			t.Fatalf("pgscale init: exit %d: %s", code, errb.String())
		}
	})
	return d
}

// run runs pgscale in-process and returns its exit code, stdout and stderr.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

// disturbed runs select-only at 4 clients for 24 s with one disturbance
// flag, and returns the step's single window, the output and the step.
func disturbed(t *testing.T, flag, spec string) (result.Disturbance, string, string, result.Step) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := run(t, "run", "-S", "-c", "4", "-T", "24s", "-P", "1", "--dsn", dsn(t), flag, spec, "--out", path)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	f, err := result.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Steps) != 1 || len(f.Steps[0].Disturbances) != 1 {
		t.Fatalf("want one step with one disturbance, got %+v", f.Steps)
	}
	// For the record: where the collector came late (an interval of the
	// 1 s grid that is longer or shorter by a tenth).
	for _, iv := range f.Steps[0].Intervals {
		if iv.LengthS > 1.1 || iv.LengthS < 0.9 {
			t.Logf("interval at %.3f s lasted %.3f s", iv.StartS, iv.LengthS)
		}
	}
	return f.Steps[0].Disturbances[0], stdout, stderr, f.Steps[0]
}

// phasesWhereAsked checks that the window and its phases lie where the
// spec put them: 11-20 s of a 24 s step on the given number of sessions,
// the first 2 s left out before. A phase is the step's whole intervals in
// its stretch, so its edges are derived from the step's own series: an
// interval ends where the collector really came, and on a loaded machine
// the collector once came 2.8 s late to the 2 s tick (CI: the before phase
// began at 4.8 s, at the first interval edge past 2 s), which no planned
// edge with a tolerance survives.
func phasesWhereAsked(t *testing.T, d result.Disturbance, sessions int, stdout string, step result.Step) {
	t.Helper()
	if d.StartS != 11 || d.EndS != 20 || d.Sessions != sessions || d.RanS < 8.5 || d.RanS > 9.5 {
		t.Errorf("window %v-%v s, %d sessions, ran %.2f s; want 11-20 s, %d sessions, about 9 s", d.StartS, d.EndS, d.Sessions, d.RanS, sessions)
	}
	e := d.Effect
	if e == nil || e.Before == nil || e.During == nil || e.After == nil || e.TPS == nil || e.Latency == nil {
		t.Fatalf("effect %+v: want before, during, after and changes", e)
	}
	for _, p := range []struct {
		name     string
		ph       *result.Phase
		from, to float64
	}{{"before", e.Before, 2, 11}, {"during", e.During, 11, 20}, {"after", e.After, 20, 24}} {
		from, to, n := wholeIntervals(step.Intervals, p.from, p.to)
		if n < 3 || p.ph.FromS != from || p.ph.ToS != to || p.ph.Intervals != n || p.ph.TPS <= 0 || p.ph.LatMeanMs <= 0 {
			t.Errorf("%s: %+v; want the %d whole intervals in %v-%v s (%.3f-%.3f s), 3 at least, with tps and latency",
				p.name, p.ph, n, p.from, p.to, from, to)
		}
	}
	if e.TPS.Lo == nil || e.TPS.Hi == nil {
		t.Fatalf("tps change has no interval: %+v (warnings %q)", e.TPS, e.Warnings)
	}
	for _, want := range []string{"  before ", "  during ", "  after ", "during/before: tps "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
}

// wholeIntervals is where the intervals lying wholly in [from, to) begin
// and end, and how many there are; an interval may start or end a tenth of
// its length past the stretch (diagnose.phaseIntervals).
func wholeIntervals(ivs []result.Interval, from, to float64) (first, last float64, n int) {
	for _, iv := range ivs {
		tol := iv.LengthS / 10
		if iv.LengthS > 0 && iv.StartS >= from-tol && iv.StartS+iv.LengthS <= to+tol {
			if n == 0 {
				first = iv.StartS
			}
			last = iv.StartS + iv.LengthS
			n++
		}
	}
	return first, last, n
}

// report logs the window's before/during/after lines, for the record.
func report(t *testing.T, stdout string) {
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "disturbance ") || strings.HasPrefix(l, "  ") {
			t.Log(l)
		}
	}
}

// TestDDLChurnLowersThroughput runs the loop on four sessions, one per
// client: with one session the drop at 4 clients was -28 % to -35 % here
// but -14 % ± 20 % on a busier CI machine, where three 3 s batches a side
// could not tell it from the machine's own swings; four sessions drop
// throughput by 55-63 % here, which survives a machine twice as noisy.
func TestDDLChurnLowersThroughput(t *testing.T) {
	testenv.Slow(t)
	d, stdout, stderr, step := disturbed(t, "--disturb", "ddl-churn@11s-20s:4")
	report(t, stdout)
	if d.Name != "ddl-churn" || !d.Builtin || d.Iterations <= 0 || d.Errors != 0 || d.Rate <= 0 {
		t.Errorf("ddl-churn ran %d iterations, %d errors, %.1f/s: want iterations, no errors", d.Iterations, d.Errors, d.Rate)
	}
	phasesWhereAsked(t, d, 4, stdout, step)
	if c := d.Effect.TPS; c.Hi != nil && !(*c.Hi < 0) {
		t.Errorf("tps change %+.1f%% in [%+.1f%%, %+.1f%%]: want a drop beyond its interval", 100*c.Change, 100**c.Lo, 100**c.Hi)
	}
	for at, mark := range map[string]string{"progress: 11.0 s,": "[ddl-churn started]", "progress: 20.0 s,": "[ddl-churn stopped]"} {
		found := false
		for _, l := range strings.Split(stderr, "\n") {
			if strings.HasPrefix(l, at) {
				found = strings.HasSuffix(l, mark)
			}
		}
		if !found {
			t.Errorf("no progress line %q... ending %q:\n%s", at, mark, stderr)
		}
	}
	if !strings.Contains(stdout, "during/before") {
		t.Errorf("the summary table has no during/before column:\n%s", stdout)
	}
}

func TestDoNothingDisturbanceChangesNothing(t *testing.T) {
	testenv.Slow(t)
	file := filepath.Join(t.TempDir(), "nothing.sql")
	if err := os.WriteFile(file, []byte("SELECT 1;\n\\sleep 100ms\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, stdout, _, step := disturbed(t, "--disturb-file", file+"@11s-20s")
	report(t, stdout)
	// 9 s of SELECT 1 and 100 ms pauses: a little under 90 iterations.
	if d.Builtin || d.Iterations < 45 || d.Iterations > 90 || d.Errors != 0 {
		t.Errorf("%d iterations, %d errors; want about 85, none", d.Iterations, d.Errors)
	}
	phasesWhereAsked(t, d, 1, stdout, step)
	// Checked at 99 % confidence, recomputed from the result file as a
	// report would: a 95 % interval misses a true zero in one run out of
	// twenty, which would make this test fail that often by design.
	diagnose.DisturbanceEffects(&step, diagnose.EffectOptions{Confidence: 0.99})
	c := step.Disturbances[0].Effect.TPS
	if c == nil || c.Lo == nil || c.Hi == nil {
		t.Fatalf("no 99%% interval: %+v", c)
	}
	t.Logf("99%% interval: %+.1f%% in [%+.1f%%, %+.1f%%]", 100*c.Change, 100**c.Lo, 100**c.Hi)
	if !(*c.Lo <= 0 && 0 <= *c.Hi) {
		// A machine whose speed drifts through the step (CI: 49 k tps
		// before, 54 k during, 56 k after) moves during/before with it;
		// a window that did something would leave during outside the
		// span of before and after.
		e := step.Disturbances[0].Effect
		lo, hi := min(e.Before.TPS, e.After.TPS), max(e.Before.TPS, e.After.TPS)
		if e.During.TPS < lo || e.During.TPS > hi {
			t.Errorf("tps change %+.1f%% in [%+.1f%%, %+.1f%%], during %.0f tps outside before %.0f and after %.0f: want an interval holding 0",
				100*c.Change, 100**c.Lo, 100**c.Hi, e.During.TPS, e.Before.TPS, e.After.TPS)
		} else {
			t.Logf("the machine drifted: before %.0f, during %.0f, after %.0f tps", e.Before.TPS, e.During.TPS, e.After.TPS)
		}
	}
}

func TestBadWindowSpecsExit2(t *testing.T) {
	file := filepath.Join(t.TempDir(), "nothing.sql")
	if err := os.WriteFile(file, []byte("SELECT 1;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := cluster.ConnString("postgres")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--disturb", "ddl-churn@35s-50s"}, `--disturb "ddl-churn@35s-50s": the window ends at 50s, after the end of the run (-T 40s)`},
		{[]string{"--disturb", "checkpoint@40s"}, `--disturb "checkpoint@40s": the window starts at 40s, at or after the end of the run`},
		{[]string{"--disturb-file", file + "@30s-45s:2"}, `--disturb-file "` + file + `@30s-45s:2": the window ends at 45s`},
		{[]string{"--disturb", "ddl-churn@10s-20s", "--disturb", "ddl-churn@15s-30s"}, `--disturb "ddl-churn@15s-30s": overlaps ddl-churn@10s-20s`},
		{[]string{"--disturb", "ddl-churn@15s+30s"}, `--disturb "ddl-churn@15s+30s": "15s+30s" is not START[-END][:SESSIONS]`},
		{[]string{"--disturb", "ddl-churn@30s-15s"}, `--disturb "ddl-churn@30s-15s": "30s-15s" is not START[-END][:SESSIONS] (e.g. 15s-30s:2): the end must come after the start`},
		{[]string{"--disturb", "ddl-churn"}, `--disturb "ddl-churn": no window`},
		{[]string{"--disturb", "ddl-churn@10s-20s:0"}, `--disturb "ddl-churn@10s-20s:0": "10s-20s:0" is not START[-END][:SESSIONS]`},
		{[]string{"--disturb", "churn@10s"}, `--disturb "churn@10s": no built-in disturbance "churn" (have analyze, checkpoint, ddl-churn, long-txn, vacuum)`},
		{[]string{"--disturb", "checkpoint=soon@10s"}, `--disturb "checkpoint=soon@10s": checkpoint=soon: "soon" is not a duration`},
		{[]string{"--disturb-file", "/nonexistent.sql@1s-2s"}, `--disturb-file "/nonexistent.sql@1s-2s": cannot read script`},
	}
	out := filepath.Join(t.TempDir(), "r.json")
	for _, tt := range tests {
		args := append([]string{"run", "-S", "-c", "1", "-T", "40s", "--dsn", d, "--out", out}, tt.args...)
		code, stdout, stderr := run(t, args...)
		if code != cli.ExitUsage {
			t.Errorf("%q: exit %d, want %d\nstdout: %s\nstderr: %s", tt.args, code, cli.ExitUsage, stdout, stderr)
			continue
		}
		if !strings.HasPrefix(stderr, "pgscale: "+tt.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: stderr %q; want one line starting %q", tt.args, stderr, "pgscale: "+tt.want)
		}
	}
	code, _, stderr := run(t, "run", "-S", "-c", "1", "-t", "100", "--dsn", d, "--out", out, "--disturb", "ddl-churn@1s")
	if code != cli.ExitUsage || !strings.Contains(stderr, "--disturb needs -T") {
		t.Errorf("-t with --disturb: exit %d, %q; want 2 and that it needs -T", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a run with a bad window wrote a result file")
	}
}
