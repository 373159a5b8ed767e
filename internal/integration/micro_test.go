package integration_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/cli"
	"github.com/pgscale/pgscale/internal/micro"
	"github.com/pgscale/pgscale/internal/schedule/cells"
	"github.com/pgscale/pgscale/internal/testenv"
)

// microRepo makes a git repository of a fixture (testdata/FIXTURE's
// files) with two commits: "base", and "slow", where SLOWED is replaced by
// SLOWED.slow.
func microRepo(t *testing.T, fixture, slowed string, files ...string) string {
	t.Helper()
	testenv.NeedProgram(t, "git", "Debian: apt-get install git")
	dir := filepath.Join(t.TempDir(), fixture)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile := func(from, to string) {
		b, err := os.ReadFile(filepath.Join("testdata", fixture, from))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, to), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=pgscale", "-c", "user.email=pgscale@localhost"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	for _, f := range files {
		copyFile(f, f)
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-qm", "base")
	git("tag", "base")
	copyFile(slowed+".slow", slowed)
	git("commit", "-qam", "twice the work")
	git("tag", "slow")
	return dir
}

// microGoRepo is the Go fixture (testdata/microgo) at its two commits:
// at "slow" Sum does twice the work (BenchmarkSum/n=1000 and n=10000
// slower, the others unchanged).
func microGoRepo(t *testing.T) string {
	t.Helper()
	testenv.NeedProgram(t, "go", "the Go toolchain")
	return microRepo(t, "microgo", "work.go", "go.mod", "work.go", "work_test.go")
}

// microGoCmd runs the fixture's benchmarks: each a fixed number of
// iterations, wall and CPU time per iteration, allocations. The test
// binary is built once per tree (the exported tree lasts the run): a round
// then takes a second or two instead of the go command's ten on a loaded
// machine, so rounding until decided can afford the rounds it needs there.
const microGoCmd = "[ -x b.test ] || go test -c -o b.test; ./b.test -test.run '^$' -test.bench . -test.benchmem -test.benchtime 20000x"

// The Go fixture at its two commits under a CPU hog the test starts:
// the two Sum benchmarks, which do twice the work, fail their bound on
// CPU time per iteration; Checksum and Reverse, unchanged, never fail
// theirs (they pass, or are inconclusive when this VM's slow spells
// widen their interval past the bound: the counted test below shows them
// unchanged deterministically); the group line says both Sum benchmarks
// are slower, and the comment has the bot's micro section.
func TestMicroGoFindsTheSlowedBenchmark(t *testing.T) {
	testenv.Slow(t)
	trackTime(t)
	repo := microGoRepo(t)
	startHog(t, 1)
	dir := t.TempDir()
	comment, verdict, page := filepath.Join(dir, "comment.md"), filepath.Join(dir, "verdict.json"), filepath.Join(dir, "report.html")
	_, a, stdout := microRegressed(t, "micro:*@cpu-ns/op=+10%", "--target", "base="+repo+"@base", "--target", "slow="+repo+"@slow",
		"--cmd", microGoCmd, "--rounds", "auto:20", "--group-unit", "cpu-ns/op", "--comment", comment, "--verdict", verdict, "--html", page)
	slowed, unchanged := []string{"BenchmarkSum/n=1000", "BenchmarkSum/n=10000"}, []string{"BenchmarkChecksum", "BenchmarkReverse"}
	got := map[string]string{}
	for _, r := range a.Candidates[0].Rows {
		if r.Unit == "cpu-ns/op" {
			got[r.Bench] = r.Outcome.String()
			t.Logf("%s %s %s: %s", r.Bench, r.Unit, r.Comparison, r.Outcome)
		}
	}
	wantMicroOutcomes(t, "", got, slowed, unchanged)
	if !regexp.MustCompile(`BenchmarkSum \(cpu-ns/op\): 2 of 2 slower, 2 past its bound, median \+\d+`).MatchString(stdout) {
		t.Errorf("no group line saying both Sum benchmarks are slower:\n%s", stdout)
	}
	md, err := os.ReadFile(comment)
	if err != nil {
		t.Fatal(err)
	}
	if !microHeadline("**Microbench** (slow against base): ", 4, 2).Match(md) {
		t.Errorf("comment lacks the micro headline of 2 failed of 4:\n%s", md)
	}
	for _, w := range []string{"| `BenchmarkSum/n=10000` | cpu-ns/op |", "- BenchmarkSum (cpu-ns/op): 2 of 2 slower"} {
		if !strings.Contains(string(md), w) {
			t.Errorf("comment lacks %q:\n%s", w, md)
		}
	}
	for _, b := range unchanged {
		if got[b] == "pass" && strings.Contains(string(md), b) {
			t.Errorf("the comment's table lists %s, within its bound:\n%s", b, md)
		}
	}
	// The verdict file: every benchmark's measure with its outcome.
	var v struct {
		Outcome string `json:"outcome"`
		Micro   []struct {
			Candidates []struct {
				Measures []struct {
					Cell, Unit, Outcome string
				} `json:"details"`
			} `json:"candidates"`
		} `json:"micro"`
	}
	b, err := os.ReadFile(verdict)
	if err == nil {
		err = json.Unmarshal(b, &v)
	}
	if err != nil {
		t.Fatal(err)
	}
	gotV := map[string]string{}
	for _, m := range v.Micro[0].Candidates[0].Measures {
		if m.Unit == "cpu-ns/op" {
			gotV[m.Cell] = m.Outcome
		}
	}
	if v.Outcome != "fail" || len(gotV) != len(got) {
		t.Errorf("verdict file: outcome %s, cpu-ns/op outcomes %v", v.Outcome, gotV)
	}
	for bench, o := range got {
		if gotV[bench] != o {
			t.Errorf("verdict file: %s %s, the run file's judging %s", bench, gotV[bench], o)
		}
	}
	if h, err := os.ReadFile(page); err != nil || !strings.Contains(string(h), `<section id="micro"`) || !strings.Contains(string(h), "<code>BenchmarkSum/n=10000</code>") {
		t.Errorf("the HTML page has no micro section: %v", err)
	}
}

