package target

import (
	"os"
	"strings"
	"testing"
)

// A real server log (testdata/crash-valgrind.log: a backend under
// Valgrind running an extension's function built with -march=native on a
// CPU with AVX-512): the process, the signal, the statement, Valgrind's
// own line and the function are found, and the error says what to do.
func TestParseCrashUnderValgrind(t *testing.T) {
	b, err := os.ReadFile("testdata/crash-valgrind.log")
	if err != nil {
		t.Fatal(err)
	}
	e := parseCrash(b)
	if e == nil {
		t.Fatal("no crash found")
	}
	e.UnderValgrind, e.Ext = true, "~/vec@v1"
	if e.PID != 10489 || e.Signal != "signal 4: Illegal instruction" || e.Query != "SELECT vsum(v) FROM vecs WHERE id = $1;" ||
		!strings.HasPrefix(e.Unhandled, "vex amd64->IR: unhandled instruction bytes: 0x62 0xF1") || e.Function != "vsum (avx512fintrin.h:12570)" {
		t.Errorf("%+v", e)
	}
	msg := e.Error()
	for _, want := range []string{"process 10489 died under Valgrind", "in vsum (avx512fintrin.h:12570)", "unhandled instruction bytes: 0x62 0xF1 0xFD 0x48 ...",
		"AVX-512", "rebuild without -march=native (ext=~/vec@v1,make=OPTFLAGS=)"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q: no %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("not one line: %q", msg)
	}
}

// A native crash: the signal, the statement over several lines, and what
// the server said just before; a log without one is no crash.
func TestParseCrashNative(t *testing.T) {
	log := `2026-12-02 12:13:41.100 UTC [8578] LOG:  statement: SELECT f();
TRAP: FailedAssertion("x > 0", File: "f.c", Line: 12, PID: 8578)
2026-12-02 12:13:41.301 UTC [8550] LOG:  server process (PID 8578) was terminated by signal 6: Aborted
2026-12-02 12:13:41.301 UTC [8550] DETAIL:  Failed process was running: CREATE TABLE t (x int);
	COPY t FROM PROGRAM 'x';
2026-12-02 12:13:41.301 UTC [8550] LOG:  terminating any other active server processes
`
	e := parseCrash([]byte(log))
	if e == nil || e.PID != 8578 || e.Signal != "signal 6: Aborted" || e.Query != "CREATE TABLE t (x int); COPY t FROM PROGRAM 'x';" ||
		!strings.Contains(e.Tail, `TRAP: FailedAssertion("x > 0"`) {
		t.Fatalf("%+v", e)
	}
	if msg := e.Error(); !strings.Contains(msg, "terminated by signal 6: Aborted") || !strings.Contains(msg, "log before it:") {
		t.Errorf("%q", msg)
	}
	if e := parseCrash([]byte("2026-12-02 12:13:41.301 UTC [8550] LOG:  database system is ready to accept connections\n")); e != nil {
		t.Errorf("a crash in a log without one: %+v", e)
	}
}
