package target

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pgscale/pgscale/internal/proc"
)

// A crashed backend's function and line come from the core file it left:
// an ephemeral cluster's server runs with core files allowed (proc's
// CoreFiles), the kernel writes them where its core_pattern says, and gdb
// reads the backtrace from one. Where that cannot be had, the crash's
// message says why and what would give it.

// corePatternFile is where the kernel says how it names core files.
const corePatternFile = "/proc/sys/kernel/core_pattern"

// gdbTimeout bounds reading one core file's backtrace: gdb loads the
// server's and its libraries' symbols, a few seconds on a loaded machine.
const gdbTimeout = 60 * time.Second

// maxFrames is how many of the backtrace's frames a crash keeps.
const maxFrames = 12

// shownFrames is how many the crash's line names: the innermost ones, up
// to the first with a source line.
const shownFrames = 3

// Frame is one frame of a crashed process's backtrace, innermost first.
type Frame struct {
	Function string // "crashme_deref"; "" when gdb could not name it
	File     string // the source file, when the binary has debug information
	Line     int
	Object   string // the shared object, when there is no source line
}

// String says the frame as Valgrind does: "crashme_deref (crashme.c:11)",
// or with its shared object when that is all there is.
func (f Frame) String() string {
	name := f.Function
	if name == "" {
		name = "??"
	}
	switch {
	case f.File != "":
		return fmt.Sprintf("%s (%s:%d)", name, filepath.Base(f.File), f.Line)
	case f.Object != "":
		return fmt.Sprintf("%s (%s)", name, filepath.Base(f.Object))
	}
	return name
}

// gdbFrame is one line of gdb's bt: "#0  0x00007f... in f (p=0x0) at
// c.c:1", "#1  main () at c.c:2", "#2  0x... in g () from /lib/libx.so".
var gdbFrame = regexp.MustCompile(`^#(\d+)\s+(?:0x[0-9A-Fa-f]+ in )?(\S+) \(.*\)(?: at (\S+):(\d+)| from (\S+))?\s*$`)

// parseBacktrace reads gdb's bt output into frames, innermost first.
func parseBacktrace(out string) []Frame {
	var frames []Frame
	next := 0
	for _, l := range strings.Split(out, "\n") {
		m := gdbFrame.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		// gdb prints frame 0 twice (as it selects it, then in bt).
		if n, _ := strconv.Atoi(m[1]); n != next {
			continue
		}
		next++
		f := Frame{Function: m[2], File: m[3], Object: m[5]}
		if f.Function == "??" {
			f.Function = ""
		}
		f.Line, _ = strconv.Atoi(m[4])
		frames = append(frames, f)
		if len(frames) == maxFrames {
			break
		}
	}
	return frames
}

// where says the innermost named frames up to the first with a source
// line, and its caller when that has one too: "crashme_deref
// (crashme.c:11), called from crashme_scan (crashme.c:20)". Frames gdb
// could not name (a stripped binary's) are left out.
func where(frames []Frame) string {
	var parts []string
	for i, f := range frames {
		if f.Function == "" {
			continue
		}
		parts = append(parts, f.String())
		if f.File != "" {
			if i+1 < len(frames) && frames[i+1].File != "" && frames[i+1].Function != "" {
				parts = append(parts, frames[i+1].String())
			}
			break
		}
		if len(parts) == shownFrames {
			break
		}
	}
	return strings.Join(parts, ", called from ")
}

// coreGlob turns the kernel's core_pattern into the glob of the core file
// a process left (the pattern's relative paths are of the process's
// working directory, a backend's the data directory), "" when the kernel
// writes no file of its own: it pipes cores to a program.
func coreGlob(pattern, cwd string, pid int, exe string, usesPID bool) string {
	pattern = strings.TrimSpace(pattern)
	if pattern == "" || strings.HasPrefix(pattern, "|") {
		return ""
	}
	var b strings.Builder
	hasPID := false
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c != '%' || i+1 == len(pattern) {
			b.WriteByte(c)
			continue
		}
		i++
		switch pattern[i] {
		case '%':
			b.WriteByte('%')
		case 'p':
			hasPID = true
			b.WriteString(strconv.Itoa(pid))
		case 'e':
			b.WriteString(exe)
		default:
			// The pid in the initial namespace, the time, the host name...:
			// whatever it was, any.
			b.WriteByte('*')
		}
	}
	p := b.String()
	if usesPID && !hasPID {
		p += "." + strconv.Itoa(pid)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	return p
}