// microRegressed runs pgscale micro with args and --bound bound, wants
// exit 1 (a regression), and returns the run file, it judged against the
// bound, and the standard output.
func microRegressed(t *testing.T, bound string, args ...string) (*micro.Run, *micro.Analysis, string) {
	t.Helper()
	runFile := filepath.Join(t.TempDir(), "micro.json")
	code, stdout, stderr := pgscale(t, append(append([]string{"micro"}, args...), "--bound", bound, "--out", runFile)...)
	t.Logf("exit %d\n%s\n%s", code, stdout, stderr)
	if code != cli.ExitRegression {
		t.Fatalf("exit %d, want 1 (a regression)", code)
	}
	run, err := micro.ReadRun(runFile)
	if err != nil {
		t.Fatal(err)
	}
	a, err := micro.Analyze(run, micro.Options{Bounds: mustBounds(t, bound)})
	if err != nil {
		t.Fatal(err)
	}
	return run, a, stdout
}

// wantMicroOutcomes checks a micro comparison's outcomes by benchmark:
// each slowed one failed its bound; each unchanged one did not (passed,
// or inconclusive when the machine's spread leaves its bound undecided:
// a loaded VM's slow spells can move one round of a scalar loop by half,
// and the verdict must say it cannot tell rather than pass). A false
// alarm or a missed slowdown fails the test.
func wantMicroOutcomes(t *testing.T, unit string, got map[string]string, slowed, unchanged []string) {
	t.Helper()
	for _, b := range slowed {
		if got[b] != "fail" {
			t.Errorf("%s %s: %s, want fail (it does twice the work)", b, unit, got[b])
		}
	}
	for _, b := range unchanged {
		switch got[b] {
		case "pass":
		case "inconclusive":
			t.Logf("%s %s: inconclusive on this machine (not a false alarm)", b, unit)
		default:
			t.Errorf("%s %s: %q, want pass or inconclusive (it is unchanged)", b, unit, got[b])
		}
	}
}

// microHeadline matches the micro section's count line: of the n bounded
// measures, the failed ones and any inconclusive (the unchanged ones may
// be, on a loaded machine), the rest within bounds.
func microHeadline(prefix string, n, failed int) *regexp.Regexp {
	return regexp.MustCompile(regexp.QuoteMeta(prefix) + fmt.Sprintf(`(\d+) of %d measures within bounds \(%d failed, (\d+) inconclusive\)`, n, failed))
}

func mustBounds(t *testing.T, specs ...string) []micro.Bound {
	t.Helper()
	bs, err := micro.ParseBounds(specs)
	if err != nil {
		t.Fatal(err)
	}
	return bs
}

// Bad input gets one line each and the run is incomplete (exit 3), the
// rounds before it judged: a command that fails, one that prints nothing
// the format reads, and targets that report different benchmarks.
func TestMicroBadInput(t *testing.T) {
	trackTime(t)
	testenv.NeedProgram(t, "git", "Debian: apt-get install git")
	tree := t.TempDir()
	bench := func(name string) string {
		return "BenchmarkA 1000 10.0 ns/op\\n" + name + " 1000 20.0 ns/op\\n"
	}
	for _, tc := range []struct {
		name, cmd, want string
	}{
		{"fails", "echo 'broken build' >&2; exit 3", `round 1, base: exit status 3: broken build`},
		{"unparseable", "echo hello world", `round 1, base: its output holds no benchmark in the go format`},
		{"names differ", `if [ "$PGSCALE_MICRO_TARGET" = base ]; then printf '` + bench("BenchmarkB") + `'; else printf '` + bench("BenchmarkC") + `'; fi`,
			`BenchmarkB: not reported by cand; left out`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "m.json")
			code, stdout, stderr := pgscale(t, "micro", "--target", "base="+tree, "--target", "cand="+tree, "--cmd", tc.cmd, "--rounds", "2", "--out", out)
			if code != cli.ExitIncomplete {
				t.Errorf("exit %d, want 3\n%s\n%s", code, stdout, stderr)
			}
			if !strings.Contains(stdout, "incomplete: "+tc.want) {
				t.Errorf("stdout lacks %q:\n%s", tc.want, stdout)
			}
			if _, err := micro.ReadRun(out); err != nil {
				t.Errorf("the run file: %v", err)
			}
		})
	}
	// The names that both report are still judged.
	code, stdout, stderr := pgscale(t, "micro", "--target", "base="+tree, "--target", "cand="+tree, "--rounds", "2",
		"--cmd", `printf 'BenchmarkA 1000 10.0 ns/op\n'`, "--bound", "micro:BenchmarkZ=+5%", "--out", filepath.Join(t.TempDir(), "m.json"))
	if code != cli.ExitUsage || !strings.Contains(stderr, `bound "micro:BenchmarkZ=+5%": matches the primary measure of no benchmark`) {
		t.Errorf("a bound that matches no benchmark: exit %d, want 2\n%s\n%s", code, stdout, stderr)
	}
}

