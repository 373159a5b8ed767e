// Package proc starts and ends the child processes pgscale runs: servers,
// replicas, poolers and proxies that run beside a measurement, and the
// commands that run to their end (a build's steps, initdb, vgdb, perf).
// Every child runs in a process group of its own, as the OS user it is
// given, with the open-files limit asked for; its output goes to a log
// kept for error messages; it ends with its context, a timeout or Stop,
// and with it every process it started.
package proc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/procfs"

	"github.com/pgscale/pgscale/internal/secret"
	"github.com/pgscale/pgscale/internal/syncio"
)

// Spec says how to start a child process.
type Spec struct {
	// Name names it in messages: "pgbouncer (pid 4711) exited with
	// status 1".
	Name string
	Path string   // the executable; a name without a slash is looked for in PATH
	Args []string // its arguments, without argv[0]
	Dir  string   // its working directory
	Env  []string // its environment; nil: this process's
	// Log is the file its output is appended to; when empty, Output
	// receives it (or, for Run and Output, nothing does).
	Log    string
	Output io.Writer
	// Stderr, when set, receives the process's standard error apart from
	// the rest of its output.
	Stderr io.Writer
	// Stdin is its standard input; nil: the null device. An *os.File (the
	// read end of os.Pipe) is handed over as it is, so that closing the
	// write end is an end of file the process sees at once.
	Stdin io.Reader
	// Cred is the user it runs as (RunAs); nil: this process's.
	Cred *syscall.Credential
	// OpenFiles, when not 0, is the soft open-files limit it runs with: a
	// shell raises it (a child gets the limit Go started with, not the one
	// it raised for itself), then becomes the program, which keeps the
	// shell's PID.
	OpenFiles uint64
	// CoreFiles raises its soft core-file limit to the hard one (as
	// pg_ctl -c does) and leaves shared memory out of its core files
	// (coredump_filter 0x31: a server's shared buffers would make each
	// core as large as they are), so that a process of it that crashes
	// leaves a core a debugger can read, where the kernel's core_pattern
	// writes one. Its children inherit both.
	CoreFiles bool
	// ParentDeath is the signal the kernel sends it if this process dies
	// without stopping it; 0 lets it outlive this process (--keep).
	ParentDeath syscall.Signal
	// Stop are the steps of a graceful stop; a SIGKILL of its process
	// group and of everything it started follows them.
	Stop []StopStep
	// Timeout, for Run and Output, ends a process that has not exited
	// within it (Stop's steps, then the kill); 0: none.
	Timeout time.Duration
	// Linger, for Run and Output, leaves the process running when the
	// context ends (Run returns at once, the process is ended at
	// Timeout): for a command that must not be killed while it holds
	// another process stopped (vgdb under ptrace).
	Linger bool
}

// StopStep is one step of a graceful stop: a signal, and how long to wait
// for the process to exit before the next step.
type StopStep struct {
	Signal syscall.Signal
	Wait   time.Duration
}

// Process is a child process this process started and owns. Stop ends it
// and every process it started.
type Process struct {
	name   string
	log    string
	stop   []StopStep
	cmd    *exec.Cmd
	exited chan struct{}
	err    error // what Wait returned, once exited is closed
}

// Start starts a process and watches for its exit.
func Start(s Spec) (*Process, error) {
	out := s.Output
	if s.Log != "" {
		logf, err := os.OpenFile(s.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("open %s's log: %w", s.Name, err)
		}
		defer logf.Close()
		out = logf
	}
	path, args := s.Path, s.Args
	if s.OpenFiles > 0 || s.CoreFiles {
		// A shell sets the limits (a child gets the limits Go started
		// with, not the ones it set for itself), then becomes the program.
		var sh strings.Builder
		if s.OpenFiles > 0 {
			sh.WriteString(`ulimit -Sn "$1" || exit 1; `)
		}
		if s.CoreFiles {
			// Best effort: a hard limit of 0 or a read-only /proc leaves
			// the process as it was, and the crash's message says so.
			sh.WriteString(`ulimit -Sc "$(ulimit -Hc)" 2>/dev/null; echo 0x31 2>/dev/null >/proc/self/coredump_filter; `)
		}
		sh.WriteString(`shift; exec "$@"`)
		path = "/bin/sh"
		args = append([]string{"-c", sh.String(), "sh", strconv.FormatUint(s.OpenFiles, 10), s.Path}, s.Args...)
	}
	cmd := exec.Command(path, args...)
	cmd.Dir, cmd.Env = s.Dir, s.Env
	cmd.Stdin = s.Stdin
	cmd.Stdout, cmd.Stderr = out, out
	if s.Stderr != nil {
		cmd.Stderr = s.Stderr
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.Cred, Setpgid: true, Pdeathsig: s.ParentDeath}
	// A process it started that keeps the output open does not hold
	// Wait for ever.
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", s.Name, err)
	}
	p := &Process{name: s.Name, log: s.Log, stop: s.Stop, cmd: cmd, exited: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.exited) }()
	return p, nil
}

