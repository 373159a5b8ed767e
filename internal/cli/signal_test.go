package cli_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/procfs"

	"github.com/pgscale/pgscale/internal/cli"
	"github.com/pgscale/pgscale/internal/syncio"
)

// buildPgscale builds the real binary once per test that needs signals.
func buildPgscale(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "pgscale")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/pgscale/pgscale/cmd/pgscale")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// processesMentioning lists live processes whose command line or working
// directory is inside dir.
func processesMentioning(dir string) []int {
	procs, _ := procfs.AllProcs()
	var out []int
	for _, p := range procs {
		cmd, _ := p.CmdLine()
		cwd, _ := p.Cwd()
		if strings.Contains(strings.Join(cmd, " "), dir) || strings.HasPrefix(cwd, dir) {
			out = append(out, p.PID)
		}
	}
	return out
}

// Ctrl-C in the middle of a run on an ephemeral cluster: exit 3, a valid
// result file marked incomplete, and no server left behind.
func TestInterruptLeavesAValidIncompleteResultAndNoServer(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			bin := buildPgscale(t)
			out := filepath.Join(t.TempDir(), "r.json")
			cmd := exec.Command(bin, "run", "-S", "-c", "1,2", "-T", "30", "-P", "1", "--out", out)
			var stdout, stderr syncio.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(60 * time.Second)
			for !strings.Contains(stderr.String(), "progress: 2.0 s") && time.Now().Before(deadline) {
				time.Sleep(100 * time.Millisecond)
			}
			cmd.Process.Signal(sig)
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != cli.ExitIncomplete {
				t.Fatalf("exit: %v, want code %d\n%s", err, cli.ExitIncomplete, stderr.String())
			}
			f := readResult(t, out)
			if f.Complete || f.Reason != "interrupted" || len(f.Steps) != 1 || f.Steps[0].Complete || f.Steps[0].Summary.Transactions == 0 {
				t.Errorf("result: complete %v reason %q, %d steps: want the interrupted first step, marked incomplete", f.Complete, f.Reason, len(f.Steps))
			}
			dir := strings.Fields(strings.TrimPrefix(f.Target.Description, "host="))[0]
			if !strings.HasPrefix(dir, os.TempDir()) {
				t.Fatalf("cannot tell the cluster directory from %q", f.Target.Description)
			}
			if left := processesMentioning(dir); len(left) > 0 {
				t.Errorf("processes of the ephemeral cluster survive: %v", left)
			}
			if _, err := os.Stat(dir); err == nil {
				t.Errorf("cluster directory %s was not removed", dir)
			}
		})
	}
}