// The Google Benchmark fixture (testdata/microgbench, C++, Debian's
// libbenchmark-dev) at its two commits under a CPU hog: BM_Sum, whose
// sum does twice the work at "slow", fails its bound on CPU time per
// iteration at both sizes; BM_Copy, unchanged, does not fail.
func TestMicroGoogleBenchmark(t *testing.T) {
	testenv.Slow(t)
	trackTime(t)
	repo := needGbench(t)
	startHog(t, 1)
	// Built once per tree: the exported tree lasts the run.
	cmd := "[ -x bench ] || g++ -O2 -o bench bench.cc -lbenchmark -lpthread; ./bench --benchmark_format=json --benchmark_min_time=0.05 --benchmark_repetitions=3"
	_, a, stdout := microRegressed(t, "micro:*@cpu-ns/op=+10%", "--format", "gbench", "--target", "base="+repo+"@base", "--target", "slow="+repo+"@slow",
		"--cmd", cmd, "--rounds", "auto:20", "--group-unit", "cpu-ns/op")
	got := map[string]string{}
	for _, r := range a.Candidates[0].Rows {
		if r.Unit == "cpu-ns/op" {
			got[r.Bench] = r.Outcome.String()
			t.Logf("%s %s %s: %s", r.Bench, r.Unit, r.Comparison, r.Outcome)
		}
	}
	wantMicroOutcomes(t, "cpu-ns/op", got, []string{"BM_Sum/1000", "BM_Sum/10000"}, []string{"BM_Copy"})
	// The group of the CPU times: the wall times' (the default) under the
	// hog are now and then not significantly slower after Holm.
	if !strings.Contains(stdout, "BM_Sum (cpu-ns/op): 2 of 2 slower") {
		t.Errorf("no group line for BM_Sum:\n%s", stdout)
	}
}

// needGbench skips (fails in CI) without g++ and Google Benchmark, and
// makes the Google Benchmark fixture's repository (testdata/microgbench):
// at "slow" BM_Sum does twice the work.
func needGbench(t *testing.T) string {
	t.Helper()
	testenv.NeedProgram(t, "g++", "Debian: apt-get install g++")
	if _, err := os.Stat("/usr/include/benchmark/benchmark.h"); err != nil {
		testenv.Need(t, errors.New("Google Benchmark is not installed (Debian: apt-get install libbenchmark-dev)"))
	}
	return microRepo(t, "microgbench", "work.h", "bench.cc", "work.h")
}

// The Google Benchmark fixture counted under callgrind (--count
// instructions) with a CPU hog running. Debian's Google Benchmark (1.7)
// chooses its iterations by time and refuses --benchmark_min_time=Nx, so
// each count runs a benchmark for a time and reads the iterations it
// reports, and only the benchmark's loop is counted (from
// State::StartKeepRunning's return to FinishKeepRunning): BM_Sum/1000,
// twice the work at "slow", doubles its instructions per iteration and
// fails its bound; BM_Copy counts the same to the instruction in every
// round and passes.
func TestMicroGoogleBenchmarkCounted(t *testing.T) {
	testenv.Slow(t)
	trackTime(t)
	testenv.NeedProgram(t, "valgrind", "Debian: apt-get install valgrind")
	repo := needGbench(t)
	startHog(t, 1)
	// One Sum and Copy: each count is a process under callgrind, 16 of
	// them. The calibration's repetitions are one benchmark each.
	cmd := "[ -x bench ] || g++ -O2 -o bench bench.cc -lbenchmark -lpthread; $PGSCALE_MICRO_EXEC ./bench --benchmark_format=json --benchmark_min_time=0.05 --benchmark_repetitions=3 '--benchmark_filter=BM_Sum/1000$|BM_Copy'"
	run, a, stdout := microRegressed(t, "micro:*@instr/op=+1%", "--format", "gbench", "--target", "base="+repo+"@base", "--target", "slow="+repo+"@slow",
		"--count", "instructions", "--cmd", cmd, "--rounds", "2")
	if c := run.Counted; c == nil || len(c.Loop) != 2 || len(c.Timed) != 2 || c.Seconds["BM_Sum/1000"] <= 0 {
		t.Fatalf("the run file's counting: %+v", run.Counted)
	}
	wantCounted(t, a, map[string]countedWant{"BM_Sum/1000": {"fail", 1, 0.05}, "BM_Copy": {"pass", 0, 0.001}})
	// The count is of the loop alone, whatever iterations a count ran: the
	// same value in every round.
	for _, r := range run.Rounds {
		for _, tr := range r.Runs {
			for _, s := range tr.Samples {
				if first := run.Rounds[0].Runs[0]; s.Name == "BM_Copy" && s.Values[0].Value != sampleOf(first.Samples, "BM_Copy").Values[0].Value {
					t.Errorf("BM_Copy %s: %v instructions an iteration, %v in round 1's %s", tr.Target, s.Values[0].Value, sampleOf(first.Samples, "BM_Copy").Values[0].Value, first.Target)
				}
			}
		}
	}
	if !strings.Contains(stdout, "run for T and 2T seconds, divided by the difference of the iterations the program reported") {
		t.Errorf("the output does not say how the run was counted")
	}
}

// countedWant is what a counted benchmark's instr/op must come to: its
// outcome, and its change within tol of change.
type countedWant struct {
	outcome     string
	change, tol float64
}

