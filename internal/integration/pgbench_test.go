package integration_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/testenv"
)

// pgbench is the installed pgbench, the oracle of pgscale pgbench.
func pgbenchBin(t *testing.T) string {
	t.Helper()
	p := filepath.Join(cluster.BinDir, "pgbench")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("pgbench is part of the server packages and must be installed: %v", err)
	}
	return p
}

// conn are the connection options both tools get.
func conn(db string) []string {
	return []string{"-h", cluster.SocketDir, "-p", strconv.Itoa(cluster.Port), "-U", cluster.User, db}
}

// runPgbench runs the real pgbench in dir and returns its exit code and output.
func runPgbench(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(pgbenchBin(t), args...)
	cmd.Env, cmd.Dir = pgEnv(), dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// runDropIn runs pgscale pgbench in-process with the same arguments, and
// no result file unless the arguments name one.
func runDropIn(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return pgscale(t, append([]string{"pgbench", "--pgscale-no-result"}, args...)...)
}

// The report lines whose numbers are timings (and so differ from run to
// run) keep their labels; every other number must be pgbench's.
var (
	timed = regexp.MustCompile(`^( - )?(latency average|latency stddev|initial connection time|average connection time|rate limit schedule lag|tps) = |` +
		`^rate limit schedule lag|^number of transactions above the`)
	number     = regexp.MustCompile(`-?[0-9]+(\.[0-9]+)?|NaN`)
	scriptTPS  = regexp.MustCompile(`, tps = [0-9.]+\)$`)
	stmtTiming = regexp.MustCompile(`^ +[0-9]+\.[0-9]{3}  `)
)

// reportLines are pgbench's report lines with timings masked; the version
// line, which names the tool, is left out.
func reportLines(stdout string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(stdout, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "pgbench ("):
			continue
		case timed.MatchString(l):
			l = number.ReplaceAllString(l, "#")
		case stmtTiming.MatchString(l):
			l = stmtTiming.ReplaceAllString(l, "   #  ")
		}
		out = append(out, scriptTPS.ReplaceAllString(l, ", tps = #)"))
	}
	return out
}

func writeScript(t *testing.T, dir, name, src string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The same command lines through pgbench and pgscale pgbench, with -t so
// that the counts are deterministic: the report has the same lines in the
// same order with the same values (timings aside), and the same exit code.
func TestPgbenchDropInReport(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	dir := t.TempDir()
	custom := writeScript(t, dir, "custom.sql", "\\set x :scale * 10 + :v\nSELECT :x;\n")
	one := writeScript(t, dir, "one.sql", "SELECT 1;\n")
	createDB(t, "dropin_parts")
	if code, _, stderr := runPgbench(t, dir, append([]string{"-i", "-q", "--partitions", "3"}, conn("dropin_parts")...)...); code != 0 {
		t.Fatalf("pgbench -i: exit %d\n%s", code, stderr)
	}
	for _, tc := range []struct {
		name string
		args []string
		db   string
	}{
		{"defaults", []string{"-t", "5"}, ""},
		{"select-only threads", []string{"-S", "-c", "3", "-j", "2", "-t", "10", "--random-seed", "7", "-r"}, ""},
		{"weighted scripts one thread", []string{"-b", "select-only@3", "-N", "-c", "2", "-t", "20", "--random-seed", "42", "-r", "-n"}, ""},
		{"weighted scripts threads", []string{"-b", "se@1", "-b", "simple-update@2", "-f", one + "@1", "-c", "5", "-j", "2", "-t", "12", "--random-seed", "9"}, ""},
		{"prepared retries failures", []string{"-S", "-t", "10", "-M", "prepared", "--max-tries", "3", "--failures-detailed", "-P", "1"}, ""},
		{"extended rate limit", []string{"-S", "-t", "10", "-M", "extended", "-R", "200", "-L", "1000", "-c", "2"}, ""},
		{"connect", []string{"-C", "-S", "-t", "3", "-n"}, ""},
		{"custom script scale", []string{"-f", custom, "-D", "v=5", "-s", "3", "-t", "4", "-n"}, ""},
		{"builtin ignores -s", []string{"-S", "-s", "7", "-t", "2", "-v"}, ""},
		{"partitions", []string{"-S", "-t", "5", "-n"}, "dropin_parts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := tc.db
			if db == "" {
				db = "postgres"
			}
			args := append(append([]string{}, tc.args...), conn(db)...)
			wantCode, wantOut, wantErr := runPgbench(t, dir, args...)
			code, out, stderr := runDropIn(t, args...)
			if code != wantCode {
				t.Fatalf("exit %d, pgbench exits %d\n%s\npgbench:\n%s", code, wantCode, stderr, wantErr)
			}
			want, got := reportLines(wantOut), reportLines(out)
			if strings.Join(want, "\n") != strings.Join(got, "\n") {
				t.Errorf("report differs from pgbench's:\n%s\n--- pgbench\n%s\n--- pgscale\n%s", diffLines(want, got), wantOut, out)
			}
			for _, l := range []string{"starting vacuum...end.", "pgbench: warning: scale option ignored", "starting vacuum pgbench_accounts...end."} {
				if strings.Contains(wantErr, l) != strings.Contains(stderr, l) {
					t.Errorf("pgbench's stderr has %q: %v; pgscale's: %v\n%s", l, strings.Contains(wantErr, l), strings.Contains(stderr, l), stderr)
				}
			}
		})
	}
}

