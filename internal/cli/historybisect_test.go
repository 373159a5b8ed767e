package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/usage"
)

// The workload a result file records becomes bisect's flags: built-in
// scripts by name, the others written out with their text, weights when
// there are several, and the load's options; the prepared default is left
// to bisect's own default (which also falls back as the run did).
func TestWorkloadArgs(t *testing.T) {
	dir := t.TempDir()
	w := result.Workload{Scripts: []result.Script{{Name: "builtin:select-only", Weight: 9}, {Name: "sub/q.sql", Weight: 1, Source: "SELECT 1;\n"}},
		Scale: 10, Protocol: "prepared", Defines: map[string]string{"b": "2", "a": "1"}, MaxTries: 1, Transactions: 50, WarmupS: 0.5, RandomSeed: 42}
	args, err := workloadArgs(w, dir)
	if err != nil {
		t.Fatal(err)
	}
	q := filepath.Join(dir, "q.sql")
	want := "-b select-only@9 -f " + q + "@1 -s 10 -D a=1 -D b=2 -t 50 --warmup 0.5s --random-seed 42"
	if got := strings.Join(args, " "); got != want {
		t.Errorf("args\n%s\nwant\n%s", got, want)
	}
	if b, err := os.ReadFile(q); err != nil || string(b) != "SELECT 1;\n" {
		t.Errorf("q.sql: %q, %v", b, err)
	}
	w = result.Workload{Scripts: []result.Script{{Name: "builtin:tpcb-like", Weight: 1}}, Protocol: "simple", Connect: true, MaxTries: 3, DurationS: 2}
	args, _ = workloadArgs(w, dir)
	if got, want := strings.Join(args, " "), "-b tpcb-like -M simple -C --max-tries 3 -T 2s --warmup 0s --random-seed 0"; got != want {
		t.Errorf("args %s, want %s", got, want)
	}
}

// What a result file records only in its command line: --set, --tmpfs,
// -F, --unlogged-tables, and --setup, read again from its path (or the one
// given); a --setup no longer there is one line, exit 2.
func TestCommandArgs(t *testing.T) {
	dir := t.TempDir()
	setup := filepath.Join(dir, "setup.sql")
	os.WriteFile(setup, []byte("SELECT 1;\n"), 0o644)
	f := &historyBisectFlags{}
	args, err := f.commandArgs([]string{"pgscale", "run", "-S", "--set", "work_mem=8MB", "--set=shared_buffers=256MB", "--tmpfs", "-F", "90",
		"--setup", setup, "--store", "h.db", "-c", "1,2"})
	if err != nil {
		t.Fatal(err)
	}
	want := "--set work_mem=8MB --set shared_buffers=256MB --tmpfs --fillfactor 90 --setup " + setup
	if got := strings.Join(args, " "); got != want {
		t.Errorf("args %s, want %s", got, want)
	}
	_, err = f.commandArgs([]string{"pgscale", "run", "--setup=gone.sql"})
	if !usage.Is(err) || !strings.Contains(err.Error(), "the runs ran --setup gone.sql, which a result file does not keep and is not there now: give the file (--setup FILE)") {
		t.Errorf("a setup gone: %v", err)
	}
	f.setup = setup
	if args, err := f.commandArgs([]string{"pgscale", "run", "--setup=gone.sql"}); err != nil || strings.Join(args, " ") != "--setup "+setup {
		t.Errorf("--setup given: %v, %v", args, err)
	}
}