// wantCounted checks a counted comparison: exactly the benchmarks of
// want, each with its outcome and change.
func wantCounted(t *testing.T, a *micro.Analysis, want map[string]countedWant) {
	t.Helper()
	got := map[string]bool{}
	for _, r := range a.Candidates[0].Rows {
		t.Logf("%s %s %s: %s", r.Bench, r.Unit, r.Comparison, r.Outcome)
		w, ok := want[r.Bench]
		got[r.Bench] = ok
		switch {
		case !ok || r.Unit != micro.UnitInstructions:
			t.Errorf("%s %s: not wanted", r.Bench, r.Unit)
		case r.Outcome.String() != w.outcome:
			t.Errorf("%s: %s, want %s", r.Bench, r.Outcome, w.outcome)
		case math.Abs(r.Change-w.change) > w.tol:
			t.Errorf("%s: %s, want %+.0f%% ± %.1f%%", r.Bench, r.Comparison, 100*w.change, 100*w.tol)
		}
	}
	for b := range want {
		if !got[b] {
			t.Errorf("%s: not counted", b)
		}
	}
}

// sampleOf is the sample of bench in ss (a zero one if none).
func sampleOf(ss []micro.Sample, bench string) micro.Sample {
	for _, s := range ss {
		if s.Name == bench {
			return s
		}
	}
	return micro.Sample{Values: []micro.Value{{}}}
}

// --count refuses, in one line and before anything runs, a format whose
// program cannot be counted and a command that does not run its program
// through $PGSCALE_MICRO_EXEC (exit 2); a program of the gbench format
// that is not Google Benchmark's, whose loop callgrind never sees, is one
// line too, the run incomplete (exit 3).
func TestMicroCountRefusals(t *testing.T) {
	trackTime(t)
	tree := t.TempDir()
	marker := filepath.Join(tree, "ran")
	for _, tc := range []struct{ name, format, cmd, want string }{
		{"pytest", "pytest", "touch " + marker + "; $PGSCALE_MICRO_EXEC true", "--count: the pytest format's program cannot be run for a fixed number of iterations"},
		{"no exec", "go", "touch " + marker + "; ./b.test -test.bench .", "--count: the command must run its benchmark program through $PGSCALE_MICRO_EXEC"},
	} {
		code, stdout, stderr := pgscale(t, "micro", "--format", tc.format, "--output", "out.json", "--target", "base="+tree, "--target", "cand="+tree,
			"--count", "instructions", "--cmd", tc.cmd, "--out", filepath.Join(t.TempDir(), "m.json"))
		if code != cli.ExitUsage || !oneLine(stderr) || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, want 2 and %q\n%s%s", tc.name, code, tc.want, stdout, stderr)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Errorf("%s: the command ran before the refusal", tc.name)
		}
	}
	testenv.Slow(t) // the rest counts a program under Valgrind
	testenv.NeedProgram(t, "valgrind", "Debian: apt-get install valgrind")
	fake := `{"benchmarks": [{"name": "BM_Fake", "iterations": 5, "real_time": 10, "cpu_time": 10, "time_unit": "ns"}]}`
	if err := os.WriteFile(filepath.Join(tree, "fake.json"), []byte(fake), 0o644); err != nil {
		t.Fatal(err)
	}
	// The arguments a count appends go to sh as its $1, $2, ...: unread.
	code, stdout, stderr := pgscale(t, "micro", "--format", "gbench", "--target", "base="+tree, "--target", "cand="+tree, "--count", "instructions", "--rounds", "2",
		"--cmd", "$PGSCALE_MICRO_EXEC /bin/sh -c 'cat fake.json' sh", "--out", filepath.Join(t.TempDir(), "m.json"))
	if code != cli.ExitIncomplete || !strings.Contains(stdout, "incomplete: round 1, base: counting BM_Fake (0.1 s): callgrind saw no loop of the benchmark's") {
		t.Errorf("a gbench program without Google Benchmark's loop: exit %d, want 3\n%s%s", code, stdout, stderr)
	}
}

// aaSuite is the head of a suite file whose one macro cell is an A/A of
// the test server's database as base and slow, a second a step, two
// rounds: the micro cells' companion.
func aaSuite(name string) string {
	return `name: ` + name + `
targets: ["base=dsn:` + dsn("postgres") + `", "slow=dsn:` + dsn("postgres") + `"]
scripts: [{builtin: select-only}]
clients: [1]
duration: 1s
warmup: 0.2s
rounds: 2
`
}