// Run runs a process to its end and returns what its exit says (nil for
// status 0). When ctx ends first, the process is stopped (Stop) and Run
// returns ctx's error; with Linger it is left to finish, ended at
// Timeout. A process still running at Timeout is stopped, and Run says it
// did not finish in time (a *TimeoutError).
func Run(ctx context.Context, s Spec) error {
	p, err := Start(s)
	if err != nil {
		return err
	}
	var timeout <-chan time.Time
	if s.Timeout > 0 {
		t := time.NewTimer(s.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-p.exited:
		return p.err
	case <-ctx.Done():
		if s.Linger {
			go p.stopAfter(s.Timeout)
			return fmt.Errorf("%s: %w", s.Name, ctx.Err())
		}
		p.Stop()
		return fmt.Errorf("%s: %w", s.Name, ctx.Err())
	case <-timeout:
		p.Stop()
		return &TimeoutError{Name: s.Name, After: s.Timeout}
	}
}

// TimeoutError is a command Run ended because it had not finished within
// its Timeout.
type TimeoutError struct {
	Name  string
	After time.Duration
}

func (e *TimeoutError) Error() string { return fmt.Sprintf("%s: no answer within %v", e.Name, e.After) }

// Output is Run with the process's output (stdout and stderr) returned,
// as much as it wrote; s.Log and s.Output are not used.
func Output(ctx context.Context, s Spec) (string, error) {
	var out syncio.Buffer
	s.Log, s.Output = "", &out
	err := Run(ctx, s)
	return out.String(), err
}

// stopAfter stops the process if it has not exited within d (never, for
// 0: it is left to end on its own).
func (p *Process) stopAfter(d time.Duration) {
	if d <= 0 {
		<-p.exited
		return
	}
	select {
	case <-p.exited:
	case <-time.After(d):
		p.Stop()
	}
}

// PID returns the process's id, or 0 when it is not running (or p is nil:
// never started).
func (p *Process) PID() int {
	if !p.Running() {
		return 0
	}
	return p.cmd.Process.Pid
}

// Running reports whether the process is alive.
func (p *Process) Running() bool {
	if p == nil {
		return false
	}
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// Exited is closed when the process has exited, stopped or not (nil for a
// nil Process, which never started).
func (p *Process) Exited() <-chan struct{} {
	if p == nil {
		return nil
	}
	return p.exited
}

// State is how the process ended (its CPU times among it), or nil while
// it runs.
func (p *Process) State() *os.ProcessState {
	if p == nil || p.Running() {
		return nil
	}
	return p.cmd.ProcessState
}

// ExitError says in one line how the process ended ("pgbouncer (pid 4711)
// was killed by signal 9 (killed)"), or returns nil while it runs.
func (p *Process) ExitError() error {
	if p == nil || p.Running() {
		return nil
	}
	how := "exited"
	if st := p.cmd.ProcessState; st != nil {
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			how = fmt.Sprintf("was killed by signal %d (%v)", int(ws.Signal()), ws.Signal())
		} else {
			how = fmt.Sprintf("exited with status %d", st.ExitCode())
		}
	}
	return fmt.Errorf("%s (pid %d) %s", p.name, p.cmd.Process.Pid, how)
}

// Log returns the last n lines of the process's log, for error messages.
func (p *Process) Log(n int) string {
	if p == nil {
		return "(not started)"
	}
	return TailFile(p.log, n, "(no "+p.name+" log)")
}

// LogFile is the file the process's output is appended to ("" when it has
// none).
func (p *Process) LogFile() string {
	if p == nil {
		return ""
	}
	return p.log
}

// SaveLog copies the process's whole log to path, with anything that
// looks like a password redacted: to keep it beside a result file before
// its owner's directory is removed.
func (p *Process) SaveLog(path string) error {
	if p == nil {
		return fmt.Errorf("keep a log: the process never started")
	}
	return SaveLog(p.name, p.log, path)
}

// SaveLog copies the log of the program called name from src to dst,
// redacted.
func SaveLog(name, src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("read %s's log: %w", name, err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("keep %s's log: %w", name, err)
	}
	if err := os.WriteFile(dst, []byte(secret.Redact(string(b))), 0o644); err != nil {
		return fmt.Errorf("keep %s's log: %w", name, err)
	}
	return nil
}

// Signal sends sig to the process alone.
func (p *Process) Signal(sig syscall.Signal) error {
	pid := p.PID()
	if pid == 0 {
		return errors.New(p.name + " is not running")
	}
	return syscall.Kill(pid, sig)
}

// Kill sends SIGKILL to the process alone, as a crash would, and waits
// until it is gone; what it started is left as a crash leaves it.
func (p *Process) Kill() {
	if pid := p.PID(); pid != 0 {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		<-p.exited
	}
}

// Stop ends the process: its graceful stop steps, each until it exits or
// the step's wait is over, then SIGKILL of its process group and of every
// process it started that left the group. It waits (five seconds at most
// after the kill) until the process, its group and those are gone, and is safe to
// call more than once.
func (p *Process) Stop() {
	if p == nil {
		return
	}
	pid := p.cmd.Process.Pid
	strays := outsideGroup(pid)
	for _, step := range p.stop {
		if !p.Running() {
			break
		}
		_ = syscall.Kill(pid, step.Signal)
		select {
		case <-p.exited:
		case <-time.After(step.Wait):
		}
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL) // anything left in its process group
	for _, s := range strays {
		if s.alive() {
			_ = syscall.Kill(s.pid, syscall.SIGKILL)
		}
	}
	deadline := time.After(5 * time.Second)
	select {
	case <-p.exited:
	case <-deadline:
	}
	// The group's other processes die a moment after the kill.
	for syscall.Kill(-pid, 0) == nil {
		select {
		case <-deadline:
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
	for _, s := range strays {
		for s.alive() {
			select {
			case <-deadline:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
}

// WaitReady calls ready every interval until it succeeds, and fails when
// the process exits first, ctx ends, or timeout passes; what (e.g.
// "accept connections") says what was waited for.
func (p *Process) WaitReady(ctx context.Context, timeout, interval time.Duration, what string, ready func(context.Context) error) error {
	deadline := time.Now().Add(timeout)
	for {
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited during start-up: %s", p.name, p.Log(8))
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		err := ready(ctx)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not %s within %v: %v; log: %s", p.name, what, timeout, err, p.Log(8))
		}
		time.Sleep(interval)
	}
}

// stray is a process a child started that left the child's process group,
// known by its start time so that a new process given its id later is
// not mistaken for it.
type stray struct {
	pid   int
	start uint64
}

// outsideGroup lists the descendants of process pid that are not in its
// process group (a group kill misses them).
func outsideGroup(pid int) []stray {
	procs, err := procfs.AllProcs()
	if err != nil {
		return nil
	}
	children := map[int][]procfs.ProcStat{}
	for _, pr := range procs {
		if st, err := pr.Stat(); err == nil {
			children[st.PPID] = append(children[st.PPID], st)
		}
	}
	var out []stray
	queue := []int{pid}
	for len(queue) > 0 {
		parent := queue[0]
		queue = queue[1:]
		for _, st := range children[parent] {
			if st.PGRP != pid {
				out = append(out, stray{st.PID, st.Starttime})
			}
			queue = append(queue, st.PID)
		}
	}
	return out
}

// alive reports whether the stray still runs (and is the same process).
func (s stray) alive() bool {
	pr, err := procfs.NewProc(s.pid)
	if err != nil {
		return false
	}
	st, err := pr.Stat()
	return err == nil && st.Starttime == s.start && st.State != "Z"
}

// RunAs returns the credential a child runs with: OS user name's when this
// process runs as root (PostgreSQL, and pgbouncer, refuse to run as root),
// nil otherwise.
func RunAs(name string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, &NoUserError{Name: name}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// GiveTo makes path the property of OS user name, whose credential cred
// is, when a child runs as another user (cred is not nil).
func GiveTo(path string, cred *syscall.Credential, name string) error {
	if cred == nil {
		return nil
	}
	if err := os.Chown(path, int(cred.Uid), int(cred.Gid)); err != nil {
		return fmt.Errorf("give %s to %s: %w", path, name, err)
	}
	return nil
}

// TailFile returns the last n non-empty lines of a log file, joined by
// " | ", or missing when it cannot be read.
func TailFile(path string, n int, missing string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return missing
	}
	return LastLines(string(b), n)
}

// LastLines returns the last n non-empty lines of s, joined by " | ".
func LastLines(s string, n int) string {
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		if t := strings.TrimSpace(sc.Text()); t != "" {
			lines = append(lines, t)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// NoUserError is the OS user a server would run as, missing when pgscale
// runs as root. The edge says which flag names another (With).
type NoUserError struct{ Name string }

func (e *NoUserError) Error() string { return e.With("create it or name another") }

// With is the error with how to name another user.
func (e *NoUserError) With(how string) string {
	return fmt.Sprintf("PostgreSQL refuses to run as root and OS user %q does not exist: %s", e.Name, how)
}
