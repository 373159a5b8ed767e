package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/cli"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/testenv"
)

// The README's first command, shortened: pgscale run with no server named
// starts a throw-away cluster of its own, sweeps, writes a valid result
// file and prints its report, and removes the cluster. The end-to-end
// tests of every command are in internal/integration.
func TestRunOnItsOwnCluster(t *testing.T) {
	if _, err := target.FindBinDir("", target.Words{}); err != nil {
		testenv.Need(t, err)
	}
	for _, v := range []string{"PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE", "PGSERVICE"} {
		t.Setenv(v, "")
	}
	out := filepath.Join(t.TempDir(), "r.json")
	var stdout, stderr bytes.Buffer
	code := cli.Main([]string{"run", "-c", "1,2", "-T", "0.5", "-P", "0", "--out", out}, &stdout, &stderr)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	f, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Complete || len(f.Steps) != 2 || f.Target.Kind != "ephemeral" || f.Workload.Name != "select-only" {
		t.Errorf("result: complete %v, %d steps, target %q, workload %q", f.Complete, len(f.Steps), f.Target.Kind, f.Workload.Name)
	}
	if !strings.Contains(stderr.String(), "starting an ephemeral PostgreSQL cluster") || !strings.Contains(stdout.String(), "diagnosis:") {
		t.Errorf("output:\n%s\n%s", stderr.String(), stdout.String())
	}
	dir := strings.TrimPrefix(strings.Fields(f.Target.Description[strings.Index(f.Target.Description, "host="):])[0], "host=")
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("the cluster's directory %s is left after the run", dir)
	}
}