// A run in which clients abort: the same report and exit code 2, pgbench's
// closing line and its error lines; the SQL error in libpq's words.
func TestPgbenchDropInAbortedRun(t *testing.T) {
	trackTime(t)
	dir := t.TempDir()
	div := writeScript(t, dir, "div.sql", "\\set x 1 / 0\nSELECT 1;\n")
	sqlerr := writeScript(t, dir, "sqlerr.sql", "SELECT 1;\nSELECT * FROM nosuch;\n")
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"meta-command error", []string{"-n", "-t", "2", "-c", "2", "-f", div, "-r"}},
		{"SQL error", []string{"-n", "-t", "2", "-f", sqlerr}},
		{"SQL error extended detailed", []string{"-n", "-t", "3", "-M", "extended", "-f", sqlerr, "--failures-detailed", "--max-tries", "2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{}, tc.args...), conn("postgres")...)
			wantCode, wantOut, wantErr := runPgbench(t, dir, args...)
			code, out, stderr := runDropIn(t, args...)
			if code != 2 || wantCode != 2 {
				t.Fatalf("exit %d, pgbench exits %d (want 2 for both)\n%s", code, wantCode, stderr)
			}
			want, got := reportLines(wantOut), reportLines(out)
			if strings.Join(want, "\n") != strings.Join(got, "\n") {
				t.Errorf("report differs from pgbench's:\n%s", diffLines(want, got))
			}
			if !sameErrorLines(wantErr, stderr) {
				t.Errorf("error lines differ:\n--- pgbench\n%s--- pgscale\n%s", wantErr, stderr)
			}
		})
	}
}

// sameErrorLines compares the "pgbench: error:" lines of two outputs as
// sets (clients abort in any order), LINE and caret lines aside.
func sameErrorLines(want, got string) bool {
	pick := func(s string) []string {
		var out []string
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(l, "pgbench: error: ") {
				out = append(out, l)
			}
		}
		sort.Strings(out)
		return out
	}
	return strings.Join(pick(want), "\n") == strings.Join(pick(got), "\n")
}

