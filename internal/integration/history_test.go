package integration_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/pgscale/pgscale/internal/cli"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/store"
	"github.com/pgscale/pgscale/internal/testenv"
)

// forEachStore runs f with the location of a new, empty history store:
// an SQLite file in a temporary directory, and a database of its own on
// the package's cluster.
func forEachStore(t *testing.T, f func(t *testing.T, location string)) {
	t.Run("sqlite", func(t *testing.T) { f(t, filepath.Join(t.TempDir(), "history.db")) })
	t.Run("postgres", func(t *testing.T) {
		name := "history_" + strings.ToLower(strings.NewReplacer("/", "_", "-", "_").Replace(t.Name()))
		createDB(t, name)
		f(t, dsn(name))
	})
}

// noCIEnv clears the CI variables that would give runs a commit, so a
// test sees what it sets alone.
func noCIEnv(t *testing.T) {
	for _, v := range []string{"GITHUB_SHA", "CI_COMMIT_SHA", "BUILDKITE_COMMIT", "CIRCLE_SHA1", "TRAVIS_COMMIT",
		"BITBUCKET_COMMIT", "DRONE_COMMIT_SHA", "BUILD_SOURCEVERSION", "GIT_COMMIT", store.EnvLocation} {
		t.Setenv(v, "")
	}
}

// oneLine reports whether s is a single line.
func oneLine(s string) bool { return strings.Count(strings.TrimRight(s, "\n"), "\n") == 0 }

// `pgscale run --store` twice, then list, show, check and export read
// what they recorded.
func TestHistoryOfTwoRuns(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	noCIEnv(t)
	forEachStore(t, func(t *testing.T, loc string) {
		dir := t.TempDir()
		for i, commit := range []string{"1111111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "2222222bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"} {
			out := filepath.Join(dir, fmt.Sprintf("r%d.json", i))
			code, stdout, stderr := pgscale(t, "run", "--dsn", dsn("postgres"), "-S", "-c", "1,2", "-T", "0.5", "--no-probes",
				"--out", out, "--store", loc, "--label", "main", "--commit", commit)
			if code != 0 {
				t.Fatalf("run %d: exit %d\n%s", i, code, stderr)
			}
			want := fmt.Sprintf("stored: %s as result %d in %s (label main, commit %s from --commit, 8 points)", out, i+1, loc, commit[:7])
			if !strings.Contains(stdout, "result: "+out+"\n"+want+"\n") {
				t.Errorf("run %d: no %q after the result line:\n%s", i, want, stdout)
			}
		}

		code, stdout, stderr := pgscale(t, "history", "list", "--store", loc)
		if code != 0 {
			t.Fatalf("list: exit %d: %s", code, stderr)
		}
		if !strings.HasPrefix(stdout, "8 series in ") || strings.Count(stdout, "select-only -s 1 -M prepared  main") != 8 {
			t.Errorf("list: want 8 series of main:\n%s", stdout)
		}
		for _, m := range []string{"tps", "p50", "p99", "client-cpu/txn"} {
			if !strings.Contains(stdout, "  "+m+" ") {
				t.Errorf("list lacks measure %s:\n%s", m, stdout)
			}
		}

		code, stdout, _ = pgscale(t, "history", "show", "--store", loc, "measure=tps", "c=2", "label=main", "workload=select-only")
		if code != 0 || !strings.Contains(stdout, "| main | c=2 | tps |") || !strings.Contains(stdout, " 1111111 ") || !strings.Contains(stdout, " 2222222 ") {
			t.Errorf("show: exit %d\n%s", code, stdout)
		}
		f0, f1 := readResult(t, filepath.Join(dir, "r0.json")), readResult(t, filepath.Join(dir, "r1.json"))
		for _, v := range []float64{f0.Steps[1].Summary.TPS, f1.Steps[1].Summary.TPS} {
			if s := fmt.Sprintf("%.0f", v); !strings.Contains(stdout, " "+s+" ") {
				t.Errorf("show lacks the recorded tps %s:\n%s", s, stdout)
			}
		}

		code, stdout, _ = pgscale(t, "history", "check", "--store", loc, "--bound", "tps=-2%")
		if code != 0 || !strings.Contains(stdout, "no change point in 8 series") {
			t.Errorf("check of two runs: exit %d\n%s", code, stdout)
		}

		code, stdout, _ = pgscale(t, "history", "export", "--store", loc)
		if code != 0 {
			t.Fatalf("export: exit %d", code)
		}
		r := benchfmt.NewReader(strings.NewReader(stdout), "export")
		names := map[string]int{}
		for r.Scan() {
			if res, ok := r.Result().(*benchfmt.Result); ok {
				names[res.GetConfig("target")+" "+string(res.Name)]++
			}
		}
		if r.Err() != nil || names["main@1111111 SelectOnly/clients=2"] != 1 || names["main@2222222 SelectOnly/clients=1"] != 1 || len(names) != 4 {
			t.Errorf("benchfmt export: %v %v\n%s", names, r.Err(), stdout)
		}
		bmfPath := filepath.Join(dir, "bmf.json")
		if code, _, _ := pgscale(t, "history", "export", "--store", loc, "--format", "bmf", "-o", bmfPath, "c=1"); code != 0 {
			t.Fatalf("export bmf: exit %d", code)
		}
		var bmf map[string]map[string]struct {
			Value float64 `json:"value"`
		}
		raw, _ := os.ReadFile(bmfPath)
		if err := json.Unmarshal(raw, &bmf); err != nil || len(bmf) != 4 || bmf["main@2222222/select-only/clients=2"]["throughput"].Value != math.Round(f1.Steps[1].Summary.TPS*1000)/1000 {
			t.Errorf("bmf export (%v):\n%s", err, raw)
		}
	})
}