// A suite with a macro cell (an A/A of one database, within its bound)
// and a micro cell (the Go fixture at its two commits): one verdict over
// both — failed, by the slowed benchmarks — in the text and the comment,
// the micro cell's run file in the bundle, and compare of the bundle
// judging it again the same way.
func TestSuiteMicroCell(t *testing.T) {
	testenv.Slow(t)
	trackTime(t)
	noCIEnv(t)
	repo := microGoRepo(t)
	src := aaSuite("with-micro") + `bounds: [tps=-90%]
micro:
  - name: go
    cmd: "` + microGoCmd + `"
    trees: {base: "` + repo + `@base", slow: "` + repo + `@slow"}
    bounds: ["micro:*@cpu-ns/op=+10%"]
    group_unit: cpu-ns/op
    rounds: auto:20
`
	file := filepath.Join(t.TempDir(), "micro.yaml")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "bundle")
	comment := filepath.Join(t.TempDir(), "comment.md")
	loc := filepath.Join(t.TempDir(), "history.db")
	code, stdout, stderr := pgscale(t, "suite", file, "--out", out, "--comment", comment, "--store", loc)
	t.Logf("exit %d\n%s\n%s", code, stdout, lastLines(stderr, 20))
	if code != cli.ExitRegression {
		t.Fatalf("exit %d, want 1: the micro cell's slowed benchmarks fail", code)
	}
	if _, err := micro.ReadRun(filepath.Join(out, "micro-go.json")); err != nil {
		t.Errorf("the micro cell's run file: %v", err)
	}
	// One Holm correction over the macro cell's 8 measures and the micro
	// cell's 17 (4 benchmarks: time, CPU time, B/op, allocs/op, and
	// Checksum's MB/s).
	if !strings.Contains(stdout, "changes Holm-corrected over all 25 measures of the suite (17 of them its micro cells')") {
		t.Errorf("the suite's method line does not count the micro cell's measures:\n%s", stdout)
	}
	if !strings.Contains(stdout, "micro cell go: micro-benchmarks: ") || !microHeadline("slow against base: Microbench: ", 4, 2).MatchString(stdout) {
		t.Errorf("stdout lacks the micro cell's line of 2 failed of 4:\n%s", stdout)
	}
	md, err := os.ReadFile(comment)
	if err != nil {
		t.Fatal(err)
	}
	// The macro cell, an A/A of two rounds, passes or is inconclusive;
	// the one verdict is the micro cell's failure.
	if !regexp.MustCompile(`(?m)^### pgscale suite with-micro: ❌ (passed|inconclusive): [^\n]*; micro-benchmarks failed$`).Match(md) {
		t.Errorf("the comment's headline is not the one verdict:\n%s", md)
	}
	if !microHeadline("**Microbench go** (slow against base): ", 4, 2).Match(md) || !strings.Contains(string(md), "| `BenchmarkSum/n=1000` | cpu-ns/op |") {
		t.Errorf("comment lacks the micro section of 2 failed of 4:\n%s", md)
	}
	code, again, _ := pgscale(t, "compare", out)
	if code != cli.ExitRegression || !microHeadline("slow against base: Microbench: ", 4, 2).MatchString(again) {
		t.Errorf("compare of the bundle: exit %d\n%s", code, again)
	}
	// --store kept the micro cell's run beside the macro cell's files, a
	// series per benchmark's measure under the suite's name, and history
	// add of the bundle finds them stored.
	runFile := filepath.Join(out, "micro-go.json")
	for _, target := range []string{"base", "slow"} {
		if !strings.Contains(stdout, "stored: "+runFile+" (target "+target+") as result ") {
			t.Errorf("stdout does not say the micro cell's run was stored for %s", target)
		}
	}
	code, list, _ := pgscale(t, "history", "list", "--store", loc, "workload=with-micro", "label=slow", "measure=micro:BenchmarkSum/n=1000@cpu-ns/op")
	if code != cli.ExitOK || !strings.Contains(list, "with-micro micro:go  slow") {
		t.Errorf("history list of the suite's micro series: exit %d\n%s", code, list)
	}
	code, added, _ := pgscale(t, "history", "add", "--store", loc, out)
	if code != cli.ExitOK || !strings.Contains(added, "stored: "+runFile+" (target slow) was stored before") {
		t.Errorf("history add of the bundle: exit %d\n%s", code, added)
	}
}

