package proc_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/proc"
)

// shellProcess starts /bin/sh -c script as a Process logging into a
// temporary directory, stopped when the test ends.
func shellProcess(t *testing.T, script string, edit func(*proc.Spec)) *proc.Process {
	t.Helper()
	dir := t.TempDir()
	ps := proc.Spec{Name: "shell", Path: "/bin/sh", Args: []string{"-c", script}, Dir: dir, Log: filepath.Join(dir, "shell.log"),
		Stop: []proc.StopStep{{Signal: syscall.SIGTERM, Wait: time.Second}}, ParentDeath: syscall.SIGKILL}
	if edit != nil {
		edit(&ps)
	}
	p, err := proc.Start(ps)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p
}

// pidsIn waits until the log holds n "pid N" lines and returns those pids.
func pidsIn(t *testing.T, log string, n int) []int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var pids []int
		b, _ := os.ReadFile(log)
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
			t.Fatalf("log has pids %v, want %d: %s", pids, n, b)
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

// treeScript starts two sleeping children, one of which leaves the
// process group (setsid), prints the three pids and ignores SIGTERM.
const treeScript = `trap '' TERM
setsid sh -c 'echo pid $$; exec sleep 300' &
sh -c 'echo pid $$; exec sleep 300' &
echo pid $$
wait`

// Stop ends the process, its process group and a descendant that left the
// group (setsid), even when the process ignores the graceful signal.
func TestProcessStopEndsTheTree(t *testing.T) {
	p := shellProcess(t, treeScript, nil)
	pids := pidsIn(t, p.LogFile(), 3)
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
	p := shellProcess(t, "trap 'exit 3' USR1; echo starting; while :; do sleep 0.01; done", nil)
	pid := p.PID()
	time.Sleep(100 * time.Millisecond) // the trap set
	if err := p.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	<-p.Exited()
	want := "shell (pid " + strconv.Itoa(pid) + ") exited with status 3"
	if err := p.ExitError(); err == nil || err.Error() != want {
		t.Errorf("ExitError = %v, want %q", err, want)
	}
	if got := p.Log(5); got != "starting" {
		t.Errorf("Log = %q", got)
	}
	if st := p.State(); st == nil || st.ExitCode() != 3 {
		t.Errorf("State = %v, want exit status 3", st)
	}
	k := shellProcess(t, "sleep 300", nil)
	k.Kill()
	if err := k.ExitError(); err == nil || !strings.HasSuffix(err.Error(), "was killed by signal 9 (killed)") || k.Running() {
		t.Errorf("after Kill: %v, running %v", err, k.Running())
	}
	var never *proc.Process
	if never.PID() != 0 || never.Running() || never.ExitError() != nil || never.Exited() != nil || never.State() != nil {
		t.Error("a nil Process is not one that never started")
	}
	never.Stop()
}

