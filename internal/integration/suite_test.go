package integration_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/cli"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/suite"
	"github.com/pgscale/pgscale/internal/syncio"
	"github.com/pgscale/pgscale/internal/target/targettest"
	"github.com/pgscale/pgscale/internal/testenv"
)

// twoCells writes a two-cell, two-target suite file against the package's
// server and returns its path: both targets are the same database, so
// the comparison is an A/A.
func twoCells(t *testing.T, db string, duration string) string {
	t.Helper()
	createDB(t, db)
	src := `name: two-cells
targets: ["a=dsn:` + dsn(db) + `", "b=dsn:` + dsn(db) + `"]
matrix:
  rows: [100, 20000]
setup: |
  DROP TABLE IF EXISTS t;
  CREATE TABLE t (id int PRIMARY KEY, v int);
  INSERT INTO t SELECT g, g FROM generate_series(1, {{rows}}) g;
  ANALYZE t;
scripts:
  - sql: |
      \set id random(1, {{rows}})
      SELECT v FROM t WHERE id = :id;
init: false
clients: [1, 2]
duration: ` + duration + `
warmup: 0.2s
rounds: 2
slice: 0.25s
bounds: [tps=-90%]
`
	path := filepath.Join(t.TempDir(), "two.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// passedOrUndecided says whether a suite of two targets that are the same
// ended passed or, with 2 rounds on a loaded machine, inconclusive
// (±228 385 % once, from a t interval on one degree of freedom): what these
// tests check is not the verdict, and an A/A suite must never fail.
func passedOrUndecided(code int) bool { return code == cli.ExitOK || code == cli.ExitInconclusive }

// A two-cell, two-target suite runs end to end; its bundle holds an index
// and ordinary result files that report and compare read back: report of
// the bundle prints what the suite printed, and compare of one cell's
// files compares them.
func TestSuiteRunsAndReadsBack(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	noCIEnv(t)
	file := twoCells(t, "suite2", "1s")
	out := filepath.Join(t.TempDir(), "bundle")
	hist := filepath.Join(t.TempDir(), "history.db")
	code, stdout, stderr := pgscale(t, "suite", file, "--out", out, "--markdown", filepath.Join(out, "suite.md"),
		"--verdict", filepath.Join(out, "verdict.json"), "--benchfmt", filepath.Join(out, "suite.txt"),
		"--store", hist, "--label", "a=main", "--commit", "b=2222222bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb")
	if !passedOrUndecided(code) {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, lastLines(stderr, 20))
	}
	suiteCode := code
	// --store records every cell's files, each cell's series named after
	// the suite and the cell, under each target's label and commit; adding
	// the bundle again finds them stored.
	stored := strings.Count(stdout, "\nstored: ")
	code, list, _ := pgscale(t, "history", "list", "--store", hist, "measure=tps", "workload=two-cells")
	if stored != 4 || code != 0 || !strings.HasPrefix(list, "8 series in ") ||
		strings.Count(strings.Join(strings.Fields(list), " "), " two-cells rows=20000 main ") != 2 ||
		strings.Count(strings.Join(strings.Fields(list), " "), " two-cells rows=100 b ") != 2 || !strings.Contains(list, "2222222") {
		t.Errorf("suite --store: %d files stored, list exit %d\n%s", stored, code, list)
	}
	if code, again, _ := pgscale(t, "history", "add", "--store", hist, out); code != 0 || strings.Count(again, "was stored before") != 4 {
		t.Errorf("history add of the bundle: exit %d\n%s", code, again)
	}
	stdout = stdout[:strings.Index(stdout, "\nstored: ")+1]
	x, err := result.ReadSuiteIndex(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Cells) != 2 || x.Cells[0].Status != result.CellComplete || x.Cells[1].Status != result.CellComplete || len(x.Cells[1].Files) != 2 {
		t.Fatalf("index cells %+v", x.Cells)
	}
	// Columns widen with the figures: compare words, not spacing.
	words := strings.Join(strings.Fields(stdout+stderr), " ")
	for _, want := range []string{"rows clients a tps b tps", "rows=20000: ", "cell 2/2: rows=20000"} {
		if !strings.Contains(words, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if headline := map[int]string{cli.ExitOK: "Compared b with a: passed: all 4 bounded measures within their bounds",
		cli.ExitInconclusive: "Compared b with a: inconclusive: "}[suiteCode]; !strings.Contains(words, headline) {
		t.Errorf("exit %d, output lacks %q:\n%s", suiteCode, headline, stdout)
	}
	printed := strings.TrimSuffix(stdout, "\nbundle: "+out+"\n")
	code, shown, _ := pgscale(t, "report", out)
	if code != 0 || shown != printed {
		t.Errorf("report of the bundle: exit %d\n%s\nthe suite printed:\n%s", code, shown, printed)
	}
	cell := filepath.Join(out, x.Cells[1].Dir)
	if code, cmp, stderr := pgscale(t, "compare", filepath.Join(cell, "a.json"), filepath.Join(cell, "b.json")); code != 0 || !strings.Contains(cmp, "paired by round over 2 of 2 rounds") {
		t.Errorf("compare of a cell: exit %d\n%s%s", code, cmp, stderr)
	}
	if code, again, _ := pgscale(t, "compare", out, "--bound", "tps=-95%"); !passedOrUndecided(code) || !strings.Contains(again, "Compared b with a") {
		t.Errorf("compare of the bundle: exit %d\n%s", code, again)
	}
	md, _ := os.ReadFile(filepath.Join(out, "suite.md"))
	if !strings.Contains(string(md), "### pgscale suite: two-cells") {
		t.Errorf("markdown:\n%s", md)
	}
	bf, _ := os.ReadFile(filepath.Join(out, "suite.txt"))
	if !strings.Contains(string(bf), "rows: 20000") {
		t.Errorf("benchfmt lacks the cell's parameter as configuration:\n%s", bf)
	}
	// benchstat reads it: the targets as columns, the cells' parameters
	// as configuration it can group by.
	bench := filepath.Join(t.TempDir(), "benchstat")
	if b, err := exec.Command("go", "build", "-o", bench, "golang.org/x/perf/cmd/benchstat").CombinedOutput(); err != nil {
		t.Fatalf("build benchstat: %v\n%s", err, b)
	}
	bs, err := exec.Command(bench, "-col", "target", "-row", "rows", "-ignore", "round", filepath.Join(out, "suite.txt")).CombinedOutput()
	if err != nil || !strings.Contains(string(bs), "│ a ") && !strings.Contains(string(bs), "a  ") {
		t.Errorf("benchstat: %v\n%s", err, bs)
	}
}

// A suite killed during its second cell keeps the first; --resume runs
// only what is missing, and the first cell's files are left as they were.
func TestSuiteResumeAfterAKill(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	bin := buildPgscale(t)
	file := twoCells(t, "suitekill", "2s")
	out := filepath.Join(t.TempDir(), "bundle")
	cmd := exec.Command(bin, "suite", file, "--out", out)
	var stdout, stderr syncio.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(stderr.String(), "cell 2/2") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second)
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != cli.ExitIncomplete {
		t.Fatalf("exit %v, want %d\n%s", err, cli.ExitIncomplete, lastLines(stderr.String(), 10))
	}
	x, err := result.ReadSuiteIndex(out)
	if err != nil {
		t.Fatal(err)
	}
	if x.Cells[0].Status != result.CellComplete || x.Cells[1].Status == result.CellComplete {
		t.Fatalf("after the kill: cells %+v", x.Cells)
	}
	first := filepath.Join(out, x.Cells[0].Dir, "a.json")
	before, _ := os.Stat(first)
	code, stdo, stde := pgscale(t, "suite", file, "--resume", out)
	if !passedOrUndecided(code) || strings.Contains(stde, "cell 1/2") || !strings.Contains(stde, "cell 2/2") {
		t.Fatalf("--resume: exit %d; it must run cell 2 only\n%s\n%s", code, stdo, lastLines(stde, 10))
	}
	if after, _ := os.Stat(first); !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("--resume rewrote the finished cell's file")
	}
	if x, _ = result.ReadSuiteIndex(out); x.Cells[1].Status != result.CellComplete {
		t.Errorf("after --resume: cells %+v", x.Cells)
	}
}

// Every preset's quick variant is parsed and dry-run, then run on an
// ephemeral cluster, and computes its study's headline figure: fastpath
// names the fast-path slots 32 partitions exhaust; sinval's table shows
// the throughput during the DDL window and after it against before, each
// with an interval; extension-sweep checks and states its rule; pooler
// compares each pooling mode's throughput with the direct connection,
// with an interval, and states the pooler's CPU per transaction;
// pooler-ci's native cells (run alone, --only measure=native: its quick
// variant is the counted CI gate, TestGateDecidesOnCountsUnderHog's
// ground) send the reads where they should, and its comment has its
// headline and a row per suite with the throughput and the pooler's
// costs, each with an interval; what the runner's spread could not
// decide is said once, the same in the comment and the verdict file.
// --matrix that leaves a cells: entry no cell says so in a note, before
// the run and in --dry-run, and runs (pooler-ci at its pooled cell alone:
// its balanced cell's targets have nothing to do).
func TestSuiteMatrixLeavesCellsEntry(t *testing.T) {
	trackTime(t)
	code, stdout, stderr := pgscale(t, "suite", "--preset", "pooler-ci", "--quick", "--dry-run", "--matrix", "workload=tpcb-like")
	note := "pgscale: note: pooler-ci: cells[0] (where: workload=select-only) is for no cell after --matrix workload=tpcb-like: its targets are not used"
	if code != cli.ExitOK || !strings.Contains(stdout, note) {
		t.Errorf("exit %d, want 0 and %q\n%s%s", code, note, stdout, stderr)
	}
}

func TestSuitePresets(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	for _, p := range suite.Presets() {
		code, stdout, stderr := pgscale(t, "suite", "--preset", p, "--quick", "--dry-run")
		if code != 0 || !strings.Contains(stdout, "estimated time:") {
			t.Errorf("preset %s: exit %d\n%s%s", p, code, stdout, stderr)
		}
		if code, src, _ := pgscale(t, "suite", "--preset", p, "--show"); code != 0 || !strings.Contains(src, "quick:") {
			t.Errorf("--show %s: exit %d", p, code)
		}
	}
	headline := map[string]func(t *testing.T, stdout, bundle string){
		"fastpath": func(t *testing.T, stdout, _ string) {
			for _, l := range strings.Split(stdout, "\n") {
				if f := strings.Fields(l); len(f) > 0 && f[0] == "32" && strings.Contains(l, "fast-path slots exhausted") {
					return
				}
			}
			t.Errorf("32 partitions did not exhaust the fast-path slots")
		},
		"sinval": func(t *testing.T, stdout, bundle string) {
			if !strings.Contains(stdout, "during/before") || !strings.Contains(stdout, "after/before") {
				t.Errorf("the table has no during/before and after/before")
			}
			x, err := result.ReadSuiteIndex(bundle)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range x.Cells {
				f, err := result.Read(filepath.Join(bundle, c.Dir, c.Files[0]))
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range f.Steps {
					e := s.Disturbances[0].Effect
					if e == nil || e.TPS == nil || e.TPS.Lo == nil || e.AfterTPS == nil || e.AfterTPS.Lo == nil {
						t.Errorf("cell %s, %d clients: no interval on during/before or after/before: %+v", c.Key, s.Clients, e)
					}
				}
			}
		},
		"extension-sweep": func(t *testing.T, stdout, _ string) {
			if !regexp.MustCompile(`server-cpu/txn@c=8<c=1\+20%: [0-9.]+ µs at 8 clients, [0-9.]+ µs at 1 \([-+][0-9.]+%\), (holds|fails)`).MatchString(stdout) {
				t.Errorf("the rule is not checked")
			}
		},
		"pooler": func(t *testing.T, stdout, _ string) {
			row := regexp.MustCompile(`(?m)^select-only\s+16\s+[0-9.]+\s+[0-9.]+\s+[-+][0-9.]+% ± [0-9.]+%\s+[0-9.]+\s+[-+][0-9.]+% ± [0-9.]+%$`)
			if !row.MatchString(stdout) || !strings.Contains(stdout, "pooler-cpu/txn@c=16: session ") {
				t.Errorf("no change with an interval for each pooling mode, or no pooler CPU")
			}
		},
		"pooler-ci": func(t *testing.T, _, bundle string) {
			// tpcb-like through base and cand: every statement to the
			// primary; select-only through the balancing definitions
			// (cells:): its reads on the replica too, in every round.
			x, err := result.ReadSuiteIndex(bundle)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range x.Cells {
				for _, name := range c.Files {
					for _, s := range readResult(t, filepath.Join(bundle, c.Dir, name)).Steps {
						u := s.Probes.Upstreams()
						if u == nil || len(u.Servers) != 2 || u.Servers[1].Statements == nil {
							t.Fatalf("cell %s, %s: upstreams %+v", c.Key, name, u)
						}
						if n := *u.Servers[1].Statements; (n > 0) != strings.HasSuffix(c.Key, "workload=select-only") {
							t.Errorf("cell %s, %s, round %d: %d statements on the replica", c.Key, name, s.Round, n)
						}
					}
				}
			}
			code, comment, stderr := pgscale(t, "report", "--format", "comment", bundle)
			if code != cli.ExitOK {
				t.Fatalf("report --format comment: exit %d (report judges nothing)\n%s", code, stderr)
			}
			if !regexp.MustCompile(`(?m)^### pgscale suite pooler-ci: (✅ passed: all \d+ bounded measures within their bounds|❌ failed: \d+ of \d+ bounded measures past (their bounds|its bound).*|❔ inconclusive: \d+ of \d+ bounded measures undecided|❔ inconclusive: nothing decided: \d+ bounded measures beyond what this runner's spread can decide)$`).MatchString(comment) {
				t.Errorf("the comment has no headline:\n%s", comment)
			}
			for _, cell := range []string{"measure=native,workload=tpcb-like", "measure=native,workload=select-only"} {
				row := regexp.MustCompile(`(?m)^\| ` + cell + ` \| 8 \| [0-9.]+ tps \([-+][0-9.]+% ± [0-9.]+%\) \| \**[0-9.]+ µs \([-+][0-9.]+% ± [0-9.]+%\)\** \| \**[0-9.]+ µs \([-+][0-9.]+% ± [0-9.]+%\)\** \| \**[0-9.]+ \([-+][0-9.]+% ± [0-9.]+%\)\** \|$`)
				if !row.MatchString(comment) {
					t.Errorf("no row of %s with throughput, server cpu/txn, pooler cpu/txn and ctx/txn, each with an interval (no column of dashes):\n%s", cell, comment)
				}
			}
			v := readVerdict(t, bundle+".verdict.json")
			switch {
			case v.Reach == nil && strings.Contains(comment, "This runner's spread is"):
				t.Errorf("the comment says what the runner could not see, the verdict file not")
			case v.Reach != nil && (strings.Count(comment, "This runner's spread is ±") != 1 || !strings.HasPrefix(v.Reach.Text, "This runner's spread is ±")):
				t.Errorf("what the runner could not see, once: verdict %q\n%s", v.Reach.Text, comment)
			}
		},
	}
	for _, p := range suite.Presets() {
		t.Run(p, func(t *testing.T) {
			if p == "pooler" || p == "pooler-ci" {
				targettest.NeedPgBouncer(t)
			}
			check := headline[p]
			if check == nil {
				t.Fatalf("no headline check for preset %s", p)
			}
			out := filepath.Join(t.TempDir(), p)
			t0 := time.Now()
			args := []string{"suite", "--preset", p, "--quick", "--out", out}
			if p == "pooler-ci" {
				// Its native cells, 4 rounds: what is checked here (where
				// the reads go, a headline, rows with intervals) needs no
				// more; its quick variant counts under Valgrind
				// (TestGateDecidesOnCountsUnderHog decides as it does).
				args = []string{"suite", "--preset", p, "--only", "measure=native", "--rounds", "4", "--out", out, "--verdict", out + ".verdict.json"}
			}
			code, stdout, stderr := pgscale(t, args...)
			t.Logf("%s: %v", strings.Join(args, " "), time.Since(t0).Round(time.Second))
			// A rule that fails or a measure past its bound is what the
			// study found (extension-sweep's rule on a busy machine):
			// exit 1; an undecided bound exit 4; the headline is checked
			// either way.
			if code != cli.ExitOK && code != cli.ExitRegression && code != cli.ExitInconclusive {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, lastLines(stderr, 10))
			}
			check(t, stdout, out)
			if t.Failed() {
				t.Logf("%s", stdout)
			}
		})
	}
}

