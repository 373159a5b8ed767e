package integration_test

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/pgscale/pgscale/internal/cli"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/testenv"
)

// Counting instructions under Valgrind, an A/A run of two identical
// clusters: every round counts the same instructions per transaction on
// both to within maxAASpread, and the count is the window's alone. The
// bound is what catches a broken count: counting the client (or anything
// timed) moves by percents from round to round here, counting the whole
// life of a backend puts its connection set-up (InitPostgres) and exit
// (proc_exit) into the profile, and counting the backend's wait for the
// client moved a step's count by up to 0.4 %. The result files and the
// comparison carry the measure, the files the tool's version and options.
func TestCountInstructionsAA(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	testenv.NeedProgram(t, "valgrind", "Debian: apt-get install valgrind")
	const maxAASpread = 0.0005 // 0.05 %; measured here: at most 0.002 % at one client
	dir := t.TempDir()
	code, stdout, stderr := pgscale(t, "ab", "--target", "a=settings:", "--target", "b=settings:", "-S", "-c", "1", "-t", "200",
		"--rounds", "3", "--count", "instructions", "--out", dir, "--verdict", filepath.Join(dir, "verdict.json"))
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr+stdout, "counting instructions: the servers run under Valgrind") {
		t.Errorf("no word of what counting will cost before it started:\n%s", stderr)
	}
	var per [2][]float64
	for i, name := range []string{"a", "b"} {
		f, err := result.Read(filepath.Join(dir, name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if v := f.Target.Valgrind; v == nil || !strings.HasPrefix(v.Version, "valgrind-") || len(v.Options) == 0 || v.ASLR == "" {
			t.Errorf("%s: the result file does not record the counter: %+v", name, v)
		}
		for _, s := range f.Steps {
			in := s.Probes.Instructions()
			if in == nil {
				t.Fatalf("%s round %d: no instructions counted (unavailable: %v)", name, s.Round, s.Probes.Unavailable)
			}
			if in.Transactions != 200 || s.Summary.Transactions != 200 {
				t.Errorf("%s round %d: %d transactions counted, %d measured, want 200", name, s.Round, in.Transactions, s.Summary.Transactions)
			}
			// Select-only costs some tens of thousands of instructions
			// in PostgreSQL 15; a count of the client, or of nothing,
			// would not be there.
			if in.PerTxn < 5000 || in.PerTxn > 500000 {
				t.Errorf("%s round %d: %.0f instructions per transaction", name, s.Round, in.PerTxn)
			}
			per[i] = append(per[i], in.PerTxn)
			checkWindowOnly(t, filepath.Join(dir, s.Probes.Profile().File))
		}
	}
	// The rounds of one target count alike too: the warm-up round makes
	// round 1 start where the others do (without it a fresh server's
	// first round counted 0.57 % more here).
	for i, rounds := range per {
		for r := 1; r < len(rounds); r++ {
			if d := math.Abs(rounds[r]/rounds[0] - 1); d > maxAASpread {
				t.Errorf("target %d: round 1 counted %.1f instructions per transaction, round %d %.1f: %.4f %% apart", i, rounds[0], r+1, rounds[r], 100*d)
			}
		}
	}
	for r := range per[0] {
		if d := math.Abs(per[1][r]/per[0][r] - 1); d > maxAASpread {
			t.Errorf("round %d: a counted %.1f instructions per transaction, b %.1f: %.4f %% apart, want under %.2f %%",
				r+1, per[0][r], per[1][r], 100*d, 100*maxAASpread)
		}
	}
	if !strings.Contains(stdout, "instr/txn (instructions)") {
		t.Errorf("the comparison has no instr/txn row:\n%s", stdout)
	}
	// On byte-identical copies of each layout's data the two count alike
	// to the instruction in most layouts (8 572 683 both, in two of three
	// here), so a few instructions apart in every layout (905 of 8.57 M
	// in the third) make a t-test with almost no spread significant: that
	// is negligible, below the smallest change of interest, and never a
	// change (counting a backend's whole life shows as InitPostgres in the
	// profile, checkWindowOnly).
	m := measure(t, readVerdict(t, filepath.Join(dir, "verdict.json")), "instr/txn@c=1")
	if m.Effect == "improved" || m.Effect == "regressed" {
		t.Errorf("an A/A run found its instructions changed: %+v", m)
	}
}

// Counting with the cache simulation, compute_query_id=off against the
// default settings: only the counted measures are compared (a bound on
// throughput judges nothing and says why), the simulation's caches are
// the fixed ones and recorded, the candidate executes fewer instructions
// and reads the clock less (pg_stat_statements no longer times each
// execution), and the why names the functions of pg_stat_statements the
// instructions went out of.
func TestCountCache(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	testenv.NeedProgram(t, "valgrind", "Debian: apt-get install valgrind")
	dir := t.TempDir()
	verdict := filepath.Join(dir, "verdict.json")
	code, stdout, stderr := pgscale(t, "ab", "--target", "a=settings:", "--target", "b=settings:compute_query_id=off", "-S", "-c", "1", "-t", "200",
		"--rounds", "3", "--count", "instructions,cache", "--out", dir, "--verdict", verdict, "--bound", "tps=-5%")
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, name := range []string{"a", "b"} {
		f, err := result.Read(filepath.Join(dir, name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if v := f.Target.Valgrind; v == nil || !slices.Contains(v.Options, "--cache-sim=yes") || !slices.Contains(v.Options, "--LL=8388608,16,64") {
			t.Errorf("%s: the result file does not record the cache simulation: %+v", name, v)
		}
		for _, s := range f.Steps {
			in := s.Probes.Instructions()
			if in == nil || in.Cache == nil {
				t.Fatalf("%s round %d: no cache simulation counted (unavailable: %v)", name, s.Round, s.Probes.Unavailable)
			}
			c := in.Cache
			if c.LL != "8388608 B, 64 B, 16-way associative" || c.Events["I1mr"] == 0 || c.Events["Bc"] == 0 || c.EstCycles <= in.ClientBackends {
				t.Errorf("%s round %d: caches %q, events %v, %d estimated cycles for %d instructions", name, s.Round, c.LL, c.Events, c.EstCycles, in.ClientBackends)
			}
			if len(in.Functions) < 50 || in.ClientClockReads == nil || *in.ClientClockReads == 0 {
				t.Errorf("%s round %d: %d functions, clock reads %v", name, s.Round, len(in.Functions), in.ClientClockReads)
			}
		}
	}
	v := readVerdict(t, verdict)
	for _, key := range []string{"instr/txn@c=1", "clock-reads/txn@c=1"} {
		if m := measure(t, v, key); m.Effect != "improved" || *m.Change > -0.01 {
			t.Errorf("%s: %s, %s; want fewer without pg_stat_statements' work", key, m.Text, m.Effect)
		}
	}
	measure(t, v, "est-cycles/txn@c=1")
	for _, m := range v.Candidates[0].Measures {
		if m.Measure == "tps" || m.Measure == "server-cpu/txn" {
			t.Errorf("%s compared under Valgrind", m.Key)
		}
	}
	if !strings.Contains(stdout, "not compared: tps") || !strings.Contains(stdout, "bound tps=-5% judges nothing") || strings.Contains(stdout, "not supported here") {
		t.Errorf("the notes do not say what was not compared and why, or speak of hardware counters:\n%s", stdout)
	}
	why := v.Candidates[0].Why
	var named []string
	for _, c := range why.Counted {
		if c.Measure != "instr/txn" {
			continue
		}
		for _, f := range c.Functions {
			named = append(named, f.Function+" in "+f.Object)
		}
	}
	if !strings.Contains(strings.Join(named, ", "), "pg_stat_statements.so") {
		t.Errorf("the why of instr/txn names %v, none of pg_stat_statements: %q", named, why.Text)
	}
}

// checkWindowOnly fails when a step's instruction profile holds a
// backend's connection set-up or exit: what a count of the window alone
// cannot hold.
func checkWindowOnly(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("the step's instruction profile: %v", err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, fn := range p.Function {
		seen[fn.Name] = true
	}
	for _, fn := range []string{"InitPostgres", "proc_exit", "secure_read"} {
		if seen[fn] {
			t.Errorf("%s: %s is in the counted instructions", path, fn)
		}
	}
	for _, fn := range []string{"PostgresMain", "_bt_compare"} {
		if !seen[fn] {
			t.Errorf("%s: no %s in the counted instructions", path, fn)
		}
	}
}

// Without Valgrind, --count instructions is one line of usage error,
// before any cluster starts.
func TestCountInstructionsWithoutValgrind(t *testing.T) {
	trackTime(t)
	t.Setenv("PGSCALE_VALGRIND", t.TempDir())
	code, _, stderr := pgscale(t, "ab", "--target", "a=settings:", "--target", "b=settings:", "-S", "-c", "1", "-t", "10",
		"--count", "instructions")
	if code != cli.ExitUsage || strings.Count(strings.TrimSpace(stderr), "\n") > 0 || !strings.Contains(stderr, "apt-get install valgrind") {
		t.Errorf("exit %d, want %d with one line naming Valgrind:\n%s", code, cli.ExitUsage, stderr)
	}
	for _, args := range [][]string{
		{"ab", "--target", "a=settings:", "--target", "b=settings:", "-S", "-c", "1", "-T", "1", "--count", "instructions"},
		{"ab", "--target", "a=settings:", "--target", "b=settings:", "-S", "-c", "1", "-t", "10", "--count", "cycles"},
		{"run", "--dsn", dsn("postgres"), "-S", "-c", "1", "-t", "10", "--count", "instructions"},
		{"suite", "--preset", "fastpath", "--quick", "-t", "10", "--count", "cycles"},
	} {
		if code, _, stderr := pgscale(t, args...); code != cli.ExitUsage {
			t.Errorf("%v: exit %d, want %d: %s", args, code, cli.ExitUsage, stderr)
		}
	}
}

// A counted run makes its data and runs its set-up natively, then counts
// under Valgrind: the set-up fails if its backend is Valgrind's (its
// comm, which PostgreSQL's process titles leave alone, is the tool's),
// and the steps are counted all the same. The run says both, and its
// step's evidence names the client backend in the server: line (under
// Valgrind a process's command line is Valgrind's, and every backend was
// called background; with -t the last snapshot was taken after the client
// had gone, and it "exited during the step") and has no cache line
// without ,cache (it printed "0 L1 instruction misses ... caches I1 , D1 ,
// LL"), and the postmaster under Valgrind is not said to be gone.
func TestCountedSetupNative(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	testenv.NeedProgram(t, "valgrind", "Debian: apt-get install valgrind")
	dir := t.TempDir()
	setup := filepath.Join(dir, "setup.sql")
	if err := os.WriteFile(setup, []byte(`DO $$
BEGIN
	IF convert_from(pg_read_binary_file('/proc/self/comm'), 'UTF8') NOT LIKE 'postgres%' THEN
		RAISE EXCEPTION 'the set-up runs in %, not natively', convert_from(pg_read_binary_file('/proc/self/comm'), 'UTF8');
	END IF;
END $$;
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.json")
	code, stdout, stderr := pgscale(t, "run", "-S", "-c", "1", "-t", "50", "--setup", setup, "--count", "instructions", "--out", out,
		"--profile-dir", filepath.Join(dir, "profiles"))
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	step := readResult(t, out).Steps[0]
	if in := step.Probes.Instructions(); in == nil || in.PerTxn < 5000 {
		t.Errorf("the step was not counted under Valgrind: %+v", in)
	}
	// The postmaster runs under Valgrind, whose tool names the process
	// ("callgrind-amd64"): it is the same process all the same, not gone.
	if ps := step.Probes.Process(); ps == nil || ps.Server == nil || strings.Contains(ps.ServerNote, "gone") {
		t.Errorf("the process evidence lost the server: %+v", ps)
	}
	for _, want := range []string{"made natively in", "restarting the server under Valgrind", "the warm-up round took"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the run does not say %q:\n%s", want, stderr)
		}
	}
	server := ""
	for _, l := range strings.Split(stdout, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == "server:" {
			server = l
		}
	}
	if !strings.Contains(server, "client backend ×1") {
		t.Errorf("the server: line names no client backend: %q\n%s", server, stdout)
	}
	for _, bad := range []string{"cache (simulated)", "caches I1", "l1i-miss"} {
		if strings.Contains(stdout, bad) {
			t.Errorf("%q in a run counted without ,cache:\n%s", bad, stdout)
		}
	}
}