// suite --count counts a suite's micro cells: here by resuming a bundle
// whose macro cell (an A/A on one database, which counting would run
// under Valgrind on servers of its own, minutes) is complete and whose
// micro cells' run files are gone. The Google Benchmark cell, whose
// command runs its program through $PGSCALE_MICRO_EXEC, is counted:
// BM_Sum/1000 doubles its instructions and fails the cell's instr/op
// bound, BM_Copy passes, and the cell's bound on cpu-ns/op, a timed
// measure, is said not used (as the instr/op bound is in the timed run
// before); the BMF cell, whose program cannot be counted, runs timed,
// said in one line before anything runs (and by --dry-run). With a CPU
// hog; about a minute.
func TestSuiteMicroCellCounted(t *testing.T) {
	testenv.Slow(t)
	trackTime(t)
	noCIEnv(t)
	testenv.NeedProgram(t, "valgrind", "Debian: apt-get install valgrind")
	repo := needGbench(t)
	startHog(t, 1)
	src := aaSuite("counted-micro") + `micro:
  - name: gb
    format: gbench
    cmd: "[ -x bench ] || g++ -O2 -o bench bench.cc -lbenchmark -lpthread; $PGSCALE_MICRO_EXEC ./bench --benchmark_format=json --benchmark_min_time=0.01 '--benchmark_filter=BM_Sum/1000$|BM_Copy'"
    trees: {base: "` + repo + `@base", slow: "` + repo + `@slow"}
    bounds: ["micro:*@cpu-ns/op=+50%", "micro:*@instr/op=+1%"]
    group_unit: cpu-ns/op
    rounds: 2
  - name: bm
    format: bmf
    cmd: "printf '{\"b\":{\"latency\":{\"value\":1}}}'"
    trees: {base: "` + repo + `@base", slow: "` + repo + `@slow"}
    rounds: 2
`
	file := filepath.Join(t.TempDir(), "counted.yaml")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	note := "pgscale: note: micro cell bm is not counted but timed, as without count: the bmf format's program cannot be run for a fixed number of iterations"
	code, dry, stderr := pgscale(t, "suite", file, "--dry-run", "--count", "instructions")
	if code != cli.ExitOK || !strings.Contains(dry, note) {
		t.Errorf("--dry-run --count: exit %d, want 0 and the note %q\n%s%s", code, note, dry, stderr)
	}
	out := filepath.Join(t.TempDir(), "bundle")
	code, stdout, stderr := pgscale(t, "suite", file, "--out", out)
	t.Logf("timed: exit %d\n%s\n%s", code, stdout, lastLines(stderr, 10))
	if code == cli.ExitUsage || code == cli.ExitIncomplete {
		t.Fatalf("the timed suite: exit %d", code)
	}
	if !strings.Contains(stdout, "not used: bound micro:*@instr/op=+1%: this run was timed") {
		t.Errorf("the timed run does not say its instr/op bound is not used:\n%s", stdout)
	}
	for _, name := range []string{"gb", "bm"} {
		if err := os.Remove(filepath.Join(out, cells.MicroFile(name))); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, stderr = pgscale(t, "suite", file, "--resume", out, "--count", "instructions")
	t.Logf("counted: exit %d\n%s\n%s", code, stdout, lastLines(stderr, 20))
	if code != cli.ExitRegression {
		t.Fatalf("exit %d, want 1: BM_Sum/1000's instructions double", code)
	}
	if !strings.Contains(stderr+stdout, note) {
		t.Errorf("no note that the BMF cell is timed")
	}
	run, err := micro.ReadRun(filepath.Join(out, cells.MicroFile("gb")))
	if err != nil || run.Counted == nil || len(run.Counted.Timed) != 2 {
		t.Fatalf("the counted cell's run file: %v, %+v", err, run)
	}
	a, err := micro.Judge(run)
	if err != nil {
		t.Fatal(err)
	}
	wantCounted(t, a, map[string]countedWant{"BM_Sum/1000": {"fail", 1, 0.05}, "BM_Copy": {"pass", 0, 0.001}})
	if !strings.Contains(stdout, "not used: bound micro:*@cpu-ns/op=+50%: this run was counted") {
		t.Errorf("the counted run does not say its cpu-ns/op bound is not used:\n%s", stdout)
	}
	if bm, err := micro.ReadRun(filepath.Join(out, cells.MicroFile("bm"))); err != nil || bm.Counted != nil {
		t.Errorf("the BMF cell's run file: %v, counted %+v", err, bm)
	}
}

// The trees of targets that build from a source: src:'s tree, the one
// ext= extension of settings:, each at its revision; a kind with no
// source is refused in one line. The command counts the lines of the
// slowed Sum in its tree, so each side's value says which revision it ran
// in.
func TestMicroTreesOfBuildTargets(t *testing.T) {
	trackTime(t)
	repo := microGoRepo(t)
	cmd := `printf 'BenchmarkTree 1 %d ns/op\n' $(( $(grep -c 'k < 2' work.go) + 1 ))`
	for _, pair := range [][2]string{{"src:" + repo + "@base", "src:" + repo + "@slow"}, {"settings:ext=" + repo + "@base", "settings:ext=" + repo + "@slow"}} {
		out := filepath.Join(t.TempDir(), "m.json")
		code, stdout, stderr := pgscale(t, "micro", "--target", "base="+pair[0], "--target", "slow="+pair[1], "--cmd", cmd, "--rounds", "2", "--out", out)
		if code != cli.ExitOK {
			t.Fatalf("%v: exit %d\n%s\n%s", pair, code, stdout, stderr)
		}
		run, err := micro.ReadRun(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range run.Rounds {
			for _, tr := range r.Runs {
				want := map[string]float64{"base": 1, "slow": 2}[tr.Target]
				if got := tr.Samples[0].Values[0].Value; got != want {
					t.Errorf("%v: %s ran in a tree whose Sum has %v doubled loops, want %v", pair, tr.Target, got-1, want-1)
				}
			}
		}
		if run.Targets[1].Commit == "" || run.Targets[0].Commit == run.Targets[1].Commit {
			t.Errorf("%v: commits %q", pair, run.Targets)
		}
	}
	code, _, stderr := pgscale(t, "micro", "--target", "base=settings:", "--target", "slow="+repo, "--cmd", cmd)
	if code != cli.ExitUsage || !strings.Contains(stderr, "target base: settings:: 0 extensions; name the tree to run in as PATH@REV") {
		t.Errorf("settings: without an extension: exit %d\n%s", code, stderr)
	}
}

// The pytest-benchmark fixture (testdata/micropytest, Debian's
// python3-pytest-benchmark) at its two commits under a CPU hog, timed by
// the process's CPU time (--benchmark-timer=time.process_time): total,
// twice the work at "slow", fails its bound; join, unchanged, does not.
func TestMicroPytestBenchmark(t *testing.T) {
	testenv.Slow(t)
	trackTime(t)
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import pytest_benchmark").Run(); err != nil {
		testenv.Need(t, errors.New("pytest-benchmark is not installed (Debian: apt-get install python3-pytest-benchmark)"))
	}
	repo := microRepo(t, "micropytest", "work.py", "work.py", "test_work.py")
	startHog(t, 1)
	cmd := py + " -m pytest -q -p no:cacheprovider --benchmark-json=bench.json --benchmark-timer=time.process_time --benchmark-min-rounds=50 --benchmark-max-time=0.2 test_work.py"
	_, a, stdout := microRegressed(t, "micro:*=+10%", "--format", "pytest", "--output", "bench.json", "--target", "base="+repo+"@base", "--target", "slow="+repo+"@slow",
		"--cmd", cmd, "--rounds", "auto:12")
	got := map[string]string{}
	for _, r := range a.Candidates[0].Rows {
		if r.Primary {
			got[r.Bench] = r.Outcome.String()
			t.Logf("%s %s: %s", r.Bench, r.Comparison, r.Outcome)
		}
	}
	wantMicroOutcomes(t, "", got, []string{"test_work.py::test_total"}, []string{"test_work.py::test_join"})
	// join, unchanged, may read slower under the hog (inconclusive, as
	// above): the group counts it or not, but only total is past its bound.
	if !regexp.MustCompile(`test_work\.py: [12] of 2 slower, 1 past its bound`).MatchString(stdout) {
		t.Errorf("no group line for test_work.py:\n%s", stdout)
	}
}

// Rounding until decided stops at the first look that decides every
// bounded benchmark: a command that reports the same times on both sides
// is decided, passed, at the first look (round 3).
func TestMicroRoundsUntilDecided(t *testing.T) {
	trackTime(t)
	tree := t.TempDir()
	out := filepath.Join(t.TempDir(), "m.json")
	code, stdout, stderr := pgscale(t, "micro", "--target", "base="+tree, "--target", "cand="+tree, "--rounds", "auto:10",
		"--cmd", `printf 'BenchmarkA 1000 10.0 ns/op\nBenchmarkB 1000 20.0 ns/op\n'`, "--bound", "micro:*=+5%", "--out", out)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	run, err := micro.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Rounds) != 3 || run.RoundsMax != 10 || run.Stopped != "decided" {
		t.Errorf("%d rounds of at most %d, stopped %q; want 3 of 10, decided", len(run.Rounds), run.RoundsMax, run.Stopped)
	}
	if !strings.Contains(stdout, "3 rounds of up to 10 (rounds until decided: decided)") || !strings.Contains(stdout, "Microbench: 2 of 2 measures within bounds") {
		t.Errorf("stdout:\n%s", stdout)
	}
	// The order alternates: A B, then B A.
	if run.Rounds[0].Runs[0].Target != "base" || run.Rounds[1].Runs[0].Target != "cand" {
		t.Errorf("round orders %s, %s", run.Rounds[0].Runs[0].Target, run.Rounds[1].Runs[0].Target)
	}
}