// pipedTo says, for a core_pattern that pipes cores to a program, how to
// get a backtrace from where that program keeps them.
func pipedTo(pattern string, pid int) string {
	prog := strings.Fields(strings.TrimPrefix(strings.TrimSpace(pattern), "|"))
	name := "a program"
	if len(prog) > 0 {
		name = filepath.Base(prog[0])
	}
	switch {
	case strings.Contains(name, "systemd-coredump"):
		return fmt.Sprintf("the kernel hands core files to systemd-coredump (%s): `coredumpctl gdb %d`, then `bt`, names the function and line", corePatternFile, pid)
	case strings.Contains(name, "apport"):
		return fmt.Sprintf("the kernel hands core files to apport (%s), which keeps them in /var/crash only for packaged programs: "+
			"`sysctl kernel.core_pattern=core` lets the server write its own, and pgscale then names the function and line", corePatternFile)
	}
	return fmt.Sprintf("the kernel hands core files to %s (%s): read the backtrace of process %d's core there with `gdb -batch -ex bt POSTGRES CORE`, "+
		"or `sysctl kernel.core_pattern=core` and pgscale names the function and line", name, corePatternFile, pid)
}

// backtrace reads the core file the crashed process left with gdb and
// sets e's Frames (and Function); without one, e.NoTrace says why and
// what to run to get it.
func (c *Cluster) backtrace(e *CrashError) {
	pattern, err := os.ReadFile(corePatternFile)
	if err != nil {
		e.NoTrace = fmt.Sprintf("no core file: %v", err)
		return
	}
	usesPID := false
	if b, err := os.ReadFile("/proc/sys/kernel/core_uses_pid"); err == nil {
		usesPID = strings.TrimSpace(string(b)) == "1"
	}
	glob := coreGlob(string(pattern), c.DataDir, e.PID, "postgres", usesPID)
	if glob == "" {
		e.NoTrace = pipedTo(string(pattern), e.PID)
		return
	}
	core := newestFile(glob)
	if core == "" {
		if lim := coreLimit(); lim == 0 {
			e.NoTrace = "core files are off (ulimit -Hc 0): after `ulimit -c unlimited` in the shell that runs pgscale, it reads the function and line from the core file"
		} else {
			e.NoTrace = fmt.Sprintf("it left no core file where %s (%q) puts one: `gdb -batch -ex bt %s CORE` on one names the function and line",
				corePatternFile, strings.TrimSpace(string(pattern)), filepath.Join(c.BinDir, "postgres"))
		}
		return
	}
	defer os.Remove(core) // as large as the backend's memory, and read now
	gdb, err := exec.LookPath("gdb")
	if err != nil {
		e.NoTrace = "gdb is not installed to read the core file it left (apt-get install gdb), which names the function and line"
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), gdbTimeout)
	defer cancel()
	out, err := proc.Output(ctx, proc.Spec{Name: "gdb", Path: gdb, Env: append(childEnv(), "DEBUGINFOD_URLS="),
		Args: []string{"-nx", "-batch", "-iex", "set debuginfod enabled off", "-ex", "set pagination off",
			"-ex", "bt " + strconv.Itoa(maxFrames), filepath.Join(c.BinDir, "postgres"), core},
		Timeout: gdbTimeout})
	e.Frames = parseBacktrace(out)
	if len(e.Frames) == 0 {
		e.NoTrace = fmt.Sprintf("gdb read no backtrace from its core file (%v)", err)
		return
	}
	if e.Function = where(e.Frames); e.Function == "" {
		e.NoTrace = "gdb named none of its frames (a stripped binary, without debug symbols installed)"
	}
}

// newestFile is the most recently modified regular file glob matches, ""
// when none does.
func newestFile(glob string) string {
	paths, _ := filepath.Glob(glob)
	best, at := "", time.Time{}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if best == "" || fi.ModTime().After(at) {
			best, at = p, fi.ModTime()
		}
	}
	return best
}

// coreLimit is the hard core-file limit the server inherits, in bytes
// (RLIM_INFINITY: none).
func coreLimit() uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_CORE, &lim); err != nil {
		return ^uint64(0)
	}
	return lim.Max
}
