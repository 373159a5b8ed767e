package integration_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/cli"
	"github.com/pgscale/pgscale/internal/testenv"
)

// The pgbench oracle, end to end: every script under
// internal/script/testdata/oracle was run by pgbench 15 itself (record.sh),
// writing each value it computes into table out; pgscale runs the same
// script with the same options and must leave the same rows.
const oracleDir = "../script/testdata/oracle"

var (
	argsLine = regexp.MustCompile(`(?m)^-- pgbench: (.*)$`)
	errLine  = regexp.MustCompile(`(?m)^pgbench: error: (.*)$`)
	// pgbench's run-time messages say which client and command aborted;
	// the cause is what follows.
	abortPrefix = regexp.MustCompile(`^client \d+ (?:aborted in command \d+ \(\w+\) of script \d+; |script \d+ (?:aborted in )?command \d+ query \d+: |aborted: )`)
	parsePrefix = regexp.MustCompile(`^\S+\.sql:\d+: `)
	exitStatus  = regexp.MustCompile(`\(exit (\d+)\)`)
)

// oracleArgs turns a script's "-- pgbench:" options into pgscale's.
func oracleArgs(src string) []string {
	m := argsLine.FindStringSubmatch(src)
	if m == nil {
		m = []string{"", ""}
	}
	var args []string
	for _, f := range strings.Fields(m[1]) {
		args = append(args, strings.Trim(f, "'")) // record.sh shell-quotes -D values
	}
	// pgbench runs one client for 10 transactions unless told; pgscale's
	// default is a timed sweep.
	out := []string{"-c", "1"}
	if !strings.Contains(" "+m[1]+" ", " -t ") && !strings.Contains(" "+m[1]+" ", " -T ") {
		out = append(out, "-t", "10")
	}
	for i := 0; i < len(args); i++ {
		// -D si=' 12' was split by Fields: rejoin a quoted value.
		if args[i] == "-D" && i+2 < len(args) && strings.HasSuffix(args[i+1], "=") && !strings.HasPrefix(args[i+2], "-") {
			out = append(out, "-D", args[i+1]+" "+args[i+2])
			i += 2
			continue
		}
		if i > 0 && args[i-1] == "-f" {
			// Scripts named in the options are relative to the oracle directory.
			args[i] = filepath.Join(oracleDir, args[i])
		}
		out = append(out, args[i])
	}
	return out
}

func TestPgbenchOracle(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	files, _ := filepath.Glob(filepath.Join(oracleDir, "*.sql"))
	if len(files) < 10 {
		t.Fatalf("found %d oracle scripts in %s", len(files), oracleDir)
	}
	createDB(t, "oracle")
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".sql")
		t.Run(name, func(t *testing.T) {
			src, _ := os.ReadFile(file)
			want, err := os.ReadFile(strings.TrimSuffix(file, ".sql") + ".out")
			if err != nil {
				t.Fatal(err)
			}
			sql(t, "oracle", "DROP TABLE IF EXISTS out; CREATE TABLE out (k text, v text, seq bigserial)")
			args := oracleArgs(string(src))
			full := append([]string{"run", "--dsn", dsn("oracle"), "-n", "-P", "0", "--out", filepath.Join(t.TempDir(), "r.json")}, args...)
			code, stdout, stderr := pgscale(t, append(full, "-f", file)...)
			if code != 0 {
				t.Fatalf("pgscale %v: exit %d\n%s\n%s", args, code, stdout, stderr)
			}
			order := "seq"
			if strings.Contains(argsLine.FindString(string(src)), " -c ") {
				order = "k, v" // several clients: no set order, as in record.sh
			}
			got := strings.TrimSuffix(sql(t, "oracle", "SELECT k, v FROM out ORDER BY "+order), "\n")
			var wantRows []string
			for _, line := range strings.Split(string(want), "\n") {
				if line != "" && !strings.HasPrefix(line, "#") {
					wantRows = append(wantRows, line)
				}
			}
			var gotRows []string
			if got != "" {
				gotRows = strings.Split(got, "\n")
			}
			if strings.Join(gotRows, "\n") != strings.Join(wantRows, "\n") {
				t.Errorf("rows differ from pgbench's (%s):\n%s", strings.SplitN(string(want), "\n", 2)[0], diffLines(wantRows, gotRows))
			}
		})
	}
}

func diffLines(want, got []string) string {
	var b strings.Builder
	shown := 0
	for i := 0; i < max(len(want), len(got)) && shown < 20; i++ {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			b.WriteString("  pgbench: " + w + "\n  pgscale: " + g + "\n")
			shown++
		}
	}
	return b.String()
}

// runsWhatPgbenchRefuses are the recorded refusals pgscale does not
// share, on purpose, and why (README, "Coming from pgbench").
var runsWhatPgbenchRefuses = map[string]string{
	"rt_compound_prepared": "a compound command goes as one simple query under -M prepared",
	"rt_compound_extended": "a compound command goes as one simple query under -M extended",
}