// WaitReady succeeds once ready does, and fails with the log's tail when
// the process exits first or the time is up.
func TestProcessWaitReady(t *testing.T) {
	ctx := context.Background()
	p := shellProcess(t, "sleep 300", nil)
	calls := 0
	err := p.WaitReady(ctx, 10*time.Second, time.Millisecond, "answer", func(context.Context) error {
		if calls++; calls < 3 {
			return os.ErrNotExist
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Errorf("WaitReady: %v after %d calls", err, calls)
	}
	err = p.WaitReady(ctx, 50*time.Millisecond, time.Millisecond, "answer", func(context.Context) error { return os.ErrNotExist })
	if err == nil || !strings.Contains(err.Error(), "shell did not answer within 50ms") {
		t.Errorf("never ready: %v", err)
	}
	d := shellProcess(t, "echo no such option >&2; exit 1", nil)
	err = d.WaitReady(ctx, 10*time.Second, time.Millisecond, "answer", func(context.Context) error { return os.ErrNotExist })
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
		if cred, err = proc.RunAs("postgres"); err != nil {
			t.Fatal(err)
		}
	}
	p := shellProcess(t, "echo limit $(ulimit -Sn); echo uid $(id -u); echo 'conn host=h password=hunter2'", func(ps *proc.Spec) {
		ps.OpenFiles, ps.Cred = want, cred
		ps.Dir = "/"
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

// With CoreFiles the process may leave core files up to its hard limit,
// without shared memory in them, together with the open-files limit.
func TestProcessCoreFiles(t *testing.T) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_CORE, &lim); err != nil {
		t.Fatal(err)
	}
	want := "unlimited"
	if lim.Max != ^uint64(0) { // RLIM_INFINITY
		want = strconv.FormatUint(lim.Max/1024, 10) // ulimit -c counts KiB
	}
	p := shellProcess(t, "echo core $(ulimit -Sc) files $(ulimit -Sn) filter $(cat /proc/self/coredump_filter)", func(ps *proc.Spec) {
		ps.CoreFiles, ps.OpenFiles = true, 1000
	})
	<-p.Exited()
	log := p.Log(10)
	if !strings.Contains(log, "core "+want+" files 1000 filter 00000031") {
		t.Errorf("log %q: want core files up to %s, 1000 open files, filter 00000031", log, want)
	}
}

// Run returns the exit, and Output what the command printed.
func TestRunAndOutput(t *testing.T) {
	ctx := context.Background()
	if err := proc.Run(ctx, proc.Spec{Name: "true", Path: "/bin/true"}); err != nil {
		t.Errorf("true: %v", err)
	}
	err := proc.Run(ctx, proc.Spec{Name: "sh", Path: "/bin/sh", Args: []string{"-c", "exit 4"}})
	var ee interface{ ExitCode() int }
	if !errors.As(err, &ee) || ee.ExitCode() != 4 {
		t.Errorf("exit 4: %v", err)
	}
	out, err := proc.Output(ctx, proc.Spec{Name: "sh", Path: "/bin/sh", Args: []string{"-c", "echo out; echo err >&2"}})
	if err != nil || out != "out\nerr\n" {
		t.Errorf("Output = %q, %v", out, err)
	}
}

// A context that ends kills the command and what it started; a timeout
// does too, and says so.
func TestRunEndsWithContextAndTimeout(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "tree.log")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- proc.Run(ctx, proc.Spec{Name: "tree", Path: "/bin/sh", Args: []string{"-c", treeScript}, Log: log})
	}()
	pids := pidsIn(t, log, 3)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run after cancel: %v, want context.Canceled", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("pid %d still runs after the context ended", pid)
		}
	}
	start := time.Now()
	err := proc.Run(context.Background(), proc.Spec{Name: "sleeper", Path: "/bin/sleep", Args: []string{"300"}, Timeout: 100 * time.Millisecond})
	var te *proc.TimeoutError
	if !errors.As(err, &te) || err.Error() != "sleeper: no answer within 100ms" || time.Since(start) > 10*time.Second {
		t.Errorf("timeout: %v after %v", err, time.Since(start))
	}
}

// With Linger, a context that ends returns at once and leaves the command
// running (vgdb holding a process under ptrace must not be killed), until
// its timeout.
func TestRunLingers(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "linger.log")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- proc.Run(ctx, proc.Spec{Name: "vgdb-like", Path: "/bin/sh", Args: []string{"-c", "echo pid $$; exec sleep 300"},
			Log: log, Linger: true, Timeout: 2 * time.Second})
	}()
	pid := pidsIn(t, log, 1)[0]
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run after cancel: %v, want context.Canceled", err)
		}
	case <-time.After(time.Second):
		t.Fatal("a lingering Run did not return when its context ended")
	}
	if !alive(pid) {
		t.Error("the lingering command was killed when the context ended")
	}
	deadline := time.Now().Add(15 * time.Second)
	for alive(pid) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if alive(pid) {
		t.Error("the lingering command outlived its timeout")
	}
}