// Bad options: pgbench's message and pgbench's exit code 1, or 0 for the
// options that only list something.
func TestPgbenchDropInBadOptions(t *testing.T) {
	trackTime(t)
	dir := t.TempDir()
	for _, args := range [][]string{
		{"-x"}, {"--foo"}, {"--foo=3"}, {"-c"}, {"--client"}, {"-c", "abc"}, {"-c", "0"}, {"-c", " 3x"}, {"--c=2"},
		{"--connect=3"}, {"-t", "1", "-n", "-S", "db1", "db2"}, {"-i", "-c", "2"}, {"-F", "50"}, {"-M", "foo"},
		{"-T", "1", "-t", "1"}, {"--sampling-rate", "0.5"}, {"-l", "--sampling-rate", "2"},
		{"-l", "--sampling-rate", "0.5", "--aggregate-interval", "1"},
		{"-l", "--aggregate-interval", "2", "-T", "3"}, {"-l", "--aggregate-interval", "5", "-T", "3"},
		{"--progress-timestamp"}, {"-I", "x", "-i"}, {"-i", "-I", ""}, {"--partition-method=foo", "-i"},
		{"-i", "--partition-method", "range"}, {"-b", "foo"}, {"-b", "s"}, {"-b", "select-only@x"},
		{"-b", "select-only@-1"}, {"-R", "0"}, {"-L", "-1"},
		{"--max-tries", "-1"}, {"--max-tries", "0"}, {"-D", "x"}, {"-D", "=x"}, {"-f", "/nonexist"}, {"--log-prefix=x"},
		{"--random-seed=abc"}, {"-P", "0"}, {"-j", "0"}, {"-s", "0"}, {"--aggregate-interval", "1"},
		{"-t", "1", "-?"}, {"-b", "list"}, {"--show-script=sel"}, {"-b", "select-only@0"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			wantCode, wantOut, wantErr := runPgbench(t, dir, args...)
			code, out, stderr := runDropIn(t, args...)
			if code != wantCode {
				t.Fatalf("exit %d, pgbench exits %d\npgscale:\n%s\npgbench:\n%s", code, wantCode, stderr, wantErr)
			}
			// getopt names the program as it was run: pgbench by its path.
			wantErr = strings.ReplaceAll(wantErr, pgbenchBin(t)+": ", "pgbench: ")
			if stderr != wantErr || out != wantOut {
				t.Errorf("output differs:\n--- pgbench\n%s%s--- pgscale\n%s%s", wantOut, wantErr, out, stderr)
			}
		})
	}
}

// What pgscale pgbench refuses and pgbench 15 does not have.
func TestPgbenchDropInRefusesByName(t *testing.T) {
	trackTime(t)
	code, _, stderr := runDropIn(t, append([]string{"-d", "-t", "1"}, conn("postgres")...)...)
	if code != 1 || !strings.Contains(stderr, "-d/--debug is not supported") {
		t.Errorf("-d: exit %d, %s", code, stderr)
	}
	if code, _, stderr := runPgbench(t, t.TempDir(), "--exit-on-abort", "-t", "1"); code != 1 || !strings.Contains(stderr, "unrecognized option '--exit-on-abort'") {
		t.Errorf("pgbench 15 now knows --exit-on-abort (exit %d): the README's list of what the oracle cannot check is out of date\n%s", code, stderr)
	}
}

// logLine is one line of pgbench's -l log, parsed as parsers of it do: a
// line of integers, with a word in the third column for a transaction that
// did not complete.
type logLine []string

func parseLog(t *testing.T, path string) []logLine {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []logLine
	for i, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if l == "" {
			continue
		}
		f := strings.Fields(l)
		for j, v := range f {
			if _, err := strconv.ParseInt(v, 10, 64); err != nil && !(j == 2 && (v == "failed" || v == "skipped")) {
				t.Fatalf("%s:%d: column %d is %q, not an integer: %q", path, i+1, j+1, v, l)
			}
		}
		out = append(out, f)
	}
	return out
}