// realRun is one run of this machine, made once for the tests that build
// series from it.
var realRun struct {
	once sync.Once
	path string
	err  error
}

// realResult returns the path of a real result file: select-only at 1 and
// 2 clients on the package's cluster.
func realResult(t *testing.T) string {
	t.Helper()
	realRun.once.Do(func() {
		dir, err := os.MkdirTemp("", "pgscale-history-")
		if err != nil {
			realRun.err = err
			return
		}
		realRun.path = filepath.Join(dir, "real.json")
		var out, errb bytes.Buffer
		if code := cli.Main([]string{"run", "--dsn", dsn("postgres"), "-S", "-c", "1,2", "-T", "0.5", "--no-probes", "--out", realRun.path}, &out, &errb); code != 0 {
			realRun.err = fmt.Errorf("run: exit %d: %s", code, errb.String())
		}
	})
	if realRun.err != nil {
		t.Fatal(realRun.err)
	}
	return realRun.path
}

// series writes n copies of the real result file into dir, an hour apart,
// each step's tps multiplied by 1 + N(0, 1 %) and, from copy step on, by
// 1 + change; latencies move the other way. It returns their paths and
// the commit each stands for.
func series(t *testing.T, dir string, n, step int, change float64, seed uint64) ([]string, []string) {
	t.Helper()
	raw, err := os.ReadFile(realResult(t))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	var paths, commits []string
	for i := range n {
		var f result.File
		if err := json.Unmarshal(raw, &f); err != nil {
			t.Fatal(err)
		}
		at := time.Duration(i) * time.Hour
		f.Started, f.Finished = f.Started.Add(at), f.Finished.Add(at)
		k := 1 + 0.01*rng.NormFloat64()
		if i >= step {
			k *= 1 + change
		}
		for j := range f.Steps {
			s := &f.Steps[j].Summary
			s.TPS *= k
			s.Latency.P50Ms /= k
			s.Latency.P99Ms /= k
		}
		p := filepath.Join(dir, fmt.Sprintf("run%02d.json", i))
		if err := result.Write(p, &f); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
		commits = append(commits, fmt.Sprintf("%02d%s", i, strings.Repeat("c", 38)))
	}
	return paths, commits
}

