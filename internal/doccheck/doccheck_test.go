package doccheck_test

// TestDocCommands keeps the documentation's commands true. It reads every
// fenced code block (untyped or sh) of README.md and docs/*.md and takes
// from it each line that is a `pgscale ...` or `go run ./cmd/pgscale ...`
// command, with or without a `$ ` prompt (output lines are not), `\`
// continuations joined, `;` splitting a line into commands and `# comments`
// dropped; in a block that says `alias pgbench='pgscale pgbench'`, its
// `pgbench ...` lines too. Then:
//
//   - Every command is parsed by the command tree as written: `--help` is
//     appended, so cobra parses every flag and value (an unknown or renamed
//     flag, a malformed duration, list or number is exit 2) and then prints
//     the help instead of running. (`pgscale pgbench` parses its own command
//     line, as pgbench does; those commands all run, below.)
//   - Every command not named in notRun, and whose inputs exist, then runs
//     in-process through cli.Main, in document order, in one working
//     directory (so `compare` and `report` read what the `run` and `ab`
//     before them wrote), shortened by rewrite (-T 1, shorter sweeps,
//     2 rounds, a suite as --dry-run, ...), against this package's cluster
//     through libpq's environment (PGHOST...) — except `go run ./cmd/pgscale`
//     commands, which start their own ephemeral cluster as a newcomer's does.
//     Each must exit with its documented code: 0; 0, 1 or 4 (passed,
//     failed, inconclusive) where `--bound`, `--expect` or `history check`
//     judge what the run measured, shortened as it is; or what
//     expect says. The same command text in two places runs once. About
//     30 of the 50-odd distinct commands run, in 1–3 minutes on 2 cores.
//
// Parsed, not run (each logged with its reason): commands that need a remote
// server, builds the machine does not have, or Valgrind (notRun; every entry
// must still match a command, so the list cannot outlive the docs), and
// commands whose inputs the docs elide (`...`) or make elsewhere (a file or
// store no earlier command wrote). With -short only the parsing runs.
//
// With CI=true nothing is skipped for a missing local dependency
// (PostgreSQL, pgbouncer): it fails instead.

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/cli"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/target/targettest"
	"github.com/pgscale/pgscale/internal/testenv"
)

// notRun lists the documented commands a test cannot run, each by a
// substring of its text, with the reason. Keep it short.
var notRun = []struct{ match, why string }{
	{"@db1", "a remote server (db1)"},
	{"postgres://ci@db/bench", "a remote history store"},
	{"ab --target master=bin:/usr/local/pg-master/bin", "builds of two PostgreSQL versions the machine does not have"},
	{"--count instructions", "Valgrind: minutes on a shared machine; internal/cli's TestCountInstructionsAA runs an A/A under it"},
	{"knn_query.sql", "a vector extension and scripts the docs do not give"},
	{"--replicas", "an ephemeral cluster with a streaming replica (this test runs against its own server): internal/cli's TestProxyPgpoolLoadBalances runs it"},
	{"src:", "source builds: minutes each; internal/build's and internal/cli's tests build and run them"},
	{"--pg-src", "a source build: minutes; internal/cli's tests run one"},
	{"--coordinator", "agents: processes that meet in a coordination database; internal/agent's tests run them"},
	{"~/myext", "an extension's repository the docs do not give; internal/cli's TestRunExt and TestExtensionCommitsCounted build and run one"},
	{"pg_rational@slow --setup setup.sql -f add.sql", "the extension fixture (.ci/ext-source) and a setup and script the docs describe in words; internal/report's extprofile.json is that run, and internal/probe's TestProfileShortSteps profiles a server in CI"},
	{"micro --target base=~/proj", "a project's repository at two revisions the docs do not give; internal/integration's TestMicroGoFindsTheSlowedBenchmark runs one"},
	{"micro --target prev=~/proj", "a project's repository at two revisions the docs do not give; internal/integration's TestMicroHistory stores runs of one"},
	{"bisect --resume results/", "the log of a bisect the docs only show; internal/integration's TestHistoryBisectFindsTheCommitSkippingOnesThatDoNotBuild resumes one"},
	{"--param base=proxy:base.yaml", "the definitions of two pooler builds the docs do not give (even --dry-run reads them); internal/cli's preset tests run pooler-ci"},
	{"pgbouncer:src=", "a pgbouncer repository the docs do not give (REPO, ~/pgbouncer); internal/integration's TestPgBouncerFromSourceBalanced builds the fixture's and runs it"},
}