// A bad suite file is one line naming the file and line, exit 2, before
// anything starts.
func TestSuiteBadFile(t *testing.T) {
	trackTime(t)
	path := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(path, []byte("name: bad\nmatrix:\n  rows: [1, 2]\nclients: [1]\n"), 0o644)
	code, _, stderr := pgscale(t, "suite", path)
	if code != cli.ExitUsage || !strings.Contains(stderr, "bad.yaml:3:") || !strings.Contains(stderr, "axis rows is used by no template") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// The seed study's shape as a suite file of one target, its script, setup
// and rule beside it, run and reported from another directory: the suite
// prints each step's evidence and the diagnosis as run does, and its rule's
// result; report of the bundle states the rule too (it used to leave it
// out unless run from the suite file's directory).
func TestSuiteOneTargetFromElsewhere(t *testing.T) {
	trackTime(t)
	testenv.Slow(t) // runs a suite of steps and reports its bundle
	noCIEnv(t)
	db := "suiteone"
	createDB(t, db)
	dir := filepath.Join(t.TempDir(), "study")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "fn.sql"), "SELECT f(1);\n")
	writeFile(t, filepath.Join(dir, "setup.sql"), "CREATE OR REPLACE FUNCTION f(int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT $1 + 1';\n")
	file := writeFile(t, filepath.Join(dir, "seed.yaml"), `name: seed
targets: ["one=dsn:`+dsn(db)+`"]
setup: {file: setup.sql}
scripts:
  - file: fn.sql
init: false
clients: [1, 2]
duration: 1s
warmup: 0.2s
rule: {measure: server-cpu/txn, clients: 2, against: 1, below: 400, decision: no optimisation needed}
`)
	out := filepath.Join(t.TempDir(), "bundle")
	code, stdout, stderr := pgscale(t, "suite", file, "--out", out)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, lastLines(stderr, 20))
	}
	for _, want := range []string{"\n1 client: ", "\n  cpu:  ", "\n  waits:  ", "\ndiagnosis:\n", "\n  Throughput ", "\nscaling (",
		"\nrules:\n  one: server-cpu/txn@c=2<c=1+400%: "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the suite's output lacks %q:\n%s", want, stdout)
		}
	}
	code, shown, stderr := pgscale(t, "report", out)
	if code != cli.ExitOK || !strings.Contains(shown, "\nrules:\n  one: server-cpu/txn@c=2<c=1+400%: ") {
		t.Errorf("report of the bundle: exit %d, no rule\n%s\n%s", code, shown, stderr)
	}
	// A part only a comparison uses, with the file's one target: one
	// line at its place, nothing run.
	bad := writeFile(t, filepath.Join(dir, "bad.yaml"), strings.Replace(string(mustRead(t, file)), "duration: 1s\n", "duration: 1s\nrounds: 3\n", 1))
	code, stdout, stderr = pgscale(t, "suite", bad, "--out", filepath.Join(t.TempDir(), "b"))
	if code != cli.ExitUsage || !strings.Contains(stderr, "bad.yaml:9: rounds: given, but the suite runs on one target") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Errorf("rounds with one target: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A one-target suite counted under Valgrind keeps each step's profile in
// its bundle, beside the cell's result file (it used to write them under
// results/ of the working directory, outside the bundle).
func TestSuiteCountedProfilesInTheBundle(t *testing.T) {
	trackTime(t)
	testenv.Slow(t) // runs a server under Valgrind
	testenv.NeedProgram(t, "valgrind", "Debian: apt-get install valgrind")
	dir := t.TempDir()
	file := writeFile(t, filepath.Join(dir, "c.yaml"), `name: c
targets: ["one=settings:"]
scripts:
  - sql: SELECT 1;
init: false
clients: [1]
count: instructions
transactions: 20
`)
	out := filepath.Join(t.TempDir(), "bundle")
	code, stdout, stderr := pgscale(t, "suite", file, "--out", out)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, lastLines(stderr, 20))
	}
	cell := filepath.Join(out, "cells", "001-all")
	f := readResult(t, filepath.Join(cell, "one.json"))
	p := f.Steps[0].Probes
	if p == nil || p.Profile() == nil || !strings.HasPrefix(p.Profile().File, filepath.Join("profiles", "one")+string(filepath.Separator)) {
		t.Fatalf("the step's profile: %+v", p)
	}
	if _, err := os.Stat(filepath.Join(cell, p.Profile().File)); err != nil {
		t.Error(err)
	}
}