// addAll records the files, each with its commit, under label.
func addAll(t *testing.T, loc, label string, paths, commits []string) {
	t.Helper()
	for i, p := range paths {
		if code, _, stderr := pgscale(t, "history", "add", "--store", loc, "--label", label, "--commit", commits[i], p); code != 0 {
			t.Fatalf("add %s: exit %d: %s", p, code, stderr)
		}
	}
}

// check finds a 5 % step in a series built from a real result file (24
// copies, tps edited: 1 % noise, 5 % lower from the 13th), exits 1 with a
// bound and 0 without; ack silences it.
func TestHistoryCheckFindsAStep(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	noCIEnv(t)
	forEachStore(t, func(t *testing.T, loc string) {
		paths, commits := series(t, t.TempDir(), 24, 12, -0.05, 7)
		addAll(t, loc, "main", paths, commits)

		code, stdout, stderr := pgscale(t, "history", "check", "--store", loc, "--bound", "tps=-2%")
		if code != cli.ExitRegression {
			t.Fatalf("check with a bound: exit %d, want 1\n%s\n%s", code, stdout, stderr)
		}
		if !oneLine(stderr) || !strings.Contains(stderr, "history check: change points outside bounds: 2") {
			t.Errorf("stderr: %q", stderr)
		}
		// Both client counts' tps, and the latencies, moved between the
		// 12th and the 13th commit.
		between := fmt.Sprintf("between %s (result 12, ", commits[11][:7])
		for _, c := range []string{"c=1", "c=2"} {
			for _, m := range []string{"tps", "p50", "p99"} {
				head := fmt.Sprintf("| main | %s | %s |", c, m)
				i := strings.Index(stdout, head)
				if i < 0 {
					t.Errorf("check does not report %s %s:\n%s", c, m, stdout)
					continue
				}
				block := stdout[i:]
				block = block[:strings.Index(block, "known?")]
				if !strings.Contains(block, between) || !strings.Contains(block, "and "+commits[12][:7]+" (result 13, ") {
					t.Errorf("%s %s: not between the 12th and 13th commits:\n%s", c, m, block)
				}
				status := "regressed"
				if m == "tps" {
					status = "regressed, outside bounds (bound -2%)"
				}
				if !strings.Contains(block, status) {
					t.Errorf("%s %s: want %q:\n%s", c, m, status, block)
				}
			}
		}
		if !strings.Contains(stdout, "over 12 and 12 runs") || !strings.Contains(stdout, "2 outside bounds: main tps@c=1 -") {
			t.Errorf("check:\n%s", stdout)
		}

		if code, stdout, _ := pgscale(t, "history", "check", "--store", loc); code != 0 || !strings.Contains(stdout, "6 change points in 8 series") {
			t.Errorf("check without a bound: exit %d, want 0\n%s", code, stdout)
		}
		if code, _, stderr := pgscale(t, "history", "check", "--store", loc, "--bound", "tps=+2%"); code != cli.ExitUsage || !strings.Contains(stderr, "higher-is-better") {
			t.Errorf("a bound the wrong way: exit %d: %s", code, stderr)
		}
		if code, _, stderr := pgscale(t, "history", "check", "--store", loc, "label=nobody"); code != cli.ExitUsage || !strings.Contains(stderr, "no series") {
			t.Errorf("a filter matching nothing: exit %d: %s", code, stderr)
		}

		code, stdout, _ = pgscale(t, "history", "ack", "--store", loc, "measure=tps", "--note", "new default, expected")
		if code != 0 || strings.Count(stdout, "acknowledged: series") != 2 || !strings.Contains(stdout, "at result 13: -") {
			t.Errorf("ack: exit %d\n%s", code, stdout)
		}
		code, stdout, _ = pgscale(t, "history", "check", "--store", loc, "--bound", "tps=-2%")
		if code != 0 || strings.Contains(stdout, "| tps |") || !strings.Contains(stdout, "4 change points in 8 series") {
			t.Errorf("check after ack: exit %d, want 0 and the latencies only\n%s", code, stdout)
		}
		if code, stdout, _ := pgscale(t, "history", "list", "--store", loc, "measure=tps"); !strings.Contains(stdout, "at result 13") {
			t.Errorf("list after ack: exit %d\n%s", code, stdout)
		}
		if code, _, _ := pgscale(t, "history", "ack", "--store", loc); code != cli.ExitUsage {
			t.Errorf("ack without a filter: exit %d, want 2", code)
		}
		if code, stdout, _ := pgscale(t, "history", "ack", "--store", loc, "--all", "--result", "13"); code != 0 || strings.Count(stdout, "acknowledged:") != 8 {
			t.Errorf("ack --all --result 13: exit %d\n%s", code, stdout)
		}
		if code, stdout, _ := pgscale(t, "history", "check", "--store", loc); code != 0 || !strings.Contains(stdout, "no change point in 8 series") {
			t.Errorf("check after ack --all: exit %d\n%s", code, stdout)
		}
		// show marks the change where it starts, acknowledged.
		code, stdout, _ = pgscale(t, "history", "show", "--store", loc, "measure=tps", "c=2")
		if row := lineWith(stdout, commits[12][:7]); code != 0 || !strings.Contains(row, "% (p=") || !strings.Contains(row, "acknowledged") {
			t.Errorf("show: the 13th point's row %q\n%s", row, stdout)
		}
	})
}