// A micro cell runs in the trees it names, or in the source a target
// builds from; a target with neither (a dsn: server) is refused in one
// line before anything runs, as is a tree for no target of the suite.
func TestSuiteMicroCellTrees(t *testing.T) {
	trackTime(t)
	for _, tc := range []struct{ trees, want string }{
		{"", "micro cell go: target base: dsn:"},
		{"\n    trees: {nobody: /tmp}", "micro cell go: trees: nobody is no target of the suite"},
	} {
		src := `name: trees
targets: ["base=dsn:` + dsn("postgres") + `", "cand=dsn:` + dsn("postgres") + `"]
scripts: [{builtin: select-only}]
clients: [1]
duration: 1s
micro:
  - name: go
    cmd: "true"` + tc.trees + "\n"
		file := filepath.Join(t.TempDir(), "trees.yaml")
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "bundle")
		code, stdout, stderr := pgscale(t, "suite", file, "--out", out)
		if code != cli.ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("exit %d, want 2 and %q\n%s\n%s", code, tc.want, stdout, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("a refused suite left its bundle %s", out)
		}
	}
}

// chainRepo makes a git repository of n commits c1..cN whose file cost
// holds base, and from commit step on, base*1.2; it returns the
// repository and its commits' hashes.
func chainRepo(t *testing.T, n, step int) (string, []string) {
	t.Helper()
	testenv.NeedProgram(t, "git", "Debian: apt-get install git")
	dir := filepath.Join(t.TempDir(), "chain")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-c", "user.name=pgscale", "-c", "user.email=pgscale@localhost"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	var commits []string
	for i := 1; i <= n; i++ {
		cost := 1000
		if i >= step {
			cost = 1200
		}
		if err := os.WriteFile(filepath.Join(dir, "cost"), []byte(fmt.Sprintf("%d\n%d\n", cost, i)), 0o644); err != nil {
			t.Fatal(err)
		}
		git("add", ".")
		git("commit", "-qm", fmt.Sprintf("c%d", i))
		git("tag", fmt.Sprintf("c%d", i))
		commits = append(commits, git("rev-parse", "HEAD"))
	}
	return dir, commits
}

// chainCmd prints two benchmarks in Go's format: BenchmarkWork takes
// the tree's cost, BenchmarkSteady 500 ns, each ±1 % at random.
const chainCmd = `r() { od -An -N2 -tu2 /dev/urandom | tr -d ' '; }; ` +
	`printf 'BenchmarkWork 1000 %d ns/op\nBenchmarkSteady 1000 %d ns/op\n' $(( $(head -1 cost) * (9900 + $(r) % 200) / 10000 )) $(( 500 * (9900 + $(r) % 200) / 10000 ))`

