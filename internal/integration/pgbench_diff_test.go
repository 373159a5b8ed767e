package integration_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// The five script-level differences a held-out conformance check found,
// each against pgbench's behaviour, through pgscale pgbench and pgscale
// run (fixed in the engine, so run has them too).

// runArgs are pgscale run's options for a one-client run of script.
func runArgs(t *testing.T, script string, extra ...string) []string {
	return append([]string{"run", "--dsn", dsn("postgres"), "-c", "1", "-n", "-P", "0", "--no-probes",
		"--out", filepath.Join(t.TempDir(), "r.json"), "-f", script}, extra...)
}

// 1. \shell's output goes to stdout, as pgbench's system() leaves it.
func TestShellOutputGoesToStdout(t *testing.T) {
	trackTime(t)
	dir := t.TempDir()
	script := writeScript(t, dir, "shell.sql", "\\shell echo hello from shell\nSELECT 1;\n")
	args := append([]string{"-n", "-t", "3", "-f", script}, conn("postgres")...)
	_, want, _ := runPgbench(t, dir, args...)
	_, got, _ := runDropIn(t, args...)
	_, run, _ := pgscale(t, runArgs(t, script, "-t", "3")...)
	for who, out := range map[string]string{"pgbench": want, "pgscale pgbench": got, "pgscale run": run} {
		if n := strings.Count(out, "hello from shell\n"); n != 3 {
			t.Errorf("%s printed the shell's line %d times on stdout, want 3:\n%s", who, n, out)
		}
	}
}

// 2. The server's NOTICE, WARNING and INFO go to stderr in libpq's words.
func TestServerNoticesOnStderr(t *testing.T) {
	trackTime(t)
	dir := t.TempDir()
	script := writeScript(t, dir, "notice.sql",
		"SET LOCAL work_mem = 1000;\nDO $$BEGIN RAISE NOTICE 'hello %', 1; RAISE INFO 'info'; END$$;\n")
	args := append([]string{"-n", "-t", "1", "-f", script}, conn("postgres")...)
	_, _, want := runPgbench(t, dir, args...)
	_, _, got := runDropIn(t, args...)
	_, _, run := pgscale(t, runArgs(t, script, "-t", "1")...)
	for _, line := range []string{"WARNING:  SET LOCAL can only be used in transaction blocks\n", "NOTICE:  hello 1\n", "INFO:  info\n"} {
		if !strings.Contains(want, line) {
			t.Fatalf("pgbench does not print %q:\n%s", line, want)
		}
		if !strings.Contains(got, line) || !strings.Contains(run, line) {
			t.Errorf("%q missing:\n--- pgscale pgbench\n%s--- pgscale run\n%s", line, got, run)
		}
	}
}

// 3. A run in which a client aborted is incomplete: pgbench says so and
// exits 2, and so does pgscale pgbench; pgscale run marks the step and the
// result file incomplete, says so in its summary and exits 3;
// --exit-on-abort ends the run at the first abort.
func TestAbortedClientMakesTheRunIncomplete(t *testing.T) {
	trackTime(t)
	dir := t.TempDir()
	script := writeScript(t, dir, "one-aborts.sql", "\\if :client_id = 0\n\\set x 1 / 0\n\\endif\nSELECT 1;\n")
	args := append([]string{"-n", "-c", "2", "-t", "3", "-f", script}, conn("postgres")...)
	wantCode, wantOut, wantErr := runPgbench(t, dir, args...)
	code, out, stderr := runDropIn(t, args...)
	if wantCode != 2 || code != 2 {
		t.Fatalf("exit %d, pgbench %d: want 2\n%s", code, wantCode, stderr)
	}
	if a, b := reportLines(wantOut), reportLines(out); strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Errorf("report differs from pgbench's:\n%s", diffLines(a, b))
	}
	if !sameErrorLines(wantErr, stderr) {
		t.Errorf("error lines differ:\n--- pgbench\n%s--- pgscale\n%s", wantErr, stderr)
	}

	path := filepath.Join(t.TempDir(), "r.json")
	code, out, stderr = pgscale(t, "run", "--dsn", dsn("postgres"), "-c", "2", "-t", "3", "-n", "-P", "0", "--no-probes", "--out", path, "-f", script)
	if code != 3 {
		t.Fatalf("run: exit %d, want 3\n%s%s", code, out, stderr)
	}
	f := readResult(t, path)
	if f.Complete || f.Steps[0].Complete || f.Steps[0].Summary.Aborted != 1 || !strings.Contains(f.Reason, "1 of 2 clients stopped on errors") {
		t.Errorf("result: complete %v, step complete %v, aborted %d, reason %q", f.Complete, f.Steps[0].Complete, f.Steps[0].Summary.Aborted, f.Reason)
	}
	if !strings.Contains(out, "INCOMPLETE: ") || !strings.Contains(out, "[incomplete: ") || !strings.Contains(stderr, "client 0 aborted") {
		t.Errorf("run does not say the run is incomplete:\n%s%s", out, stderr)
	}

	path = filepath.Join(t.TempDir(), "r.json")
	code, out, stderr = pgscale(t, append([]string{"pgbench", "--pgscale-out", path, "--exit-on-abort", "-n", "-c", "2", "-T", "30", "-f", script}, conn("postgres")...)...)
	if code != 2 || !strings.Contains(stderr, "pgbench: error: Run was aborted due to an error in thread 0\n") || strings.Contains(out, "transaction type") {
		t.Errorf("--exit-on-abort: exit %d (want 2, pgbench's line and no report)\n%s%s", code, out, stderr)
	}
	if f := readResult(t, path); f.Complete || f.Steps[0].ElapsedS > 10 {
		t.Errorf("--exit-on-abort: complete %v after %.1f s, want an incomplete run stopped at once", f.Complete, f.Steps[0].ElapsedS)
	}
}