func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

// A file that does not validate is refused with one line, and nothing of
// the batch is stored.
func TestHistoryAddRefusesAnInvalidFile(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	noCIEnv(t)
	forEachStore(t, func(t *testing.T, loc string) {
		dir := t.TempDir()
		good := realResult(t)
		raw, _ := os.ReadFile(good)
		var f result.File
		if err := json.Unmarshal(raw, &f); err != nil {
			t.Fatal(err)
		}
		f.Target.Settings["primary_conninfo"] = "host=primary user=repl password=hunter2"
		leaky, _ := json.Marshal(&f)
		for name, body := range map[string][]byte{
			"truncated.json": raw[:len(raw)/2],
			"leaky.json":     leaky,
			"schema.json":    bytes.Replace(raw, []byte(`"pgscale.result"`), []byte(`"other"`), 1),
		} {
			bad := filepath.Join(dir, name)
			if err := os.WriteFile(bad, body, 0o644); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := pgscale(t, "history", "add", "--store", loc, good, bad)
			if code != cli.ExitUsage || !oneLine(stderr) || !strings.HasPrefix(stderr, "pgscale: "+bad+": not stored: ") || strings.Contains(stderr, "hunter2") || stdout != "" {
				t.Errorf("%s: exit %d, stdout %q, stderr %q; want 2 and one line", name, code, stdout, stderr)
			}
		}
		if code, stdout, _ := pgscale(t, "history", "list", "--store", loc); code != 0 || !strings.HasPrefix(stdout, "no series in ") {
			t.Errorf("after refusals: exit %d\n%s", code, stdout)
		}
		// An empty store (a CI job's first run) passes its check.
		if code, stdout, stderr := pgscale(t, "history", "check", "--store", loc, "--bound", "tps=-2%"); code != 0 || !strings.HasPrefix(stdout, "no change point in 0 series") {
			t.Errorf("check of an empty store: exit %d\n%s%s", code, stdout, stderr)
		}
		if code, stdout, _ := pgscale(t, "history", "add", "--store", loc, good); code != 0 || !strings.Contains(stdout, "as result 1 ") {
			t.Errorf("the good file alone: exit %d\n%s", code, stdout)
		}
		if code, stdout, _ := pgscale(t, "history", "add", "--store", loc, good); code != 0 || !strings.Contains(stdout, "was stored before, as result 1") {
			t.Errorf("the good file again: exit %d\n%s", code, stdout)
		}
	})
}

