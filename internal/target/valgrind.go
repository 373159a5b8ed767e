package target

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pgscale/pgscale/internal/proc"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/usage"
)

// NoValgrindError says Valgrind (valgrind and vgdb), which counting
// instructions needs, cannot be used: Why. The edge words it in the flag
// that counts.
type NoValgrindError struct{ Why string }

func (e *NoValgrindError) Error() string {
	return "counting needs Valgrind (valgrind and vgdb): " + e.Why
}

// Valgrind is the instruction counter an ephemeral server runs under with
// --count instructions: Valgrind's callgrind, controlled through vgdb.
type Valgrind struct {
	Bin     string // the valgrind launcher
	VGDB    string // vgdb, which sends callgrind's monitor commands to a process
	Version string // as `valgrind --version` prints it: "valgrind-3.19.0"
	// Setarch, when found, starts the server without address-space
	// randomisation (setarch ARCH -R), so that every process's layout,
	// and what depends on addresses, is the same from run to run.
	Setarch string
	// Extra are more of the tool's options, after ValgrindOptions': the
	// cache and branch simulation's with --count instructions,cache.
	Extra []string
}

// FindValgrind finds valgrind and vgdb as the server binaries are found:
// in $PGSCALE_VALGRIND (the directory holding them), else on PATH. Not
// finding them is a usage error of one line, a *NoValgrindError.
func FindValgrind() (*Valgrind, error) {
	var tried []string
	look := func(name string) string {
		if dir := os.Getenv("PGSCALE_VALGRIND"); dir != "" {
			p := filepath.Join(dir, name)
			if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
				return p
			}
			tried = append(tried, "$PGSCALE_VALGRIND="+dir)
			return ""
		}
		p, err := exec.LookPath(name)
		if err != nil {
			tried = append(tried, "PATH")
			return ""
		}
		return p
	}
	v := &Valgrind{Bin: look("valgrind"), VGDB: look("vgdb")}
	if v.Bin == "" || v.VGDB == "" {
		return nil, usage.Wrap(&NoValgrindError{Why: fmt.Sprintf("not found (searched %s); install it (Debian: apt-get install valgrind) or name its directory in $PGSCALE_VALGRIND",
			strings.Join(dedupe(tried), ", "))})
	}
	out, err := exec.Command(v.Bin, "--version").Output()
	if err != nil {
		return nil, usage.Wrap(&NoValgrindError{Why: fmt.Sprintf("%s --version: %v", v.Bin, err)})
	}
	v.Version = strings.TrimSpace(string(out))
	if p, err := exec.LookPath("setarch"); err == nil {
		v.Setarch = p
	}
	return v, nil
}

// ValgrindOptions are the options the server runs under, for a cluster
// whose files are in dir: callgrind with instrumentation off until the
// instruction probe turns it on for each step's window (so the server's
// start, the data's creation and the connections run at Valgrind's
// uninstrumented speed), every process the postmaster forks followed with
// a vgdb channel of its own (--trace-children=yes: only then does a forked
// child open one), each process's counts in files of its own, and system
// calls counted too (Valgrind sees no kernel instructions).
func ValgrindOptions(dir string) []string {
	return []string{
		"--tool=callgrind", "--instr-atstart=no", "--trace-children=yes",
		"--vgdb=yes", "--vgdb-prefix=" + filepath.Join(dir, "vgdb"),
		"--callgrind-out-file=" + filepath.Join(dir, "callgrind.out.%p"),
		"--dump-line=no", "--collect-systime=yes",
	}
}

// CountingSettings are the server settings of a server whose instructions
// are counted, applied after pgscale's defaults and before --set and a
// target's own. Each takes away something that made the count of a
// transaction depend on the clock or on what else ran (docs/counting-instructions.md): autovacuum, whose workers change the tables' state
// between rounds at moments of their own; JIT compilation, which a cost
// estimate near its threshold turns on for some executions; and the
// timing of I/O, which reads the clock.
func CountingSettings() []Setting {
	return []Setting{
		{"autovacuum", "off"},
		{"jit", "off"},
		{"track_io_timing", "off"},
	}
}

// info is what the result file records of the counter.
func (v *Valgrind) info() *result.Valgrind {
	rv := &result.Valgrind{Version: v.Version, Options: append(ValgrindOptions("DIR"), v.Extra...), ASLR: "on: setarch not found"}
	if v.Setarch != "" {
		rv.ASLR = "off (setarch -R)"
	}
	return rv
}