// logFiles runs both tools with -l under the same prefix in two
// directories and returns, per file suffix (PID replaced by "PID"), the
// parsed lines of each.
func logFiles(t *testing.T, args ...string) (pgbench, pgscale map[string][]logLine) {
	t.Helper()
	read := func(dir string) map[string][]logLine {
		names, _ := filepath.Glob(filepath.Join(dir, "log.*"))
		m := map[string][]logLine{}
		pid := regexp.MustCompile(`^log\.[0-9]+`)
		for _, n := range names {
			m[pid.ReplaceAllString(filepath.Base(n), "log.PID")] = parseLog(t, n)
		}
		return m
	}
	a, b := t.TempDir(), t.TempDir()
	full := append(append([]string{"-l"}, args...), conn("postgres")...)
	if code, _, stderr := runPgbench(t, a, append(full, "--log-prefix", filepath.Join(a, "log"))...); code != 0 {
		t.Fatalf("pgbench: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := runDropIn(t, append(full, "--log-prefix", filepath.Join(b, "log"))...); code != 0 {
		t.Fatalf("pgscale pgbench: exit %d\n%s", code, stderr)
	}
	return read(a), read(b)
}

func columns(ls []logLine) map[int]int {
	m := map[int]int{}
	for _, l := range ls {
		m[len(l)]++
	}
	return m
}

// -l: the same file names (one per thread), the same column count on every
// line, and the same transactions (client, number, script) in each file.
func TestPgbenchDropInLogFiles(t *testing.T) {
	trackTime(t)
	for _, tc := range []struct {
		name string
		args []string
		cols int
	}{
		{"plain", []string{"-n", "-S", "-c", "3", "-j", "2", "-t", "5"}, 6},
		{"rate and tries", []string{"-n", "-S", "-c", "2", "-t", "5", "-R", "500", "--max-tries", "2"}, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, got := logFiles(t, tc.args...)
			if len(want) == 0 || len(want) != len(got) {
				t.Fatalf("log files %v, pgbench writes %v", keys(got), keys(want))
			}
			for name, w := range want {
				g, ok := got[name]
				if !ok {
					t.Fatalf("no %s; pgscale wrote %v", name, keys(got))
				}
				if cw, cg := columns(w), columns(g); len(cw) != 1 || cw[tc.cols] != len(w) || len(cg) != 1 || cg[tc.cols] != len(g) {
					t.Errorf("%s: column counts %v, pgbench's %v, want %d on every line", name, cg, cw, tc.cols)
				}
				if a, b := txnKeys(w), txnKeys(g); a != b {
					t.Errorf("%s: transactions differ:\n--- pgbench\n%s\n--- pgscale\n%s", name, a, b)
				}
			}
		})
	}
}

// txnKeys lists a log's (client, transaction number, script), sorted.
func txnKeys(ls []logLine) string {
	var ks []string
	for _, l := range ls {
		ks = append(ks, l[0]+" "+l[1]+" "+l[3])
	}
	sort.Strings(ks)
	return strings.Join(ks, "\n")
}

func keys(m map[string][]logLine) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// --sampling-rate: with a fixed seed, pgscale logs exactly the
// transactions pgbench logs (the same per-thread random sequence).
func TestPgbenchDropInSampling(t *testing.T) {
	trackTime(t)
	// A thread per client: which transaction takes which draw of the
	// thread's sequence is then the client's own order.
	want, got := logFiles(t, "-n", "-S", "-c", "2", "-j", "2", "-t", "40", "--sampling-rate", "0.3", "--random-seed", "11")
	for _, name := range []string{"log.PID", "log.PID.1"} {
		w, g := want[name], got[name]
		if len(w) == 0 || len(w) >= 40 {
			t.Fatalf("pgbench logged %d of 40 transactions in %s; the test needs a sample", len(w), name)
		}
		if a, b := txnKeys(w), txnKeys(g); a != b {
			t.Errorf("%s: sampled transactions differ:\n--- pgbench\n%s\n--- pgscale\n%s", name, a, b)
		}
	}
}

// --aggregate-interval: pgbench's 15 columns, one line per whole interval,
// consecutive seconds.
func TestPgbenchDropInAggregateLog(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	want, got := logFiles(t, "-n", "-S", "-T", "3", "--aggregate-interval", "1")
	for _, m := range []map[string][]logLine{want, got} {
		ls := m["log.PID"]
		if len(ls) < 2 || len(ls) > 4 {
			t.Fatalf("%d aggregate lines in %v, want 2 to 4 for 3 s", len(ls), keys(m))
		}
		for i, l := range ls {
			if len(l) != 15 {
				t.Errorf("line %d has %d columns, want 15: %v", i+1, len(l), l)
			}
			if i > 0 {
				prev, _ := strconv.ParseInt(ls[i-1][0], 10, 64)
				cur, _ := strconv.ParseInt(l[0], 10, 64)
				if cur != prev+1 {
					t.Errorf("interval %d starts at %d, after %d", i+1, cur, prev)
				}
			}
		}
	}
}