// 4. An SQL error in pgbench's words (libpq's "ERROR:  msg"): compared
// line by line in TestPgbenchDropInAbortedRun; here the form itself.
func TestSQLErrorInLibpqWords(t *testing.T) {
	trackTime(t)
	dir := t.TempDir()
	script := writeScript(t, dir, "sqlerr.sql", "SELECT 1;\nSELECT * FROM nosuch;\n")
	args := append([]string{"-n", "-t", "1", "-f", script}, conn("postgres")...)
	_, _, want := runPgbench(t, dir, args...)
	_, _, got := runDropIn(t, args...)
	line := `pgbench: error: client 0 script 0 aborted in command 1 query 0: ERROR:  relation "nosuch" does not exist` + "\n"
	if !strings.Contains(want, line) || !strings.Contains(got, line) {
		t.Errorf("want %q in both:\n--- pgbench\n%s--- pgscale\n%s", line, want, got)
	}
}

// 5. A compound command under pgscale run's default -M prepared runs, as
// one simple query, and gives what pgbench's default (simple) gives;
// --describe and the result file say so.
func TestCompoundCommandUnderPrepared(t *testing.T) {
	trackTime(t)
	dir := t.TempDir()
	createDB(t, "compound")
	sql(t, "compound", "CREATE TABLE out (k text, v text, seq bigserial)")
	script := writeScript(t, dir, "compound.sql",
		"SELECT 1 + :client_id AS one \\; SELECT 2 AS two \\aset\nINSERT INTO out (k, v) VALUES ('sum', :one::int + :two::int);\n")
	if code, _, stderr := runPgbench(t, dir, append([]string{"-n", "-t", "3", "-f", script}, conn("compound")...)...); code != 0 {
		t.Fatalf("pgbench: exit %d\n%s", code, stderr)
	}
	want := sql(t, "compound", "SELECT k, v FROM out ORDER BY seq")
	sql(t, "compound", "TRUNCATE out")
	path := filepath.Join(t.TempDir(), "r.json")
	code, out, stderr := pgscale(t, "run", "--dsn", dsn("compound"), "-c", "1", "-t", "3", "-n", "-P", "0", "--no-probes", "--out", path, "-f", script)
	if code != 0 {
		t.Fatalf("run -M prepared: exit %d\n%s%s", code, out, stderr)
	}
	if got := sql(t, "compound", "SELECT k, v FROM out ORDER BY seq"); got != want || want == "" {
		t.Errorf("rows %q, pgbench's %q", got, want)
	}
	if f := readResult(t, path); f.Workload.Protocol != "prepared" || len(f.Workload.Scripts[0].SimpleProtocolLines) != 1 || f.Workload.Scripts[0].SimpleProtocolLines[0] != 1 {
		t.Errorf("result file: protocol %s, simple-protocol lines %v; want prepared, [1]", f.Workload.Protocol, f.Workload.Scripts[0].SimpleProtocolLines)
	}
	_, desc, _ := pgscale(t, "run", "--describe", "-f", script)
	if !strings.Contains(desc, "sent as one simple query whatever -M says") {
		t.Errorf("--describe does not say so:\n%s", desc)
	}
}

// pgscale pgbench writes a result file by default, under results/, and
// pgscale report --format pgbench prints pgbench's report of it again.
func TestPgbenchDropInResultFile(t *testing.T) {
	trackTime(t)
	t.Chdir(t.TempDir())
	code, out, stderr := pgscale(t, append([]string{"pgbench", "-S", "-t", "5", "-c", "2", "-r", "-P", "1"}, conn("postgres")...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	files, _ := filepath.Glob("results/select-only-*.json")
	if len(files) != 1 || !strings.Contains(stderr, "pgscale: result file "+files[0]+"\n") {
		t.Fatalf("result files %v; stderr:\n%s", files, stderr)
	}
	f := readResult(t, files[0])
	if f.Pgbench == nil || f.Pgbench.ProgressS != 1 || !f.Pgbench.ReportPerCommand || f.Steps[0].Probes != nil {
		t.Errorf("result file: pgbench block %+v, probes %v (want -P 1, -r, no probes)", f.Pgbench, f.Steps[0].Probes)
	}
	code, again, stderr := pgscale(t, "report", "--format", "pgbench", files[0])
	if code != 0 {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	if live := out[strings.Index(out, "\n")+1:]; again != live {
		t.Errorf("report --format pgbench differs from what the run printed:\n--- run\n%s--- report\n%s", live, again)
	}
}