// Micro-benchmark runs recorded with --store over a line of commits, as
// a CI job would after each push (the commit before and the commit
// pushed): the store keeps each target's benchmarks as series, history
// list shows them, check finds the change point on BenchmarkWork at
// the commit that made it 20 % slower and fails its bound, and what
// reads result files (export, a stored baseline) refuses the micro rows in
// one line. About 20 s (eight micro runs of three rounds).
func TestMicroHistory(t *testing.T) {
	testenv.Slow(t)
	trackTime(t)
	noCIEnv(t)
	repo, commits := chainRepo(t, 9, 6)
	dir := t.TempDir()
	loc := filepath.Join(dir, "history.db")
	var runFiles []string
	for i := 2; i <= 9; i++ {
		out := filepath.Join(dir, fmt.Sprintf("m%d.json", i))
		code, stdout, stderr := pgscale(t, "micro", "--target", fmt.Sprintf("prev=%s@c%d", repo, i-1), "--target", fmt.Sprintf("head=%s@c%d", repo, i),
			"--label", "prev=main-prev", "--label", "head=main", "--cmd", chainCmd, "--rounds", "3", "--out", out, "--store", loc)
		if code != cli.ExitOK {
			t.Fatalf("run %d: exit %d\n%s\n%s", i, code, stdout, stderr)
		}
		want := fmt.Sprintf("stored: %s (target head) as result %d in %s (label main, commit %s from the tree of %s@c%d, 2 points)", out, 2*(i-1), loc, commits[i-1][:7], repo, i)
		if !strings.Contains(stdout, want) {
			t.Fatalf("run %d: stdout lacks %q:\n%s", i, want, stdout)
		}
		runFiles = append(runFiles, out)
	}
	project := "micro:chain"
	code, list, stderr := pgscale(t, "history", "list", "--store", loc, "workload="+project, "label=main")
	if code != cli.ExitOK || !regexp.MustCompile(`(?m)^\s+\d+\s+micro:chain\s+main\s+-\s+micro:BenchmarkWork\s+[0-9a-f]{12}\s+8\s+1[12]\d\d\s+ns/op\s+`+commits[8][:7]).MatchString(list) {
		t.Errorf("history list: exit %d\n%s%s", code, list, stderr)
	}
	code, check, stderr := pgscale(t, "history", "check", "--store", loc, "--bound", "micro:BenchmarkWork=+5%,micro:BenchmarkSteady=+5%")
	t.Logf("history check: exit %d\n%s%s", code, check, stderr)
	if code != cli.ExitRegression {
		t.Errorf("history check: exit %d, want 1", code)
	}
	for _, w := range []string{
		"micro:chain | main | micro:BenchmarkWork | ",
		fmt.Sprintf("regressed, outside bounds (bound +5%%)\n  between %s (result 8, ", commits[4][:7]),
		fmt.Sprintf(") and %s (result 10, ", commits[5][:7]),
		"micro:chain | main-prev | micro:BenchmarkWork | ",
	} {
		if !strings.Contains(check, w) {
			t.Errorf("history check lacks %q", w)
		}
	}
	// BenchmarkSteady is noise alone (±1 % at random): the detector finds
	// a change point in 1.6 % of flat series of 20 values
	// (docs/history.md), and here two such series are checked, so one is
	// listed now and then (-0.6% ± 0.2%, "improved, within bounds", once
	// in CI). What noise must never do is fail a bound.
	lines := strings.Split(check, "\n")
	for i, l := range lines {
		if strings.Contains(l, "| micro:BenchmarkSteady |") && i+1 < len(lines) && strings.Contains(lines[i+1], "outside bounds") {
			t.Errorf("history check failed BenchmarkSteady, which is noise alone:\n%s\n%s", l, lines[i+1])
		}
	}
	if code, _, stderr := pgscale(t, "history", "check", "--store", loc, "--bound", "micro:BenchmarkNone=+5%"); code != cli.ExitUsage || !strings.Contains(stderr, "matches the primary measure of no benchmark of the series") {
		t.Errorf("a bound on no series: exit %d\n%s", code, stderr)
	}
	code, _, stderr = pgscale(t, "history", "show", "--store", loc, "measure=micro:BenchmarkWork", "label=main", "--format", "html", "-o", filepath.Join(dir, "trend.html"))
	if code != cli.ExitOK {
		t.Errorf("history show --format html: exit %d\n%s", code, stderr)
	} else if page, err := os.ReadFile(filepath.Join(dir, "trend.html")); err != nil || !strings.Contains(string(page), "micro:BenchmarkWork (ns/op), main") {
		t.Errorf("the trend page has no chart of micro:BenchmarkWork: %v", err)
	}
	code, _, stderr = pgscale(t, "history", "export", "--store", loc)
	if code != cli.ExitUsage || !oneLine(stderr) || !strings.Contains(stderr, "the series of micro:chain are micro-benchmarks'") {
		t.Errorf("history export of micro series: exit %d\n%s", code, stderr)
	}
	code, again, stderr := pgscale(t, "history", "add", "--store", loc, runFiles[0])
	if code != cli.ExitOK || strings.Count(again, "was stored before") != 2 {
		t.Errorf("history add of a stored run: exit %d\n%s%s", code, again, stderr)
	}
}

// The Go fixture at its two commits counted under callgrind (--count
// instructions) with a CPU hog running: BenchmarkSum/n=1000, which does
// twice the work at "slow", executes twice the instructions per iteration
// and fails its bound; BenchmarkReverse, unchanged, counts the same to a
// fraction of a percent and passes. The command builds the test
// binary once and runs it through $PGSCALE_MICRO_EXEC, one Sum (n=1000)
// and Reverse: each count is a process under callgrind, 24 of them (5 min
// with three benchmarks at load 5-10 on 2 cores, 36 processes).
func TestMicroCountedFindsTheSlowedBenchmark(t *testing.T) {
	testenv.Slow(t)
	trackTime(t)
	testenv.NeedProgram(t, "valgrind", "Debian: apt-get install valgrind")
	repo := microGoRepo(t)
	startHog(t, 1)
	cmd := `[ -x b.test ] || go test -c -o b.test; $PGSCALE_MICRO_EXEC ./b.test -test.run '^$' -test.bench 'Sum/n=1000$|Reverse' -test.benchtime 20000x`
	run, a, stdout := microRegressed(t, "micro:*@instr/op=+1%", "--target", "base="+repo+"@base", "--target", "slow="+repo+"@slow", "--count", "instructions",
		"--cmd", cmd, "--rounds", "3")
	if run.Counted == nil || run.Counted.Events != "instructions" || run.Counted.Iterations["BenchmarkSum/n=1000"] < 1 || len(run.Counted.Calibration) != 2 {
		t.Fatalf("the run file's counting: %+v", run.Counted)
	}
	wantCounted(t, a, map[string]countedWant{"BenchmarkSum/n=1000": {"fail", 1, 0.1}, "BenchmarkReverse": {"pass", 0, 0.005}})
	if !strings.Contains(stdout, "counted: instructions per iteration under valgrind") {
		t.Errorf("the output does not say the run was counted")
	}
}