// expect names commands whose documented exit code is not 0 (or 0 or 1),
// with what stderr must say.
var expect = []struct {
	match  string
	code   int
	stderr string
}{
	{"pgscale run -f bad.sql", cli.ExitUsage, "bad.sql:1:11: syntax error in command \"set\": unexpected end of line, expected an operand"},
}

// fixtures are the files the documented commands name, as the docs give
// them where they do.
var fixtures = map[string]string{
	"bench.sql":   "\\set aid random(1, 100000 * :scale)\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n",
	"bad.sql":     "\\set x 1 +\n", // docs: the error at 1:11
	"join.sql":    "\\set aid random(1, 100000)\nSELECT a.abalance FROM pgbench_accounts a JOIN pgbench_branches b ON b.bid = a.bid JOIN pgbench_tellers t ON t.bid = b.bid WHERE a.aid = :aid LIMIT 1;\n",
	"ddl.sql":     "CREATE TEMPORARY TABLE doccheck_ddl (id int);\nDROP TABLE doccheck_ddl;\n",
	"nothing.sql": "SELECT 1;\n\\sleep 100ms\n",
	// study.yaml: the suite file docs/suites.md shows, read from it.
}

var cluster *target.Cluster

func TestMain(m *testing.M) {
	if testenv.Short() {
		os.Exit(m.Run()) // the commands run in the full suite alone: no cluster
	}
	os.Exit(targettest.Run(m, target.Options{MaxConnections: 100}, func(c *target.Cluster) { cluster = c }))
}

// command is one documented command line.
type command struct {
	file   string
	line   int
	text   string   // as written, continuations joined, comment dropped
	args   []string // after "pgscale"
	ownEnv bool     // go run ./cmd/pgscale: no PGHOST, its own ephemeral cluster
}

func (c command) String() string { return fmt.Sprintf("%s:%d: %s", c.file, c.line, c.text) }

