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

// A server process that dies natively during the set-up (a backend
// killed with SIGSEGV, as a crashing extension would be) is named with
// its signal and statement, exit 3, instead of the lost connection's
// "unexpected EOF" as a usage error.
func TestSetupCrashNamed(t *testing.T) {
	trackTime(t)
	testenv.Slow(t) // a cluster of its own, crashed by its set-up
	dir := t.TempDir()
	setup := filepath.Join(dir, "setup.sql")
	if err := os.WriteFile(setup, []byte("CREATE TABLE t (x int);\nCOPY t FROM PROGRAM 'kill -SEGV $PPID';\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := pgscale(t, "run", "-S", "-c", "1", "-t", "10", "--setup", setup, "--out", filepath.Join(dir, "r.json"))
	line := lastError(stderr)
	if code != cli.ExitIncomplete || strings.Count(line, "\n") > 0 || !strings.Contains(line, "was terminated by signal 11: Segmentation fault") ||
		!strings.Contains(line, "COPY t FROM PROGRAM") {
		t.Errorf("exit %d, want %d with one line naming the crash:\n%s\n%s", code, cli.ExitIncomplete, stderr, stdout)
	}
}

// A backend that dereferences NULL in an extension's function (a static
// helper, inlined): the crash's one line names the function and the line
// of its source, read with gdb from the core file the backend left, and
// where the kernel hands core files to a program instead, what to run to
// get them. About 10 s: a make of one file, a cluster, gdb.
func TestNativeCrashNamesFunction(t *testing.T) {
	trackTime(t)
	testenv.Slow(t) // a make, a cluster of its own and gdb
	testenv.NeedProgram(t, "make", "Debian: apt-get install make")
	testenv.NeedProgram(t, "gcc", "Debian: apt-get install gcc")
	testenv.NeedProgram(t, "gdb", "Debian: apt-get install gdb")
	pgConfig := "/usr/lib/postgresql/15/bin/pg_config"
	if _, err := os.Stat("/usr/lib/postgresql/15/lib/pgxs/src/makefiles/pgxs.mk"); err != nil {
		testenv.Need(t, err) // postgresql-server-dev-15
	}
	dir := t.TempDir()
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	files := map[string]string{
		"Makefile": "MODULES = crashme\nPGXS := $(shell $(PG_CONFIG) --pgxs)\ninclude $(PGXS)\n",
		"crashme.c": `#include "postgres.h"
#include "fmgr.h"
PG_MODULE_MAGIC;
PG_FUNCTION_INFO_V1(crashme_scan);
static int
crashme_deref(int *p)
{
	return *p;
}
Datum
crashme_scan(PG_FUNCTION_ARGS)
{
	int32		n = PG_GETARG_INT32(0);
	int		   *p = NULL;

	if (n > 3)
		PG_RETURN_INT32(crashme_deref(p));
	PG_RETURN_INT32(n);
}
`,
		"setup.sql": "CREATE FUNCTION crashme_scan(int) RETURNS int AS '" + filepath.Join(dir, "crashme.so") + "', 'crashme_scan' LANGUAGE C STRICT;\nSELECT crashme_scan(1);\n",
		"q.sql":     "\\set n random(4, 5)\nSELECT crashme_scan(:n);\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("make", "-C", dir, "PG_CONFIG="+pgConfig).CombinedOutput(); err != nil {
		t.Fatalf("make: %v\n%s", err, out)
	}
	out := filepath.Join(dir, "r.json")
	t0 := time.Now()
	code, stdout, stderr := pgscale(t, "run", "-f", filepath.Join(dir, "q.sql"), "--setup", filepath.Join(dir, "setup.sql"), "-c", "1", "-T", "5",
		"--no-probes", "--out", out)
	took := time.Since(t0)
	line := lastError(stderr)
	if code != cli.ExitIncomplete || strings.Count(line, "\n") > 0 || !strings.Contains(line, "terminated by signal 11: Segmentation fault") {
		t.Fatalf("exit %d, want %d with one line naming the crash:\n%s\n%s", code, cli.ExitIncomplete, stderr, stdout)
	}
	want := "Segmentation fault in crashme_deref (crashme.c:8), called from crashme_scan (crashme.c:17)"
	if pattern, _ := os.ReadFile("/proc/sys/kernel/core_pattern"); strings.HasPrefix(string(pattern), "|") {
		want = "no function and line: the kernel hands core files to"
	}
	if !strings.Contains(line, want) {
		t.Errorf("no %q in %q", want, line)
	}
	if f := readResult(t, out); f.Complete || !strings.Contains(f.Reason, want) {
		t.Errorf("result file: complete %v, reason %q", f.Complete, f.Reason)
	}
	t.Logf("%v: %s", took.Round(100*time.Millisecond), line)
}

// A server that dies under Valgrind: an extension's function built with
// -march=native on a CPU with AVX-512 (the set-up, natively, runs it), then
// counted: the first counted backend to run it dies of SIGILL. The run
// stops at once with one line carrying Valgrind's own line, the function
// and what to do, exit 3, and the incomplete result file says the same.
func TestCountedCrashUnderValgrind(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	testenv.NeedProgram(t, "valgrind", "Debian: apt-get install valgrind")
	testenv.NeedProgram(t, "make", "Debian: apt-get install make")
	testenv.NeedProgram(t, "gcc", "Debian: apt-get install gcc")
	pgConfig := "/usr/lib/postgresql/15/bin/pg_config"
	if _, err := os.Stat("/usr/lib/postgresql/15/lib/pgxs/src/makefiles/pgxs.mk"); err != nil {
		testenv.Need(t, err) // postgresql-server-dev-15
	}
	if cpu, _ := os.ReadFile("/proc/cpuinfo"); !strings.Contains(string(cpu), " avx512f") {
		t.Skip("this CPU has no AVX-512: -march=native builds nothing Valgrind cannot run")
	}
	dir := t.TempDir()
	// The server's OS user loads the library from here.
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	files := map[string]string{
		"Makefile": "MODULES = avxsum\nOPTFLAGS ?= -march=native\nPG_CFLAGS += $(OPTFLAGS)\nPGXS := $(shell $(PG_CONFIG) --pgxs)\ninclude $(PGXS)\n",
		"avxsum.c": `#include "postgres.h"
#include "fmgr.h"
#include "utils/array.h"
#ifdef __AVX512F__
#include <immintrin.h>
#endif
PG_MODULE_MAGIC;
PG_FUNCTION_INFO_V1(vsum);
Datum
vsum(PG_FUNCTION_ARGS)
{
	ArrayType  *a = PG_GETARG_ARRAYTYPE_P(0);
	int			n = ArrayGetNItems(ARR_NDIM(a), ARR_DIMS(a));
	const double *x = (const double *) ARR_DATA_PTR(a);
	double		s = 0;
	int			i = 0;
#ifdef __AVX512F__
	__m512d		acc = _mm512_setzero_pd();
	for (; i + 8 <= n; i += 8)
		acc = _mm512_add_pd(acc, _mm512_loadu_pd(x + i));
	s = _mm512_reduce_add_pd(acc);
#endif
	for (; i < n; i++)
		s += x[i];
	PG_RETURN_FLOAT8(s);
}
`,
		"setup.sql": "CREATE FUNCTION vsum(float8[]) RETURNS float8 AS '" + filepath.Join(dir, "avxsum.so") + "', 'vsum' LANGUAGE C IMMUTABLE STRICT;\n" +
			"CREATE TABLE vecs AS SELECT i AS id, ARRAY(SELECT random() + 0 * i FROM generate_series(1, 64)) AS v FROM generate_series(1, 100) AS i;\n" +
			"SELECT sum(vsum(v)) FROM vecs;\n",
		"q.sql": "\\set id random(1, 100)\nSELECT vsum(v) FROM vecs WHERE id = :id;\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("make", "-C", dir, "PG_CONFIG="+pgConfig).CombinedOutput(); err != nil {
		t.Fatalf("make: %v\n%s", err, out)
	}
	out := filepath.Join(dir, "r.json")
	t0 := time.Now()
	code, stdout, stderr := pgscale(t, "run", "-f", filepath.Join(dir, "q.sql"), "--setup", filepath.Join(dir, "setup.sql"), "-c", "1", "-t", "20",
		"--count", "instructions", "--out", out, "--profile-dir", filepath.Join(dir, "profiles"))
	took := time.Since(t0)
	line := lastError(stderr)
	if code != cli.ExitIncomplete || strings.Count(line, "\n") > 0 {
		t.Fatalf("exit %d, want %d with one line:\n%s\n%s", code, cli.ExitIncomplete, stderr, stdout)
	}
	for _, want := range []string{"died under Valgrind", "unhandled instruction bytes: 0x62", "in vsum (", "rebuild without -march=native", "make=OPTFLAGS="} {
		if !strings.Contains(line, want) {
			t.Errorf("no %q in %q", want, line)
		}
	}
	// Without the watch, a backend that dies on every transaction kept
	// the clients reconnecting for minutes.
	if took > 2*time.Minute {
		t.Errorf("took %v to say so", took)
	}
	f := readResult(t, out)
	if f.Complete || !strings.Contains(f.Reason, "died under Valgrind") {
		t.Errorf("result file: complete %v, reason %q", f.Complete, f.Reason)
	}
	t.Logf("%v: %s", took.Round(100*time.Millisecond), line)
}

// lastError is the error line pgscale ended with: the last of stderr's
// that begins "pgscale: ", with all that follows it.
func lastError(stderr string) string {
	i := strings.LastIndex(stderr, "pgscale: ")
	if i < 0 {
		return ""
	}
	return strings.TrimSpace(stderr[i:])
}