// compare --baseline store:LABEL compares a new result with the stored
// runs of the label's newest commit, and says whose runs they were.
func TestCompareWithAStoredBaseline(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	noCIEnv(t)
	forEachStore(t, func(t *testing.T, loc string) {
		dir := t.TempDir()
		paths, _ := series(t, dir, 7, 99, 0, 3)
		older := []string{"aaaaaaa" + strings.Repeat("1", 33)}
		newer := []string{"bbbbbbb" + strings.Repeat("2", 33)}
		addAll(t, loc, "main", paths[:3], slices.Repeat(older, 3))
		addAll(t, loc, "main", paths[3:6], slices.Repeat(newer, 3))
		cand := paths[6]
		// One run against three cannot give an interval on the change
		// (3 and 1 values), so a bounded comparison is inconclusive, never
		// passed.
		code, stdout, stderr := pgscale(t, "compare", "--baseline", "store:main", "--store", loc, cand, "--bound", "tps=-5%")
		if code != cli.ExitInconclusive || !strings.Contains(stdout, ": inconclusive: 2 of 2 bounded measures undecided") {
			t.Fatalf("exit %d, want %d (inconclusive): %s\n%s", code, cli.ExitInconclusive, stderr, stdout)
		}
		if !strings.HasPrefix(stdout, "baseline: main@bbbbbbb, 3 stored runs (results 4, 5, 6, ") || !strings.Contains(stdout, " of label main at commit "+newer[0]+" in ") {
			t.Errorf("does not say whose runs it used:\n%s", stdout)
		}
		if !strings.Contains(stdout, "Compared run06 with main@bbbbbbb: ") || !strings.Contains(stdout, "unpaired") {
			t.Errorf("headline:\n%s", stdout)
		}
		// The baseline's median tps at c=2 is the middle of the three
		// stored runs of the newer commit.
		var tps []float64
		for _, p := range paths[3:6] {
			tps = append(tps, readResult(t, p).Steps[1].Summary.TPS)
		}
		slices.Sort(tps)
		if row := lineWith(stdout, "c=2   tps"); !strings.Contains(row, fmt.Sprintf(" %.0f ", tps[1])) {
			t.Errorf("c=2 tps row %q lacks the stored median %.0f\n%s", row, tps[1], stdout)
		}

		code, stdout, _ = pgscale(t, "compare", "--baseline", "store:main@aaaa", "--store", loc, cand)
		if code != 0 || !strings.Contains(stdout, "3 stored runs (results 1, 2, 3, ") {
			t.Errorf("store:main@aaaa: exit %d\n%s", code, stdout)
		}
		for _, bad := range []struct{ baseline, want string }{
			{"store:nobody", "no stored run of label nobody"},
			{"store:main@ffff", "no stored run of commit ffff"},
			{"main", "want store:LABEL"},
		} {
			code, _, stderr := pgscale(t, "compare", "--baseline", bad.baseline, "--store", loc, cand)
			if code != cli.ExitUsage || !oneLine(stderr) || !strings.Contains(stderr, bad.want) {
				t.Errorf("--baseline %s: exit %d: %s", bad.baseline, code, stderr)
			}
		}
	})
}

