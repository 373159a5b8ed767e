package target

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// CrashError says a process of an ephemeral cluster died of a signal (the
// postmaster's "server process (PID N) was terminated by signal S"), with
// what the server's log says of it: under Valgrind, Valgrind's own lines
// (an instruction it cannot run, and the function it is in), natively the
// log's last lines.
type CrashError struct {
	PID    int
	Signal string // "signal 4: Illegal instruction"
	// Query is what the process was running, as the postmaster's DETAIL
	// says ("" when it says nothing).
	Query string
	// UnderValgrind says the server ran under Valgrind; Unhandled is then
	// Valgrind's line on an instruction it does not know ("vex
	// amd64->IR: unhandled instruction bytes: 0x62 0xF1 ..."), when that
	// is what killed the process, and Function the function it died in
	// ("vsum (avx512fintrin.h:12570)").
	UnderValgrind bool
	Unhandled     string
	Function      string
	// Tail is what the server's log said just before the postmaster
	// logged the death (an assertion's TRAP, an error), when the
	// process died natively.
	Tail string
	// Ext, when set, is the extension the advice names (ext=SOURCE):
	// the server's one extension built with it.
	Ext string
	// Frames is the process's backtrace, innermost first, from the core
	// file it left when it died natively (core.go); Function then says its
	// innermost frames up to the first with a source line. NoTrace says
	// why there is none, and what would give it.
	Frames  []Frame
	NoTrace string
}

func (e *CrashError) Error() string {
	query := ""
	if e.Query != "" {
		query = fmt.Sprintf(", running %q", e.Query)
	}
	in := ""
	if e.Function != "" {
		in = " in " + e.Function
	}
	switch {
	case e.UnderValgrind && e.Unhandled != "":
		ext := e.Ext
		if ext == "" {
			ext = "PATH"
		}
		return fmt.Sprintf("the server's process %d died under Valgrind, which cannot run an instruction%s (%s%s)%s: "+
			"rebuild without -march=native (ext=%s,make=OPTFLAGS=)",
			e.PID, in, shortBytes(e.Unhandled), avx512(e.Unhandled), query, ext)
	case e.UnderValgrind:
		return fmt.Sprintf("the server's process %d died under Valgrind of %s%s%s", e.PID, e.Signal, in, query)
	}
	s := fmt.Sprintf("the server's process %d was terminated by %s%s%s", e.PID, e.Signal, in, query)
	if e.Function == "" && e.NoTrace != "" {
		s += "; no function and line: " + e.NoTrace
	}
	if e.Tail != "" {
		s += "; the server's log before it: " + e.Tail
	}
	return s
}

// avx512 names AVX-512 when the instruction's bytes begin with its EVEX
// prefix (0x62).
func avx512(unhandled string) string {
	if _, b, ok := strings.Cut(unhandled, "bytes:"); ok && strings.HasPrefix(strings.TrimSpace(b), "0x62") {
		return ": 0x62 begins an AVX-512 instruction, which -march=native emits on a CPU that has them and Valgrind 3.19 does not know"
	}
	return ""
}

// shortBytes keeps the first four of Valgrind's unhandled instruction
// bytes: "vex amd64->IR: unhandled instruction bytes: 0x62 0xF1 0xFD 0x48 ...".
func shortBytes(unhandled string) string {
	head, b, ok := strings.Cut(unhandled, "bytes:")
	if !ok {
		return unhandled
	}
	f := strings.Fields(b)
	if len(f) <= 4 {
		return unhandled
	}
	return head + "bytes: " + strings.Join(f[:4], " ") + " ..."
}

// LogSize is the server log's length now: where Crash starts looking.
func (c *Cluster) LogSize() int64 {
	fi, err := os.Stat(c.LogFile)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// Crash reads the server log from offset from and returns the first
// process that died of a signal there, nil when none did.
func (c *Cluster) Crash(from int64) *CrashError {
	f, err := os.Open(c.LogFile)
	if err != nil {
		return nil
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(f, 64<<20))
	if err != nil {
		return nil
	}
	e := parseCrash(b)
	if e != nil {
		c.crashed.Store(true)
		e.UnderValgrind = c.UnderValgrind()
		if e.UnderValgrind {
			e.Tail = ""
		} else {
			c.traced(e)
		}
	}
	return e
}

// traced gives a native crash its backtrace, read once per process: the
// core file is removed once read, and a crash may be asked for again.
func (c *Cluster) traced(e *CrashError) {
	c.traceMu.Lock()
	defer c.traceMu.Unlock()
	if c.traces == nil {
		c.traces = map[int]*CrashError{}
	}
	t, ok := c.traces[e.PID]
	if !ok {
		t = &CrashError{PID: e.PID}
		c.backtrace(t)
		c.traces[e.PID] = t
	}
	e.Frames, e.Function, e.NoTrace = t.Frames, t.Function, t.NoTrace
}

// crashTail is how many of the log's last lines a native crash carries.
const crashTail = 5

var (
	terminated = regexp.MustCompile(`server process \(PID (\d+)\) was terminated by (signal \d+(?:: [^\n]*)?)`)
	failedRun  = regexp.MustCompile(`DETAIL:\s+Failed process was running: (.*)`)
	vgFrame    = regexp.MustCompile(`^==(\d+)==\s+at 0x[0-9A-Fa-f]+: (.+)$`)
	// logLine begins a line the server (a timestamp), Valgrind (==pid==)
	// or its decoder (vex) writes.
	logLine = regexp.MustCompile(`^(\d{4}-\d\d-\d\d |==\d+==|vex )`)
)

// maxQuery is how much of the statement a crash's line carries.
const maxQuery = 200

// clip cuts s to n bytes at most, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// parseCrash finds the first "terminated by signal" in a server log, with
// the DETAIL after it and, for its process, Valgrind's lines before it.
func parseCrash(log []byte) *CrashError {
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	for i, l := range lines {
		m := terminated.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		pid, _ := strconv.Atoi(m[1])
		e := &CrashError{PID: pid, Signal: strings.TrimSpace(m[2])}
		if i+1 < len(lines) {
			if d := failedRun.FindStringSubmatch(lines[i+1]); d != nil {
				// A statement of several lines goes on until the next
				// line the server or Valgrind begins.
				q := []string{d[1]}
				for _, l := range lines[i+2:] {
					if logLine.MatchString(l) {
						break
					}
					q = append(q, l)
				}
				e.Query = clip(strings.Join(strings.Fields(strings.Join(q, " ")), " "), maxQuery)
			}
		}
		var before []string
		for j := i - 1; j >= 0 && len(before) < crashTail; j-- {
			if l := strings.TrimSpace(lines[j]); l != "" && !strings.HasPrefix(l, "==") {
				before = append([]string{l}, before...)
			}
		}
		e.Tail = strings.Join(before, " | ")
		prefix := "==" + m[1] + "=="
		for j := 0; j < i; j++ {
			if !strings.HasPrefix(lines[j], prefix) {
				continue
			}
			if strings.Contains(lines[j], "Unrecognised instruction") {
				// vex writes the bytes just before, without the pid.
				for k := j - 1; k >= 0 && k >= j-8; k-- {
					if strings.HasPrefix(lines[k], "vex ") && strings.Contains(lines[k], "unhandled instruction bytes") {
						e.Unhandled = strings.TrimSpace(lines[k])
						break
					}
				}
			}
			if f := vgFrame.FindStringSubmatch(lines[j]); f != nil && e.Function == "" {
				e.Function = strings.TrimSpace(f[2])
			}
		}
		return e
	}
	return nil
}
