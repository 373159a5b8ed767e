package integration_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/cli"
	"github.com/pgscale/pgscale/internal/testenv"
)

// varyRepo makes a git repository of a PGXS extension whose data is built
// differently on every cluster, as a vector index's graph is: its install
// script makes a table with an index, and vary_fill(n) loads it with n
// random() values in random order (the index's page splits follow the
// order, the rows a query finds the values). The query counts the rows
// under a tenth of the range, calling vary_work, the extension's C
// function, on each: about 500 rows, a few per cent more or fewer from
// one cluster to the next. Tags: base; readme, a README change only
// (a build identical in code); slow, whose vary_work runs 14 % more steps
// of its loop (+5 % of the query's instructions).
func varyRepo(t *testing.T) (repo, setup, script string) {
	t.Helper()
	work := func(steps int) string {
		return fmt.Sprintf("#include \"postgres.h\"\n#include \"fmgr.h\"\nPG_MODULE_MAGIC;\nPG_FUNCTION_INFO_V1(vary_work);\n"+
			"Datum vary_work(PG_FUNCTION_ARGS) {\n  volatile uint32 h = (uint32) PG_GETARG_INT32(0);\n"+
			"  for (int i = 0; i < %d; i++)\n    h = h * 31 + i;\n  PG_RETURN_INT32((int32) (h & 1));\n}\n", steps)
	}
	dir, commit := gitLine(t)
	files := pgxsFiles("pgscale_vary")
	files["pgscale_vary.control"] = "default_version = '1.0'\nmodule_pathname = '$libdir/pgscale_vary'\nrelocatable = false\n"
	files["pgscale_vary--1.0.sql"] = "CREATE FUNCTION vary_work(int) RETURNS int AS 'MODULE_PATHNAME' LANGUAGE C STRICT;\n" +
		"CREATE TABLE vary_data (x int NOT NULL);\nCREATE INDEX vary_data_x ON vary_data (x);\n" +
		"CREATE FUNCTION vary_fill(n int) RETURNS void LANGUAGE sql AS\n" +
		"  'INSERT INTO vary_data SELECT (random() * 1000000)::int FROM generate_series(1, n); ANALYZE vary_data';\n"
	files["pgscale_vary.c"] = work(100)
	files["README.md"] = "# pgscale_vary\n"
	commit("base", files, "base")
	commit("readme", map[string]string{"README.md": "# pgscale_vary\n\nA fixture of pgscale's tests: data built differently per cluster.\n"}, "readme")
	commit("slow", map[string]string{"pgscale_vary.c": work(114)}, "slow")
	tmp := t.TempDir()
	setup, script = filepath.Join(tmp, "setup.sql"), filepath.Join(tmp, "q.sql")
	if err := os.WriteFile(setup, []byte("CREATE EXTENSION pgscale_vary;\nSELECT vary_fill(5000);\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, []byte("SELECT count(*) FROM vary_data WHERE x < 100000 AND vary_work(x) >= 0;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, setup, script
}

// Two builds of an extension identical in code, counted on two cluster
// layouts whose data differs (the fixture's rows, loaded anew in every
// layout): each layout's data is made once, by the baseline, and copied
// to the other, so the comparison passes a +1 % bound with an interval of
// a few instructions, and says what it covers. Made per cluster, the same
// A/A was +3.4 % ± 3.7 % on 4 layouts here (inconclusive). The layouts
// record where the data came from and what each part took.
func TestCountedOnCopiesOfTheData(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	needPGXS(t)
	testenv.NeedProgram(t, "valgrind", "Debian: apt-get install valgrind")
	repo, setup, script := varyRepo(t)
	dir := t.TempDir()
	code, stdout, stderr := pgscale(t, "ab", "--target", "base=settings:,ext="+repo+"@base", "--target", "same=settings:,ext="+repo+"@readme",
		"--setup", setup, "-f", script, "-c", "1", "-t", "10", "--rounds", "2", "--count", "instructions", "--bound", "instr/txn=+1%",
		"--out", dir, "--verdict", filepath.Join(dir, "verdict.json"))
	if code != cli.ExitOK {
		t.Fatalf("exit %d, want 0 (pass)\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"paired on byte-identical copies of each layout's data (made by base, copied to same): the interval covers the code and 2 layouts of data"} {
		if !strings.Contains(words(stdout), want) {
			t.Errorf("the comparison does not say %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "target same: on a byte-identical copy of base's data") || !strings.Contains(stderr, "counting instructions: 2 cluster layouts took") {
		t.Errorf("the run does not say where same's data came from, or what the layouts took:\n%s", stderr)
	}
	f := readResult(t, filepath.Join(dir, "base.json"))
	var per []float64
	for _, s := range f.Steps {
		if in := s.Probes.Instructions(); in != nil {
			per = append(per, in.PerTxn)
		}
	}
	// The fixture's data differs between layouts (by 1-3 % here): the
	// copies, not the data, made the pairs agree. The pair's interval must
	// be a tenth of that spread or less (measured: ± 0.001 % to ± 0.042 %,
	// the widest where a one-off event of some thousand instructions fell
	// in one target's window of 10 transactions: with 2 layouts the t
	// interval is 12.7 times the difference's spread).
	if len(per) != 2 || per[0] == per[1] {
		t.Fatalf("base's counts on its 2 layouts: %v; the fixture's data should make them differ", per)
	}
	spread := math.Abs(per[0]-per[1]) / min(per[0], per[1])
	m := measure(t, readVerdict(t, filepath.Join(dir, "verdict.json")), "instr/txn@c=1")
	if m.Outcome != "pass" || m.N != 2 || m.Lo == nil || m.Hi == nil || (*m.Hi-*m.Lo)/2 > spread/10 {
		t.Errorf("instr/txn: %s %s over %d layouts; want a pass over 2, its interval under a tenth of base's own spread between layouts (± %.3f %%)", m.Text, m.Outcome, m.N, 100*spread/10)
	}
	for _, l := range f.AB.Layouts {
		if l.Data == nil || l.Data.From != "base" || len(l.Data.Copies) != 1 || l.Data.Copies[0] != "same" {
			t.Errorf("layout %d: data %+v; want same's a copy of base's", l.Layout, l.Data)
		}
		if tm := l.Times; tm == nil || !(tm.DataS > 0 && tm.CopyS > 0 && tm.ValgrindS > 0 && tm.WarmupS > 0 && tm.RoundsS > 0) || l.Layout > 1 && !(tm.ClustersS > 0) {
			t.Errorf("layout %d: times %+v; want every part's", l.Layout, l.Times)
		}
	}
}

// The same extension with 5 % more instructions per query in the function
// the query calls fails a +1 % bound on copies of one layout's data, and
// the comparison and the pull request's comment name the function.
func TestCountedOnCopiesFails(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	needPGXS(t)
	testenv.NeedProgram(t, "valgrind", "Debian: apt-get install valgrind")
	repo, setup, script := varyRepo(t)
	dir := t.TempDir()
	comment := filepath.Join(dir, "comment.md")
	code, stdout, stderr := pgscale(t, "ab", "--target", "base=settings:,ext="+repo+"@base", "--target", "slow=settings:,ext="+repo+"@slow",
		"--setup", setup, "-f", script, "-c", "1", "-t", "10", "--rounds", "6", "--reshuffle", "0", "--count", "instructions",
		"--bound", "instr/txn=+1%", "--out", dir, "--comment", comment)
	if code != cli.ExitRegression {
		t.Fatalf("exit %d, want 1 (fail)\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(words(stdout), "own instructions vary_work +") || !strings.Contains(words(stdout), "on byte-identical copies of its data (made by base, copied to slow)") {
		t.Errorf("the comparison does not name vary_work, or say where slow's data came from:\n%s", stdout)
	}
	b, err := os.ReadFile(comment)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "vary\\_work") {
		t.Errorf("the comment does not name vary_work:\n%s", b)
	}
}