// A store that cannot be opened loses no run: the result file is written,
// the error is one line (the password redacted) and the exit code not 0.
// A store file that cannot be written is refused before anything runs.
func TestRunWithAStoreThatFails(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	noCIEnv(t)
	out := filepath.Join(t.TempDir(), "r.json")
	code, _, stderr := pgscale(t, "run", "--dsn", dsn("postgres"), "-S", "-c", "1", "-T", "0.3", "--no-probes", "--out", out, "--store", "/proc/no-such-dir/history.db")
	if code != cli.ExitUsage || !oneLine(strings.TrimSpace(stderr)) || !strings.Contains(stderr, "store /proc/no-such-dir/history.db: ") || !strings.Contains(stderr, "nothing was run") {
		t.Errorf("an unwritable store file: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a run refused before it started wrote %s", out)
	}
	for _, c := range []struct{ loc, want string }{
		{"postgres://bench:hunter2@127.0.0.1:1/history?connect_timeout=2", "store postgres://bench:xxxxx@127.0.0.1:1/history?connect_timeout=2: "},
	} {
		out := filepath.Join(t.TempDir(), "r.json")
		code, stdout, stderr := pgscale(t, "run", "--dsn", dsn("postgres"), "-S", "-c", "1", "-T", "0.3", "--no-probes", "--out", out, "--store", c.loc)
		// stderr: the step's notice line, then the error.
		_, msg, _ := strings.Cut(stderr, "pgscale: ")
		if code != cli.ExitIncomplete || !oneLine(msg) || !strings.HasPrefix(msg, c.want) || strings.Contains(stdout+stderr, "hunter2") {
			t.Errorf("--store %s: exit %d, stderr %q", c.loc, code, stderr)
		}
		if f := readResult(t, out); !f.Complete || !strings.Contains(stdout, "result: "+out) {
			t.Errorf("--store %s: the run's file is not complete, or not named", c.loc)
		}
	}
	// --label with nothing to record it in is refused before the run.
	if code, _, stderr := pgscale(t, "run", "--dsn", dsn("postgres"), "-S", "--label", "main"); code != cli.ExitUsage || !strings.Contains(stderr, "--store") {
		t.Errorf("--label without --store: exit %d: %s", code, stderr)
	}
}

// No password reaches the store: the target's connection string is
// redacted in the file recorded, and the store's own in what is printed.
// (Both passwords go to servers that trust local connections and never
// ask for them.)
func TestStoreHoldsNoPassword(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	noCIEnv(t)
	createDB(t, "history_secret")
	pgStore := fmt.Sprintf("postgres://postgres:Quiet-Ledger-42@127.0.0.1:%d/history_secret?sslmode=disable", cluster.Port)
	target := dsn("postgres") + " password=Horse-Staple-77"
	sqliteStore := filepath.Join(t.TempDir(), "history.db")
	for _, loc := range []string{sqliteStore, pgStore} {
		code, stdout, stderr := pgscale(t, "run", "--dsn", target, "-S", "-c", "1", "-T", "0.3", "--no-probes",
			"--out", filepath.Join(t.TempDir(), "r.json"), "--store", loc)
		if code != 0 {
			t.Fatalf("run --store: exit %d: %s", code, stderr)
		}
		if strings.Contains(stdout+stderr, "Horse-Staple-77") || strings.Contains(stdout+stderr, "Quiet-Ledger-42") || !strings.Contains(stdout, "stored: ") {
			t.Errorf("a password was printed, or nothing stored:\n%s%s", stdout, stderr)
		}
	}
	if out := stdoutOf(t, "history", "list", "--store", pgStore); strings.Contains(out, "Quiet-Ledger-42") || !strings.Contains(out, "postgres:xxxxx@") {
		t.Errorf("history list shows the store as:\n%s", out)
	}
	// Every byte of the SQLite store and its journal, and every stored
	// row of the PostgreSQL one.
	files, _ := filepath.Glob(sqliteStore + "*")
	for _, p := range files {
		if b, _ := os.ReadFile(p); bytes.Contains(b, []byte("Horse-Staple-77")) {
			t.Errorf("%s holds the target's password", p)
		}
	}
	for _, table := range []string{"pgscale_results", "pgscale_series", "pgscale_points", "pgscale_machines"} {
		if n := sql(t, "history_secret", "SELECT count(*) FROM "+table+" r WHERE r::text LIKE '%Horse-Staple-77%'"); n != "0\n" {
			t.Errorf("%s: %s rows hold the target's password", table, strings.TrimSpace(n))
		}
	}
	if body := sql(t, "history_secret", "SELECT body FROM pgscale_results"); !strings.Contains(body, "password=xxxxx") {
		t.Error("the stored file does not hold the redacted connection string")
	}
}

