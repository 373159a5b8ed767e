package target

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// shellProcess starts /bin/sh -c script as a Process logging into a
// temporary directory, stopped when the test ends.
func shellProcess(t *testing.T, script string, edit func(*processSpec)) *Process {
	t.Helper()
	dir := t.TempDir()
	ps := processSpec{name: "shell", path: "/bin/sh", args: []string{"-c", script}, dir: dir, log: filepath.Join(dir, "shell.log"),
		stop: []StopStep{{syscall.SIGTERM, time.Second}}, parentDeath: syscall.SIGKILL}
	if edit != nil {
		edit(&ps)
	}
	p, err := startProcess(ps)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p
}

// pidsIn waits until the log holds n "pid N" lines and returns those pids.
func pidsIn(t *testing.T, p *Process, n int) []int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var pids []int
		b, _ := os.ReadFile(p.log)
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) == 2 && f[0] == "pid" {
				pid, _ := strconv.Atoi(f[1])
				pids = append(pids, pid)
			}
		}
		if len(pids) >= n {
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("log has pids %v, want %d: %s", pids, n, p.Log(10))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses; a zombie is gone.
	s := string(b)
	return !strings.HasPrefix(strings.TrimSpace(s[strings.LastIndex(s, ")")+1:]), "Z")
}

// Stop ends the process, its process group and a descendant that left the
// group (setsid), even when the process ignores the graceful signal.
func TestProcessStopEndsTheTree(t *testing.T) {
	p := shellProcess(t, `trap '' TERM
setsid sh -c 'echo pid $$; exec sleep 300' &
sh -c 'echo pid $$; exec sleep 300' &
echo pid $$
wait`, nil)
	pids := pidsIn(t, p, 3)
	if p.PID() == 0 || !p.Running() || p.ExitError() != nil {
		t.Fatalf("running process: pid %d, running %v, exit %v", p.PID(), p.Running(), p.ExitError())
	}
	p.Stop()
	select {
	case <-p.Exited():
	default:
		t.Fatal("Exited not closed after Stop")
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("pid %d still runs after Stop", pid)
		}
	}
	if p.PID() != 0 || p.Running() || !strings.Contains(p.ExitError().Error(), "was killed by signal 9") {
		t.Errorf("after Stop: pid %d, running %v, exit %v", p.PID(), p.Running(), p.ExitError())
	}
	p.Stop() // a second Stop is harmless
}

// ExitError says in one line how the process ended, by name and pid.
func TestProcessExitError(t *testing.T) {
	p := shellProcess(t, "echo starting; exit 3", nil)
	pid := p.cmd.Process.Pid
	<-p.Exited()
	want := "shell (pid " + strconv.Itoa(pid) + ") exited with status 3"
	if err := p.ExitError(); err == nil || err.Error() != want {
		t.Errorf("ExitError = %v, want %q", err, want)
	}
	if got := p.Log(5); got != "starting" {
		t.Errorf("Log = %q", got)
	}
	k := shellProcess(t, "sleep 300", nil)
	k.Kill()
	if err := k.ExitError(); err == nil || !strings.HasSuffix(err.Error(), "was killed by signal 9 (killed)") || k.Running() {
		t.Errorf("after Kill: %v, running %v", err, k.Running())
	}
	var never *Process
	if never.PID() != 0 || never.Running() || never.ExitError() != nil || never.Exited() != nil {
		t.Error("a nil Process is not one that never started")
	}
	never.Stop()
}

// waitReady succeeds once ready does, and fails with the log's tail when
// the process exits first or the time is up.
func TestProcessWaitReady(t *testing.T) {
	ctx := context.Background()
	p := shellProcess(t, "sleep 300", nil)
	calls := 0
	err := p.waitReady(ctx, 10*time.Second, time.Millisecond, "answer", func(context.Context) error {
		if calls++; calls < 3 {
			return os.ErrNotExist
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Errorf("waitReady: %v after %d calls", err, calls)
	}
	err = p.waitReady(ctx, 50*time.Millisecond, time.Millisecond, "answer", func(context.Context) error { return os.ErrNotExist })
	if err == nil || !strings.Contains(err.Error(), "shell did not answer within 50ms") {
		t.Errorf("never ready: %v", err)
	}
	d := shellProcess(t, "echo no such option >&2; exit 1", nil)
	err = d.waitReady(ctx, 10*time.Second, time.Millisecond, "answer", func(context.Context) error { return os.ErrNotExist })
	if err == nil || !strings.Contains(err.Error(), "shell exited during start-up: no such option") {
		t.Errorf("exits at start: %v", err)
	}
}

// The process runs with the open-files limit asked for, as the OS user
// given (root starts servers as postgres), and SaveLog keeps its log with
// passwords redacted.
func TestProcessLimitUserAndLog(t *testing.T) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	want := min(lim.Max, 4321)
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		var err error
		if cred, err = runAs("postgres"); err != nil {
			t.Fatal(err)
		}
	}
	p := shellProcess(t, "echo limit $(ulimit -Sn); echo uid $(id -u); echo 'conn host=h password=hunter2'", func(ps *processSpec) {
		ps.openFiles, ps.cred = want, cred
		ps.dir = "/"
	})
	<-p.Exited()
	log := p.Log(10)
	if !strings.Contains(log, "limit "+strconv.FormatUint(want, 10)) {
		t.Errorf("log %q: want the open-files limit %d", log, want)
	}
	if cred != nil && !strings.Contains(log, "uid "+strconv.Itoa(int(cred.Uid))) {
		t.Errorf("log %q: want it run as postgres (uid %d)", log, cred.Uid)
	}
	kept := filepath.Join(t.TempDir(), "kept", "shell.log")
	if err := p.SaveLog(kept); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(kept); err != nil || strings.Contains(string(b), "hunter2") || !strings.Contains(string(b), "limit") {
		t.Errorf("kept log %q (%v): want it whole, the password redacted", b, err)
	}
}
