package integration_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/procfs"

	"github.com/pgscale/pgscale/internal/cli"
	"github.com/pgscale/pgscale/internal/syncio"
	"github.com/pgscale/pgscale/internal/testenv"
)

// buildPgscale builds the real binary, once for the package, for the tests that need a process of its own (signals, exit codes).
func buildPgscale(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "pgscale-bin-")
		if err != nil {
			built.err = err
			return
		}
		built.dir, built.bin = dir, filepath.Join(dir, "pgscale")
		cmd := exec.Command("go", "build", "-o", built.bin, "github.com/pgscale/pgscale/cmd/pgscale")
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

// built is the package's one pgscale binary, built by the first test that
// runs it and removed after the last (TestMain).
var built struct {
	once     sync.Once
	dir, bin string
	err      error
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
	trackTime(t)
	testenv.Slow(t)
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

// kill -9 of pgscale during a run on an ephemeral cluster leaves no server
// (the kernel stops it) but its cluster directory; the next pgscale to
// start a cluster removes that directory, which the dead process's owner
// file marks as stale, and says so, while a directory named alike but
// without an owner file is left alone.
func TestKilledRunsDirectoryRemovedAtNextStart(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	bin := buildPgscale(t)
	tmp, err := os.MkdirTemp("", "stale")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	os.Chmod(tmp, 0o755) // the server runs as postgres when the tests run as root
	t.Setenv("TMPDIR", tmp)
	foreign := filepath.Join(tmp, "pgscale-0000000001")
	if err := os.Mkdir(foreign, 0o700); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(bin, "run", "-S", "-c", "1", "-T", "60", "-P", "1", "--out", filepath.Join(tmp, "r.json"))
	var stdout, stderr syncio.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(stderr.String(), "progress: 1.0 s") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	m := regexp.MustCompile(`host=(` + regexp.QuoteMeta(tmp) + `/pgscale-[0-9]+) `).FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatalf("no cluster directory in the output:\n%s\n%s", stdout.String(), lastLines(stderr.String(), 5))
	}
	dir := m[1]
	for deadline := time.Now().Add(30 * time.Second); len(processesMentioning(dir)) > 0 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	if left := processesMentioning(dir); len(left) > 0 {
		t.Errorf("server processes outlived the killed pgscale: %v", left)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the killed run's directory is not there to remove: %v", err)
	}

	code, _, errs := pgscale(t, "run", "-S", "-c", "1", "-T", "0.2", "--warmup", "0", "--out", filepath.Join(tmp, "r2.json"))
	if code != cli.ExitOK {
		t.Fatalf("next run: exit %d\n%s", code, lastLines(errs, 5))
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("the killed run's directory %s is still there", dir)
	}
	if !strings.Contains(errs, "removed the cluster directory a killed pgscale left: "+dir+" (pgscale pid ") {
		t.Errorf("the removal was not said:\n%s", errs)
	}
	if _, err := os.Stat(foreign); err != nil {
		t.Errorf("a directory without an owner file was removed by its name")
	}
}