// suite --profile records a perf profile of every target's step, as a
// suite file's profile: true does, so that a native suite's comment links
// each candidate's differential flame graph in the page written beside
// it (and only there: the comment is written next to the page). The
// suite file says nothing of slices: profiling runs whole-step turns.
func TestSuiteProfile(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	dir := t.TempDir()
	file := writeFile(t, filepath.Join(dir, "p.yaml"), `name: p
targets: ["a=bin:`+cluster.BinDir+`", "b=bin:`+cluster.BinDir+`"]
scripts:
  - builtin: select-only
init: true
scale: 1
clients: [1]
duration: 1s
warmup: 0.2s
rounds: 2
`)
	out := filepath.Join(dir, "bundle")
	comment, page := filepath.Join(dir, "pr", "comment.md"), filepath.Join(dir, "pr", "report.html")
	if err := os.MkdirAll(filepath.Dir(comment), 0o755); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := pgscale(t, "suite", file, "--profile", "--out", out, "--comment", comment, "--html", page)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, lastLines(stderr, 20))
	}
	for _, n := range []string{"a", "b"} {
		f := readResult(t, filepath.Join(out, "cells", "001-all", n+".json"))
		for _, s := range f.Steps {
			if s.Probes == nil || s.Probes.Profile() == nil {
				t.Errorf("%s round %d: no profile", n, s.Round)
			}
		}
	}
	b, err := os.ReadFile(comment)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`\[server, all, c=1\]\(report\.html#(fig-flame-diff-[^)]+)\)`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("the comment does not link the differential flame graph beside it:\n%s", b)
	}
	if html, err := os.ReadFile(page); err != nil || !strings.Contains(string(html), `id="`+string(m[1])+`"`) {
		t.Errorf("the page written beside the comment has no id %s (%v)", m[1], err)
	}
}