func TestDocCommands(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	files := append([]string{filepath.Join(root, "README.md")}, docs...)
	var cmds []command
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		cs, err := extract(rel, string(b))
		if err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cs...)
	}
	if len(cmds) < 40 {
		t.Fatalf("found only %d commands in README.md and docs/: is the extraction broken?", len(cmds))
	}
	t.Logf("%d documented commands in %d files", len(cmds), len(files))

	// Every command parses as written.
	for _, c := range cmds {
		if len(c.args) > 0 && c.args[0] == "pgbench" {
			continue // its own parser: these run below
		}
		var out, errb bytes.Buffer
		if code := cli.Main(append(slices.Clone(c.args), "--help"), &out, &errb); code != 0 || errb.Len() > 0 {
			t.Errorf("%s\ndoes not parse (exit %d): %s", c, code, strings.TrimSpace(errb.String()))
		}
	}
	if t.Failed() {
		return // running commands that do not parse says nothing more
	}
	testenv.Slow(t) // the runs below; -short checks that every command parses

	// A representative subset runs.
	work := t.TempDir()
	t.Chdir(work)
	for name, body := range fixtures {
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The repository's example proxy definitions, which the docs name
	// as a checkout has them (examples/proxy/NAME.yaml).
	examples, _ := filepath.Glob(filepath.Join(root, "examples", "proxy", "*.yaml"))
	for _, ex := range examples {
		b, err := os.ReadFile(ex)
		if err == nil {
			err = os.MkdirAll(filepath.Join("examples", "proxy"), 0o755)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join("examples", "proxy", filepath.Base(ex)), b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	study, err := yamlBlock(filepath.Join(root, "docs", "suites.md"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile("study.yaml", []byte(study), 0o644)
	prepareCluster(t)
	// build --prune --all empties a cache: a cache of this test's own.
	t.Setenv("PGSCALE_BUILD_CACHE", filepath.Join(work, "build-cache"))
	pgbouncer := havePgBouncer()

	used := map[string]bool{}
	ran := map[string]bool{}
	start := time.Now()
	nRun := 0
	for _, c := range cmds {
		if ran[c.text] {
			continue
		}
		ran[c.text] = true
		if why := skipReason(c, used); why != "" {
			t.Logf("parsed, not run: %s\n    (%s)", c, why)
			continue
		}
		args, why := inputs(localPaths(c.args, work))
		if why != "" {
			t.Logf("parsed, not run: %s\n    (%s)", c, why)
			continue
		}
		if slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--pooler") || strings.Contains(a, "=pgbouncer:") }) && !pgbouncer {
			if os.Getenv("CI") == "true" {
				t.Errorf("%s: pgbouncer is not installed (CI=true: a missing dependency fails)", c)
			} else {
				t.Logf("parsed, not run: %s\n    (pgbouncer is not installed)", c)
			}
			continue
		}
		args = rewrite(args)
		nRun++
		t0 := time.Now()
		code, stderr := runDoc(t, c, args)
		t.Logf("ran in %.1f s, exit %d: %s\n    as: pgscale %s", time.Since(t0).Seconds(), code, c, shellJoin(args))
		want, wantErr := []int{0}, ""
		if slices.ContainsFunc(args, func(a string) bool {
			return a == "--bound" || a == "--expect" || strings.HasPrefix(a, "--bound=") || strings.HasPrefix(a, "--expect=")
		}) || (len(args) > 1 && args[0] == "history" && args[1] == "check") {
			want = []int{cli.ExitOK, cli.ExitRegression, cli.ExitInconclusive}
		}
		for _, e := range expect {
			if strings.Contains(c.text, e.match) {
				want, wantErr = []int{e.code}, e.stderr
			}
		}
		if !slices.Contains(want, code) {
			t.Errorf("%s\nas: pgscale %s\nexit %d, documented %v; stderr:\n%s", c, shellJoin(args), code, want, tail(stderr, 20))
		} else if wantErr != "" && !strings.Contains(stderr, wantErr) {
			t.Errorf("%s\nstderr lacks the documented %q:\n%s", c, wantErr, tail(stderr, 20))
		}
	}
	t.Logf("ran %d of %d distinct commands in %.0f s", nRun, len(ran), time.Since(start).Seconds())
	for _, n := range notRun {
		if !used[n.match] {
			t.Errorf("notRun entry %q matches no documented command: remove it", n.match)
		}
	}
	if nRun < 20 {
		t.Errorf("only %d commands ran: the docs' examples should mostly run", nRun)
	}
}

// skipReason is why c is not run (it names a remote server, ...), or "".
func skipReason(c command, used map[string]bool) string {
	for _, n := range notRun {
		if strings.Contains(c.text, n.match) {
			used[n.match] = true
			return n.why
		}
	}
	return ""
}

// inputs expands the globs of args in the working directory, an elided
// `...` path component included; it returns why the command cannot run
// when an argument is elided outright or names an input nothing wrote.
func inputs(args []string) ([]string, string) {
	var out []string
	for i, a := range args {
		if a == "..." {
			return nil, "an argument is elided (...)"
		}
		pat := strings.TrimSuffix(strings.ReplaceAll(a, "...", "*"), "/")
		if strings.ContainsAny(pat, "*?[") {
			m, _ := filepath.Glob(pat)
			if len(m) == 0 {
				return nil, fmt.Sprintf("%s: what it reads comes from a run the docs only show", a)
			}
			if strings.HasSuffix(a, "/") {
				for j := range m {
					m[j] += "/"
				}
			}
			if strings.Contains(a, "...") {
				m = m[:1] // an elided run's name: the one run that made it
			}
			out = append(out, m...)
			continue
		}
		if i > 0 && args[i-1] == "--store" && (args[0] == "history" || args[0] == "compare") && isLocalStore(a) {
			if _, err := os.Stat(a); err != nil {
				return nil, fmt.Sprintf("--store %s: a store the docs filled elsewhere", a)
			}
		}
		if i > 0 && !strings.HasPrefix(a, "-") && !strings.HasPrefix(args[i-1], "-") && isInputFile(a) {
			if _, err := os.Stat(a); err != nil {
				return nil, fmt.Sprintf("%s: what it reads comes from a run the docs only show", a)
			}
		}
		out = append(out, a)
	}
	return out, ""
}

// isLocalStore reports whether a --store value is an SQLite file.
func isLocalStore(a string) bool {
	return a != "..." && !strings.Contains(a, "://") && !strings.Contains(a, "=")
}

// isInputFile reports whether a positional argument names a file a command
// reads.
func isInputFile(a string) bool {
	return strings.HasSuffix(a, ".json") || strings.HasSuffix(a, ".yaml") || strings.HasPrefix(a, "results/")
}

// rewrite shortens a documented command so the test runs in minutes: -T to
// 1 s (to a tenth, with the disturbance windows, where --disturb needs the
// time), -t to at most 100, a sweep of more than two counts to its smallest
// and the counts a bound or rule names, --rounds to 2, -s to 1, pgbench's
// --aggregate-interval to the duration, a suite to its --dry-run. run and ab
// without a duration get -T 1, and ab without a warm-up 0.2 s of one (its
// default, 1 s before every step of 1 s, is what a real run needs).
func rewrite(args []string) []string {
	out := slices.Clone(args)
	disturb := slices.ContainsFunc(out, func(a string) bool { return strings.HasPrefix(a, "--disturb") })
	named := namedCounts(out)
	factor := 0.0 // the duration's scale, once -T is rewritten
	hasT, hasRounds, hasWarmup := false, false, false
	for i := 0; i < len(out); i++ {
		a := out[i]
		if i+1 >= len(out) {
			continue
		}
		v := out[i+1]
		switch a {
		case "-T", "--time":
			hasT = true
			d, err := seconds(v)
			if err != nil || d <= 1 {
				continue
			}
			nd := 1.0
			if disturb {
				nd = d / 10
			}
			factor = nd / d
			out[i+1] = strconv.FormatFloat(nd, 'f', -1, 64)
		case "-t", "--transactions":
			hasT = true
			if n, err := strconv.Atoi(v); err == nil && n > 100 {
				out[i+1] = "100"
			}
		case "-c", "--client":
			out[i+1] = shortSweep(v, named)
		case "--warmup":
			hasWarmup = true
		case "--rounds":
			hasRounds = true
			out[i+1] = "2"
		case "-s", "--scale":
			out[i+1] = "1"
		}
	}
	if factor > 0 {
		for i := 0; i+1 < len(out); i++ {
			switch out[i] {
			case "--disturb", "--disturb-file":
				out[i+1] = scaleWindow(out[i+1], factor)
			case "--aggregate-interval":
				out[i+1] = "1"
			}
		}
	}
	cmd := ""
	if len(out) > 0 {
		cmd = out[0]
	}
	switch {
	case cmd == "suite" && !slices.Contains(out, "--dry-run"):
		out = append(out, "--dry-run")
	case (cmd == "run" || cmd == "ab") && !hasT && !slices.Contains(out, "--describe"):
		out = append(out, "-T", "1")
	}
	if cmd == "ab" && !hasRounds {
		out = append(out, "--rounds", "2")
	}
	if cmd == "ab" && !hasWarmup {
		out = append(out, "--warmup", "0.2")
	}
	return out
}

// localPaths moves the docs' /tmp/readme into the test's directory.
func localPaths(args []string, work string) []string {
	out := slices.Clone(args)
	for i, a := range out {
		if strings.Contains(a, "/tmp/readme/") {
			out[i] = strings.ReplaceAll(a, "/tmp/readme/", filepath.Join(work, "readme")+"/")
			os.MkdirAll(filepath.Join(work, "readme"), 0o755)
		}
	}
	return out
}

var countRE = regexp.MustCompile(`c=(\d+)`)

// namedCounts are the client counts the bounds and rules of args name.
func namedCounts(args []string) []int {
	var ns []int
	for i, a := range args {
		if i > 0 && (args[i-1] == "--bound" || args[i-1] == "--expect") {
			for _, m := range countRE.FindAllStringSubmatch(a, -1) {
				n, _ := strconv.Atoi(m[1])
				ns = append(ns, n)
			}
		}
	}
	return ns
}

func shortSweep(list string, named []int) string {
	var ns []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(f)
		if err != nil {
			return list
		}
		ns = append(ns, n)
	}
	if len(ns) <= 2 {
		return list // a sweep of two: the least that is one
	}
	slices.Sort(ns)
	keep := []int{ns[0]}
	for _, n := range named {
		if slices.Contains(ns, n) && !slices.Contains(keep, n) {
			keep = append(keep, n)
		}
	}
	slices.Sort(keep)
	var s []string
	for _, n := range keep {
		s = append(s, strconv.Itoa(n))
	}
	return strings.Join(s, ",")
}

var windowRE = regexp.MustCompile(`@([0-9.]+)s?(?:-([0-9.]+)s?)?`)

// scaleWindow scales a disturbance window's times: NAME@15s-30s:2 by 0.1 is
// NAME@1.5-3:2.
func scaleWindow(spec string, f float64) string {
	return windowRE.ReplaceAllStringFunc(spec, func(m string) string {
		p := windowRE.FindStringSubmatch(m)
		scale := func(s string) string {
			x, _ := strconv.ParseFloat(s, 64)
			return strconv.FormatFloat(math.Round(x*f*100)/100, 'f', -1, 64)
		}
		r := "@" + scale(p[1])
		if p[2] != "" {
			r += "-" + scale(p[2])
		}
		return r
	})
}

// seconds reads a -T value: a bare number of seconds or a Go duration.
func seconds(v string) (float64, error) {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return f, nil
	}
	d, err := time.ParseDuration(v)
	return d.Seconds(), err
}

// runDoc runs one command in-process with libpq's environment pointing at
// the package's cluster (none for a go run command) and returns its exit
// code and stderr.
func runDoc(t *testing.T, c command, args []string) (int, string) {
	t.Helper()
	env := map[string]string{"PGHOST": cluster.SocketDir, "PGPORT": strconv.Itoa(cluster.Port), "PGUSER": cluster.User, "PGDATABASE": "postgres"}
	for k, v := range env {
		t.Setenv(k, v)
		if c.ownEnv {
			os.Unsetenv(k) // unset, not empty: the server reads an empty PGPORT as a port
		}
	}
	var out, errb bytes.Buffer
	code := cli.Main(args, &out, &errb)
	return code, errb.String()
}

// prepareCluster makes what the commands expect of the server: pgbench's
// data in postgres, and a database bench for the pgbench examples.
func prepareCluster(t *testing.T) {
	t.Helper()
	var out, errb bytes.Buffer
	if code := cli.Main([]string{"init", "--dsn", cluster.ConnString("postgres"), "-s", "1"}, &out, &errb); code != 0 {
		t.Fatalf("init: exit %d: %s", code, errb.String())
	}
	ctx := context.Background()
	conn, err := pgconn.Connect(ctx, cluster.ConnString("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS bench").ReadAll(); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE bench TEMPLATE template0").ReadAll(); err != nil {
		t.Fatal(err)
	}
}

// havePgBouncer reports whether pgbouncer is where pgscale looks for it.
func havePgBouncer() bool {
	if p := os.Getenv("PGSCALE_PGBOUNCER"); p != "" {
		_, err := os.Stat(p)
		return err == nil
	}
	if _, err := exec.LookPath("pgbouncer"); err == nil {
		return true
	}
	_, err := os.Stat("/usr/sbin/pgbouncer")
	return err == nil
}

// extract finds the commands in the fenced code blocks of a markdown file.
func extract(file, text string) ([]command, error) {
	var cmds []command
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		fence, ok := strings.CutPrefix(strings.TrimSpace(lines[i]), "```")
		if !ok {
			continue
		}
		lang := strings.TrimSpace(fence)
		start := i + 1
		end := start
		for end < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[end]), "```") {
			end++
		}
		block := lines[start:end]
		i = end
		if lang != "" && lang != "sh" && lang != "bash" && lang != "console" {
			continue
		}
		alias := strings.Contains(strings.Join(block, "\n"), "alias pgbench='pgscale pgbench'")
		for j := 0; j < len(block); j++ {
			at := start + j + 1
			l := block[j]
			for strings.HasSuffix(l, "\\") && j+1 < len(block) {
				j++
				l = strings.TrimSuffix(l, "\\") + " " + strings.TrimSpace(block[j])
			}
			l = strings.TrimPrefix(strings.TrimSpace(l), "$ ")
			if !strings.HasPrefix(l, "pgscale ") && !strings.HasPrefix(l, "go run ./cmd/pgscale") &&
				!(alias && strings.HasPrefix(l, "pgbench ")) {
				continue // output, or another program
			}
			words, err := shellSplit(l)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %v", file, at, err)
			}
			for _, w := range splitCommands(words) {
				c := command{file: file, line: at, text: strings.Join(w.text, " ")}
				switch {
				case len(w.words) >= 3 && w.words[0] == "go" && w.words[1] == "run" && w.words[2] == "./cmd/pgscale":
					c.args, c.ownEnv = w.words[3:], true
				case len(w.words) >= 1 && w.words[0] == "pgscale":
					c.args = w.words[1:]
				case alias && len(w.words) >= 1 && w.words[0] == "pgbench":
					c.args = append([]string{"pgbench"}, w.words[1:]...)
				default:
					continue
				}
				cmds = append(cmds, c)
			}
		}
	}
	return cmds, nil
}