// command is the server started under Valgrind: setarch, valgrind and
// its options, then the postgres command line.
func (v *Valgrind) command(dir, postgres string, args ...string) (string, []string) {
	argv := append(append(ValgrindOptions(dir), v.Extra...), postgres)
	argv = append(argv, args...)
	if v.Setarch == "" {
		return v.Bin, argv
	}
	return v.Setarch, append([]string{machine(), "-R", v.Bin}, argv...)
}

// valgrindEnv is the environment of the server under Valgrind and of
// vgdb: without the variables Valgrind names its vgdb channels after (the
// user and host names). PostgreSQL overwrites its environment's strings
// with its process title, after which a process's Valgrind no longer
// finds the channel it made at fork under its old name, and exits; with
// them unset both sides say "???" throughout.
func valgrindEnv() []string {
	var env []string
	for _, kv := range childEnv() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "USER", "LOGNAME", "HOST", "HOSTNAME":
		default:
			env = append(env, kv)
		}
	}
	return append(env, "LC_ALL=C")
}

// machine is the architecture's name as uname -m prints it.
func machine() string {
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		return "x86_64"
	}
	var b strings.Builder
	for _, c := range u.Machine {
		if c == 0 {
			break
		}
		b.WriteByte(byte(c))
	}
	return b.String()
}

// vgdbTimeout bounds one vgdb call. vgdb must not be killed while it has
// a process stopped under ptrace (the process then dies): it is given
// long, and killed only when it has not answered at all.
const vgdbTimeout = 60 * time.Second

// Callgrind sends callgrind's monitor commands (zero, instrumentation
// on|off, dump HINT) to the server's process pid through vgdb, and
// returns what vgdb printed. vgdb runs as the server's OS user: run by
// another user it cannot reach the process. It reports an error on a
// cluster not started under Valgrind.
func (c *Cluster) Callgrind(ctx context.Context, pid int, commands ...string) (string, error) {
	v := c.opts.Valgrind
	if !c.UnderValgrind() {
		return "", errors.New("the server does not run under Valgrind")
	}
	return v.monitor(ctx, c.Dir, c.cred, "", pid, commands)
}

// monitor sends callgrind's monitor commands to process pid through vgdb,
// run in dir (where the process's vgdb files are) as cred's user, and
// returns what vgdb printed; who names the process's program in errors
// ("" for the server). When ctx ends vgdb is left to answer, not killed
// (it may hold the process stopped), and ended only at vgdbTimeout.
func (v *Valgrind) monitor(ctx context.Context, dir string, cred *syscall.Credential, who string, pid int, commands []string) (string, error) {
	// Forced invocation after 1 ms: the processes wait in system calls,
	// where only vgdb's ptrace reaches them.
	args := []string{"--vgdb-prefix=" + filepath.Join(dir, "vgdb"), "--pid=" + strconv.Itoa(pid), "--max-invoke-ms=1"}
	for _, cmd := range commands {
		args = append(args, "-c", cmd)
	}
	to := "pid " + strconv.Itoa(pid)
	if who != "" {
		to = who + " " + to
	}
	out, err := proc.Output(ctx, proc.Spec{Name: "vgdb", Path: v.VGDB, Args: args, Dir: dir, Env: valgrindEnv(), Cred: cred,
		Timeout: vgdbTimeout, Linger: true})
	var te *proc.TimeoutError
	switch {
	case err == nil:
		return out, nil
	case ctx.Err() != nil:
		return out, fmt.Errorf("vgdb %s to %s: %w", strings.Join(commands, ", "), to, ctx.Err())
	case errors.As(err, &te):
		return out, fmt.Errorf("vgdb %s to %s: no answer within %v", strings.Join(commands, ", "), to, vgdbTimeout)
	default:
		return out, fmt.Errorf("vgdb %s to %s: %v: %s", strings.Join(commands, ", "), to, err, proc.LastLines(out, 2))
	}
}

// CallgrindOut is the base name of the callgrind files of the server's
// process pid: a dump is BASE.N (N counting from 1), the process's exit
// BASE.
func (c *Cluster) CallgrindOut(pid int) string {
	return filepath.Join(c.Dir, "callgrind.out."+strconv.Itoa(pid))
}

// UnderValgrind reports whether the server runs under Valgrind (since
// Count).
func (c *Cluster) UnderValgrind() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.opts.Valgrind != nil && c.counted
}

// Counts reports whether the server is one whose instructions are counted
// (Options.Valgrind): natively until Count, under Valgrind after.
func (c *Cluster) Counts() bool { return c.opts.Valgrind != nil }
