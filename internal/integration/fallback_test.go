package integration_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/cli"
	"github.com/pgscale/pgscale/internal/testenv"
)

// A script pgbench runs with its defaults runs with pgscale run's: with
// the default protocol, a statement the server cannot prepare for its
// parameters' types (unknown + unknown: 42725) runs with the simple
// protocol, said once and recorded in the result file; an explicit -M
// prepared fails as pgbench -M prepared does. pgbench is the oracle both
// ways: its default runs the script, its -M prepared refuses the
// statement.
func TestPrepareFallbackRunsWhatPgbenchRuns(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "fivesix.sql")
	if err := os.WriteFile(script, []byte("SELECT 5 AS five \\; SELECT 6 AS six \\aset\nSELECT :five + :six;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pgArgs := append([]string{"-n", "-f", script, "-c", "1", "-t", "20"}, conn("postgres")...)
	if code, _, stderr := runPgbench(t, dir, pgArgs...); code != 0 {
		t.Fatalf("pgbench (simple, its default): exit %d\n%s", code, stderr)
	}
	// pgbench -M prepared refuses the compound first line (pgscale sends a
	// compound command as one simple query in every mode); the second
	// alone, its variables given, fails as pgscale's -M prepared does.
	sum := filepath.Join(dir, "sum.sql")
	if err := os.WriteFile(sum, []byte("SELECT :five + :six;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sumArgs := append([]string{"-n", "-f", sum, "-D", "five=5", "-D", "six=6", "-c", "1", "-t", "20"}, conn("postgres")...)
	if code, _, stderr := runPgbench(t, dir, append([]string{"-M", "prepared"}, sumArgs...)...); code == 0 || !strings.Contains(stderr, "operator is not unique: unknown + unknown") {
		t.Fatalf("pgbench -M prepared: exit %d, want the failure pgscale's -M prepared copies\n%s", code, stderr)
	}
	if code, _, stderr := runPgbench(t, dir, sumArgs...); code != 0 {
		t.Fatalf("pgbench: exit %d\n%s", code, stderr)
	}

	out := filepath.Join(dir, "r.json")
	code, stdout, stderr := pgscale(t, "run", "--dsn", dsn("postgres"), "-f", script, "-c", "1,2", "-T", "0.5", "--warmup", "0", "-n", "--out", out)
	if code != cli.ExitOK {
		t.Fatalf("run with the default protocol: exit %d\n%s", code, lastLines(stderr, 5))
	}
	if n := strings.Count(stderr, "fivesix.sql:2: the server cannot prepare this statement (operator is not unique: unknown + unknown, SQLSTATE 42725): it runs with the simple protocol"); n != 1 {
		t.Errorf("the fallback was said %d times, want once:\n%s", n, stderr)
	}
	f := readResult(t, out)
	for _, s := range f.Steps {
		if s.Summary.Transactions == 0 || s.Summary.Failed != 0 {
			t.Errorf("%d clients: %d transactions, %d failed", s.Clients, s.Summary.Transactions, s.Summary.Failed)
		}
	}
	fbs := f.Workload.Scripts[0].PrepareFallbacks
	if f.Workload.Protocol != "prepared" || len(fbs) != 1 || fbs[0].Line != 2 || fbs[0].SQLState != "42725" {
		t.Errorf("result file: protocol %s, fallbacks %+v", f.Workload.Protocol, fbs)
	}
	if !strings.Contains(stdout, "fivesix.sql:2 simple: the server would not prepare it, SQLSTATE 42725)") {
		t.Errorf("the report does not say it:\n%s", stdout)
	}

	code, _, stderr = pgscale(t, "run", "--dsn", dsn("postgres"), "-f", script, "-M", "prepared", "-c", "1", "-T", "0.5", "--warmup", "0", "-n", "--out", filepath.Join(dir, "p.json"))
	if code != cli.ExitIncomplete || !strings.Contains(stderr, "operator is not unique: unknown + unknown (SQLSTATE 42725)") {
		t.Errorf("run -M prepared: exit %d, want %d and pgbench's error\n%s", code, cli.ExitIncomplete, lastLines(stderr, 3))
	}
}
