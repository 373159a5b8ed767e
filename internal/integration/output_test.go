package integration_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/cli"
	"github.com/pgscale/pgscale/internal/testenv"
)

// unwritable makes dir refuse new files, root included: immutable
// (chattr +i) where the file system allows it, else replaced by a file of
// the same name, and says which.
func unwritable(t *testing.T, dir string) {
	t.Helper()
	if err := exec.Command("chattr", "+i", dir).Run(); err == nil {
		t.Cleanup(func() { exec.Command("chattr", "-i", dir).Run() })
		if f, err := os.CreateTemp(dir, "probe"); err != nil {
			t.Logf("%s is immutable", dir)
			return
		} else {
			f.Close()
			os.Remove(f.Name())
			exec.Command("chattr", "-i", dir).Run()
		}
	}
	os.Chmod(dir, 0o555)
	if f, err := os.CreateTemp(dir, "probe"); err != nil {
		t.Logf("%s is read-only", dir)
		return
	} else {
		f.Close()
		os.Remove(f.Name())
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s is a file", dir)
}

// A destination that cannot be written is refused before anything
// starts — result file, report, store, an A/B run's or a suite's
// directory — in well under a second (an ephemeral cluster would take
// seconds to start), with exit code 2 and one line naming it.
func TestUnwritableOutputRefusedFirst(t *testing.T) {
	trackTime(t)
	ro := filepath.Join(t.TempDir(), "ro")
	os.Mkdir(ro, 0o755)
	unwritable(t, ro)
	ok := filepath.Join(t.TempDir(), "ok.json")
	for _, args := range [][]string{
		{"run", "-S", "-c", "1", "-T", "2", "--out", filepath.Join(ro, "x.json")},
		{"run", "-S", "-c", "1", "-T", "2", "--out", ok, "--html", filepath.Join(ro, "x.html")},
		{"run", "-S", "-c", "1", "-T", "2", "--out", ok, "--store", filepath.Join(ro, "h.db")},
		{"ab", "--target", "a=settings:", "--target", "b=settings:", "-S", "-c", "1", "-T", "1", "--out", filepath.Join(ro, "ab")},
		{"suite", "--preset", "sinval", "--quick", "--out", filepath.Join(ro, "bundle")},
	} {
		t0 := time.Now()
		code, stdout, stderr := pgscale(t, args...)
		took := time.Since(t0)
		if code != cli.ExitUsage || !oneLine(stderr) || !strings.Contains(stderr, ro) || !strings.Contains(stderr, "nothing was run") {
			t.Errorf("%s: exit %d\n%s%s", strings.Join(args, " "), code, stdout, stderr)
		}
		if took > time.Second {
			t.Errorf("%s: refused after %v", strings.Join(args, " "), took)
		}
	}
	if _, err := os.Stat(ok); err == nil {
		t.Errorf("a run was made")
	}
}

// A destination that stops being writable during the run does not lose
// it: the result goes to the temporary directory, the output says where
// (exit 3: not what was asked), and report reads it there.
func TestResultKeptWhenItsDestinationFails(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir := filepath.Join(t.TempDir(), "out")
	os.Mkdir(dir, 0o755)
	stderr := &syncBuffer{watch: "step 1/1", seen: make(chan struct{})}
	go func() {
		<-stderr.seen
		unwritable(t, dir)
	}()
	code, stdout := abCLI(t, stderr, "run", "--dsn", dsn("postgres"), "-S", "-c", "1", "-T", "1.5", "--warmup", "0", "--out", filepath.Join(dir, "x.json"))
	kept := filepath.Join(tmp, "x.json")
	if code != cli.ExitIncomplete || !strings.Contains(stdout, "result: "+kept) || !strings.Contains(stderr.String(), "the result is kept at "+kept+" instead") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, lastLines(stderr.String(), 3))
	}
	if code, out, _ := pgscale(t, "report", kept); code != cli.ExitOK || !strings.Contains(out, "1 client") {
		t.Errorf("report of the kept file: exit %d\n%s", code, out)
	}
}