type shellCommand struct{ words, text []string }

// splitCommands splits a line's words at `;` into commands.
func splitCommands(words []word) []shellCommand {
	var out []shellCommand
	cur := shellCommand{}
	for _, w := range words {
		if w.sep {
			out = append(out, cur)
			cur = shellCommand{}
			continue
		}
		cur.words = append(cur.words, w.s)
		cur.text = append(cur.text, w.raw)
	}
	return append(out, cur)
}

type word struct {
	s, raw string
	sep    bool // an unquoted ;
}

// shellSplit splits a line into words as sh does: single and double quotes,
// backslash escapes, an unquoted `;` between commands, `#` at a word's start
// beginning a comment.
func shellSplit(line string) ([]word, error) {
	var words []word
	var cur, raw strings.Builder
	in := false
	flush := func() {
		if in {
			words = append(words, word{s: cur.String(), raw: raw.String()})
		}
		cur.Reset()
		raw.Reset()
		in = false
	}
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case ch == ' ' || ch == '\t':
			flush()
			continue
		case ch == '#' && !in:
			flush()
			return words, nil
		case ch == ';':
			flush()
			words = append(words, word{sep: true})
			continue
		case ch == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated ' in %q", line)
			}
			cur.WriteString(line[i+1 : i+1+j])
			raw.WriteString(line[i : i+2+j])
			i += j + 1
		case ch == '"':
			j := strings.IndexByte(line[i+1:], '"')
			if j < 0 {
				return nil, fmt.Errorf("unterminated \" in %q", line)
			}
			cur.WriteString(line[i+1 : i+1+j])
			raw.WriteString(line[i : i+2+j])
			i += j + 1
		case ch == '\\' && i+1 < len(line):
			cur.WriteByte(line[i+1])
			raw.WriteString(line[i : i+2])
			i++
		default:
			cur.WriteByte(ch)
			raw.WriteByte(ch)
		}
		in = true
	}
	flush()
	return words, nil
}

// yamlBlock is the first yaml block of a markdown file.
func yamlBlock(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	_, rest, ok := strings.Cut(string(b), "```yaml\n")
	if !ok {
		return "", fmt.Errorf("%s: no yaml block", path)
	}
	body, _, _ := strings.Cut(rest, "```")
	return body, nil
}

func shellJoin(args []string) string {
	var s []string
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " '\"*|<>&;$`\\") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		s = append(s, a)
	}
	return strings.Join(s, " ")
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