// pgbench -i with steps, tablespaces and partitions: pgscale pgbench -i
// makes the same tables, in the same tablespaces, with the same rows.
func TestPgbenchDropInInit(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	ctx := context.Background()
	c, err := pgconn.Connect(ctx, dsn("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	for _, q := range []string{"SET allow_in_place_tablespaces = on", "DROP TABLESPACE IF EXISTS ts_data", "DROP TABLESPACE IF EXISTS ts_index",
		"CREATE TABLESPACE ts_data LOCATION ''", "CREATE TABLESPACE ts_index LOCATION ''"} {
		if err := c.Exec(ctx, q).Close(); err != nil && !strings.Contains(q, "DROP") {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"server-side hash partitions tablespaces", []string{"-I", "dtGvpf", "--tablespace", "ts_data", "--index-tablespace", "ts_index",
			"--partitions", "3", "--partition-method", "hash", "-s", "2", "--unlogged-tables", "-F", "90"}},
		{"client-side range partitions quiet", []string{"-q", "-I", "dt g p", "--partitions", "4", "--foreign-keys", "-n"}},
		{"defaults", []string{"-s", "1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			createDB(t, "init_theirs")
			createDB(t, "init_ours")
			if code, _, stderr := runPgbench(t, t.TempDir(), append(append([]string{"-i"}, tc.args...), conn("init_theirs")...)...); code != 0 {
				t.Fatalf("pgbench -i: exit %d\n%s", code, stderr)
			}
			code, _, stderr := runDropIn(t, append(append([]string{"-i"}, tc.args...), conn("init_ours")...)...)
			if code != 0 {
				t.Fatalf("pgscale pgbench -i: exit %d\n%s", code, stderr)
			}
			if !regexp.MustCompile(`(?m)^done in [0-9.]+ s \(.*\)\.$`).MatchString(stderr) {
				t.Errorf("no pgbench closing line in:\n%s", stderr)
			}
			if a, b := catalog(t, "init_theirs"), catalog(t, "init_ours"); a != b {
				t.Errorf("schema differs:\n--- pgbench\n%s\n--- pgscale\n%s", a, b)
			}
			if a, b := rows(t, "init_theirs"), rows(t, "init_ours"); a != b {
				t.Errorf("rows differ:\n--- pgbench\n%s\n--- pgscale\n%s", a, b)
			}
		})
	}
}

// catalog describes pgbench's relations: kind, persistence, options,
// tablespace, partition bounds, columns, constraints and indexes.
func catalog(t *testing.T, db string) string {
	return sql(t, db, `
SELECT c.relname, c.relkind, c.relpersistence, coalesce(array_to_string(c.reloptions, ','), ''),
       coalesce(ts.spcname, ''), coalesce(pg_get_expr(c.relpartbound, c.oid), ''),
       (SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END, ', ' ORDER BY a.attnum)
          FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0),
       coalesce((SELECT string_agg(co.conname || ' ' || pg_get_constraintdef(co.oid), ', ' ORDER BY co.conname)
          FROM pg_constraint co WHERE co.conrelid = c.oid), '')
  FROM pg_class c LEFT JOIN pg_tablespace ts ON ts.oid = c.reltablespace
 WHERE c.relname LIKE 'pgbench%' ORDER BY c.relname`)
}

// rows fingerprints every pgbench table's rows.
func rows(t *testing.T, db string) string {
	var b strings.Builder
	for _, tbl := range []string{"pgbench_branches", "pgbench_tellers", "pgbench_accounts", "pgbench_history"} {
		b.WriteString(sql(t, db, "SELECT '"+tbl+"', count(*), coalesce(sum(hashtext(t::text)::numeric), 0) FROM "+tbl+" t"))
	}
	return b.String()
}