func stdoutOf(t *testing.T, args ...string) string {
	t.Helper()
	_, stdout, _ := pgscale(t, args...)
	return stdout
}

// ab --store records one file per target, each under its label and
// commit; run takes the commit from git in the cluster's binary
// directory, or else from the CI environment.
func TestRecordingLabelsAndCommits(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	noCIEnv(t)
	loc := filepath.Join(t.TempDir(), "history.db")
	out := filepath.Join(t.TempDir(), "ab")
	code, stdout := abCLI(t, nil, "ab", "--target", "x=dsn:"+dsn("postgres"), "--target", "y=dsn:"+dsn("postgres"),
		"-S", "-c", "1", "-T", "0.3", "--warmup", "0", "--rounds", "2", "--out", out,
		"--store", loc, "--commit", "y=feedface", "--commit", "0123abc", "--label", "y=patched")
	if code != 0 {
		t.Fatalf("ab: exit %d", code)
	}
	// (The points: tps, latencies and client CPU, and the server's costs
	// where the slices measured them.)
	for _, want := range []string{
		fmt.Sprintf("stored: %s as result 1 in %s (label x, commit 0123abc from --commit, ", filepath.Join(out, "x.json"), loc),
		fmt.Sprintf("stored: %s as result 2 in %s (label patched, commit feedface from --commit, ", filepath.Join(out, "y.json"), loc),
	} {
		if line := lineWith(stdout, want); !strings.HasSuffix(line, " points)") {
			t.Errorf("ab lacks %q...:\n%s", want, stdout)
		}
	}
	if code, _ := abCLI(t, nil, "ab", "--target", "x=dsn:"+dsn("postgres"), "--target", "y=dsn:"+dsn("postgres"),
		"--store", loc, "--label", "z=other"); code != cli.ExitUsage {
		t.Errorf("--label for a target that is not there: exit %d, want 2", code)
	}

	// The CI environment's commit, for a target with no binaries of its own.
	t.Setenv("GITHUB_SHA", "5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed")
	code, stdout, stderr := pgscale(t, "run", "--dsn", dsn("postgres"), "-S", "-c", "1", "-T", "0.3", "--no-probes",
		"--out", filepath.Join(t.TempDir(), "r.json"), "--store", loc)
	if code != 0 || !strings.Contains(stdout, "(label default, commit 5eed5ee from $GITHUB_SHA, 4 points)") {
		t.Errorf("run in CI: exit %d\n%s%s", code, stdout, stderr)
	}

	// git, for an ephemeral cluster whose binaries are in a work tree: a
	// repository holding links to the installed ones.
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is not installed")
	}
	bin := filepath.Join(t.TempDir(), "build", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for d := bin; d != "/"; d = filepath.Dir(d) { // the server runs as another OS user
		if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o005 == 0 {
			os.Chmod(d, fi.Mode().Perm()|0o055)
		}
	}
	entries, err := os.ReadDir(cluster.BinDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Symlink(filepath.Join(cluster.BinDir, e.Name()), filepath.Join(bin, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	repo := filepath.Dir(bin)
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "--allow-empty", "-m", "build"}} {
		if out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	head, err := exec.Command("git", "-C", repo, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	commit := strings.TrimSpace(string(head))
	code, stdout, stderr = pgscale(t, "run", "--pg-bin", bin, "-S", "-c", "1", "-T", "0.3", "--no-probes",
		"--out", filepath.Join(t.TempDir(), "r.json"), "--store", loc, "--label", "build")
	if want := "(label build, commit " + commit[:7] + " from git in " + bin + ", 4 points)"; code != 0 || !strings.Contains(stdout, want) {
		t.Errorf("run of binaries in a work tree: exit %d, want %q\n%s%s", code, want, stdout, stderr)
	}
	code, stdout, _ = pgscale(t, "history", "show", "--store", loc, "label=build", "measure=tps")
	if code != 0 || !strings.Contains(stdout, " "+commit[:7]+" ") {
		t.Errorf("show label=build: exit %d\n%s", code, stdout)
	}
}