// Scripts pgbench rejects are rejected by pgscale with the same message:
// parse errors before anything runs (exit 2); run-time errors when the
// client aborts (exit 3), or before running where pgscale can tell (exit 2).
func TestPgbenchOracleErrors(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	files, _ := filepath.Glob(filepath.Join(oracleDir, "errors", "*.sql"))
	if len(files) < 10 {
		t.Fatalf("found %d error scripts", len(files))
	}
	createDB(t, "oracle_err")
	sql(t, "oracle_err", "CREATE TABLE out (k text, v text, seq bigserial)")
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".sql")
		t.Run(name, func(t *testing.T) {
			src, _ := os.ReadFile(file)
			want, _ := os.ReadFile(strings.TrimSuffix(file, ".sql") + ".err")
			args := append([]string{"run", "--dsn", dsn("oracle_err"), "-n", "-P", "0", "--out", filepath.Join(t.TempDir(), "r.json")},
				oracleArgs(string(src))...)
			args = append(args, "-t", "1")
			code, stdout, stderr := pgscale(t, append(args, "-f", file)...)
			if why, ok := runsWhatPgbenchRefuses[name]; ok {
				if code != 0 {
					t.Errorf("pgscale runs this on purpose (%s); exit %d\n%s", why, code, stderr)
				}
				return
			}
			if st := exitStatus.FindStringSubmatch(string(want)); st != nil && st[1] == "0" {
				if code != 0 {
					t.Errorf("pgbench accepts and runs this; pgscale exit %d\n%s", code, stderr)
				}
				return
			}
			var lines []string
			for _, m := range errLine.FindAllStringSubmatch(string(want), -1) {
				lines = append(lines, m[1])
			}
			if len(lines) == 0 {
				t.Fatalf("no pgbench error recorded in %s.err", name)
			}
			parse := parsePrefix.MatchString(lines[0]) || !strings.Contains(string(want), "client ")
			if code != cli.ExitUsage && code != cli.ExitIncomplete {
				t.Fatalf("exit %d, want a refusal (2 or 3); pgbench said %q\n%s%s", code, lines, stdout, stderr)
			}
			if parse && code != cli.ExitUsage {
				t.Errorf("pgbench refuses this before running; pgscale exit %d, want 2\n%s", code, stderr)
			}
			// The cause: the parse message after file:line, or pgbench's
			// first run-time line (the cause comes before "client N aborted
			// ...") without its client/command prefix. pgbench names the
			// script as record.sh ran it (errors/NAME.sql); libpq prints
			// "ERROR:  x".
			cause := parsePrefix.ReplaceAllString(lines[0], "")
			if !parse {
				cause = abortPrefix.ReplaceAllString(lines[0], "")
			}
			cause = strings.ReplaceAll(cause, "errors/"+name+".sql", file)
			cause = strings.Join(strings.Fields(strings.TrimPrefix(cause, "ERROR:")), " ")
			if !strings.Contains(strings.Join(strings.Fields(stderr), " "), cause) {
				t.Errorf("pgbench says %q; pgscale says:\n%s", lines, stderr)
			}
		})
	}
}

// The recordings the two tests above compare against are pgbench's own
// answers today: record.sh runs the installed pgbench over a copy of the
// oracle directory and every file it writes must equal the checked-in one
// (the version in each file's first line aside). A newer pgbench that
// computes something else fails here, not silently in the recordings.
func TestOracleRecordingsArePgbenchsAnswers(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	pgbench := filepath.Join(cluster.BinDir, "pgbench")
	if _, err := os.Stat(pgbench); err != nil {
		t.Fatalf("pgbench is part of the server packages and must be installed: %v", err)
	}
	dir := t.TempDir()
	copyTree(t, oracleDir, dir)
	createDB(t, "oracle_rec")
	cmd := exec.Command("bash", filepath.Join(dir, "record.sh"))
	cmd.Env = append(pgEnv(), "PGDATABASE=oracle_rec", "PGBENCH="+pgbench, "PSQL="+filepath.Join(cluster.BinDir, "psql"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("record.sh: %v\n%s", err, out)
	}
	version := regexp.MustCompile(`(?m)^# pgbench \(PostgreSQL\) [^:]*: `)
	recorded := 0
	for _, pattern := range []string{"*.out", "errors/*.err"} {
		files, _ := filepath.Glob(filepath.Join(oracleDir, pattern))
		for _, want := range files {
			rel, _ := filepath.Rel(oracleDir, want)
			got, err := os.ReadFile(filepath.Join(dir, rel))
			if err != nil {
				t.Errorf("%s: record.sh wrote nothing: %v", rel, err)
				continue
			}
			w, _ := os.ReadFile(want)
			gs, ws := version.ReplaceAllString(string(got), "# "), version.ReplaceAllString(string(w), "# ")
			if gs != ws {
				t.Errorf("%s: pgbench now answers\n%s\nthe recording says\n%s", rel, gs, ws)
			}
			recorded++
		}
	}
	scripts, _ := filepath.Glob(filepath.Join(oracleDir, "*.sql"))
	errScripts, _ := filepath.Glob(filepath.Join(oracleDir, "errors", "*.sql"))
	if n := len(scripts) + len(errScripts); recorded != n || n < 90 {
		t.Fatalf("compared %d recordings of %d scripts", recorded, n)
	}
}

// copyTree copies the scripts of the oracle directory, not its recordings.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if ext := filepath.Ext(path); ext == ".out" || ext == ".err" {
			return nil // the recordings are what record.sh must write again
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
