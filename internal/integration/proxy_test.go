package integration_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/build/buildtest"
	"github.com/pgscale/pgscale/internal/cli"
	"github.com/pgscale/pgscale/internal/syncio"
	"github.com/pgscale/pgscale/internal/target/targettest"
	"github.com/pgscale/pgscale/internal/testenv"
)

var proxyDir = regexp.MustCompile(`/[^ ]*/pgscale-proxy-[0-9]+`)

// running reports whether process pid exists and is not a zombie.
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	return !strings.HasPrefix(strings.TrimSpace(s[strings.LastIndex(s, ")")+1:]), "Z")
}

// A short run through pgbouncer as a proxy: target completes, and its
// process is accounted as the pooler, CPU and context switches.
func TestProxyRunCompletes(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	targettest.NeedPgBouncer(t)
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := pgscale(t, "run", "--dsn", dsn("postgres"), "--pooler", "proxy:"+targettest.Example(t, "pgbouncer"),
		"-n", "-S", "-M", "simple", "-c", "2", "-T", "1", "--out", out)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	f := readResult(t, out)
	pl := f.Target.Pooler
	if !f.Complete || f.Target.Kind != "proxy" || pl == nil || pl.Program != "pgbouncer" || pl.ServerKind != "dsn" {
		t.Fatalf("result: complete %v, target %+v", f.Complete, f.Target)
	}
	s := f.Steps[0]
	if s.Probes == nil || s.Probes.Process() == nil || s.Probes.Process().Pooler == nil || s.Probes.Process().Pooler.CPUS <= 0 {
		t.Errorf("the proxy was not accounted as the pooler: %+v", s.Probes)
	}
	if !strings.Contains(stdout, "target:   proxy pgbouncer") || !strings.Contains(stdout, "pooler cpu/txn") {
		t.Errorf("the output does not show the proxy and its CPU:\n%s", stdout)
	}
	noneLeft(t, proxyDir.FindString(pl.Command))
}

// pgpool-II killed in the middle of a run (its main process; its children
// are left to pgscale): the run ends at once with exit 3, the incomplete
// result names it and keeps its log beside it, and no process of its tree
// is left.
func TestProxyKilledMidRun(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	targettest.NeedPgpool(t)
	bin := buildPgscale(t)
	out := filepath.Join(t.TempDir(), "r.json")
	cmd := exec.Command(bin, "run", "--dsn", dsn("postgres"), "-n", "--pooler", "proxy:"+targettest.Example(t, "pgpool"),
		"-S", "-M", "simple", "-c", "4", "-T", "30", "-P", "1", "--out", out)
	var stdout, stderr syncio.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(stderr.String(), "progress: 2.0 s") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	kids := children(cmd.Process.Pid)
	if len(kids["pgpool"]) != 1 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("children of pgscale: %v, want one pgpool\n%s", kids, stderr.String())
	}
	pooler := kids["pgpool"][0]
	workers := children(pooler)["pgpool"]
	if len(workers) < 4 {
		t.Errorf("pgpool %d has %d children, want one per client slot", pooler, len(workers))
	}
	killedAt := time.Now()
	syscall.Kill(pooler, syscall.SIGKILL)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != cli.ExitIncomplete {
		t.Fatalf("exit: %v, want code %d\n%s", err, cli.ExitIncomplete, stderr.String())
	}
	if took := time.Since(killedAt); took > 15*time.Second {
		t.Errorf("the run took %v to end after the proxy died", took)
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "pgscale: pgpool (pid "+strconv.Itoa(pooler)+") was killed by signal 9") {
		t.Errorf("last line %q does not name the killed proxy", last)
	}
	f := readResult(t, out)
	if f.Complete || !strings.Contains(f.Reason, "pgpool (pid "+strconv.Itoa(pooler)+") was killed by signal 9") || len(f.Steps) != 1 ||
		f.Steps[0].Complete || f.Steps[0].Summary.Transactions == 0 {
		t.Errorf("result: complete %v, reason %q, %d steps: want the cut-short step, with what it measured", f.Complete, f.Reason, len(f.Steps))
	}
	logPath := strings.TrimSuffix(out, ".json") + ".pgpool.log"
	if _, err := os.Stat(logPath); err != nil || !strings.Contains(f.Reason, logPath) {
		t.Errorf("proxy log %s: %v; reason %q should name it", logPath, err, f.Reason)
	}
	for _, pid := range append(workers, pooler) {
		// Killed, a process is a zombie until its new parent reaps it.
		for end := time.Now().Add(5 * time.Second); running(pid) && time.Now().Before(end); {
			time.Sleep(20 * time.Millisecond)
		}
		if running(pid) {
			t.Errorf("pgpool process %d still runs", pid)
		}
	}
	noneLeft(t, proxyDir.FindString(f.Target.Pooler.Command))
}

// A proxy that exits at start: exit 3 with one line that carries its
// output, its whole log kept where the result would have gone, nothing
// left running.
func TestProxyExitsAtStart(t *testing.T) {
	trackTime(t)
	dir := t.TempDir()
	def := filepath.Join(dir, "broken.yaml")
	os.WriteFile(def, []byte(`command: "echo 'broken.conf line 3: <b>no</b> such option' >&2; exit 3"`+"\n"), 0o644)
	out := filepath.Join(dir, "r.json")
	code, stdout, stderr := pgscale(t, "run", "--dsn", dsn("postgres"), "-n", "--pooler", "proxy:"+def, "-S", "-c", "1", "-T", "1", "--out", out)
	last := strings.TrimSpace(stderr[strings.LastIndex(strings.TrimSpace(stderr), "\n")+1:])
	if code != cli.ExitIncomplete || !strings.HasPrefix(last, "pgscale: echo exited during start-up") ||
		!strings.Contains(last, "<b>no</b> such option") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	logPath := filepath.Join(dir, "r.echo.log")
	if b, err := os.ReadFile(logPath); err != nil || !strings.Contains(string(b), "such option") || !strings.Contains(stderr, logPath) {
		t.Errorf("the proxy's log %s: %q, %v; the error should name it", logPath, b, err)
	}
	if left := processesMentioning("broken.conf line 3"); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}

// pgpool-II in front of an ephemeral primary with a streaming replica,
// balancing reads: both servers' backends get statements, the step
// records the split and the replica's lag, and nothing of the three is
// left.
func TestProxyPgpoolLoadBalances(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	targettest.NeedPgpool(t)
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := pgscale(t, "run", "--replicas", "1", "--pooler", "proxy:"+targettest.Example(t, "pgpool"),
		"-S", "-M", "simple", "-c", "4", "-T", "2", "--out", out)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	f := readResult(t, out)
	if !f.Complete || f.Target.Pooler == nil || !strings.Contains(f.Target.Pooler.Server, "(replica)") {
		t.Fatalf("result: complete %v, target %+v", f.Complete, f.Target)
	}
	u := f.Steps[0].Probes.Upstreams()
	if u == nil || len(u.Servers) != 2 {
		t.Fatalf("upstreams %+v", u)
	}
	primary, replica := u.Servers[0], u.Servers[1]
	if primary.Role != "primary" || replica.Role != "replica" || replica.LagBytes == nil || primary.ReplayLagMs == nil {
		t.Errorf("upstreams %+v, %+v", primary, replica)
	}
	// The split is counted in statements (pg_stat_statements on each
	// server); where one could not be read, it is no count (a failed read
	// at the step's end was once taken as zero: share 0.00), and the
	// split falls back to each server's transactions.
	for _, s := range u.Servers {
		n := s.Transactions
		if s.Statements != nil {
			n = *s.Statements
		} else {
			t.Logf("%s (%s): no count of statements; its %d transactions are its share", s.Name, s.Role, s.Transactions)
		}
		if n < 100 || s.Share < 0.1 {
			t.Errorf("%s (%s) got %d statements (or transactions), share %.2f: pgpool should balance the reads over both\n%s", s.Name, s.Role, n, s.Share, stdout)
		}
	}
	if !strings.Contains(stdout, "upstreams:  primary ") {
		t.Errorf("the output does not show the split:\n%s", stdout)
	}
	var dirs []string
	for _, d := range strings.Split(f.Target.Pooler.Server, "; ") {
		dirs = append(dirs, socketDir(t, d))
	}
	noneLeft(t, append(dirs, proxyDir.FindString(f.Target.Pooler.Command))...)
}

// --count instructions counts the proxy's instructions per transaction
// beside the server's: its processes run under callgrind too, and the
// step records the count and a profile of it.
func TestProxyCountedUnderValgrind(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	targettest.NeedPgBouncer(t)
	testenv.NeedProgram(t, "valgrind", "Debian: apt-get install valgrind")
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	code, stdout, stderr := pgscale(t, "run", "--pooler", "proxy:"+targettest.Example(t, "pgbouncer"), "-S", "-M", "simple",
		"-c", "1", "-t", "200", "--count", "instructions", "--out", out, "--profile-dir", filepath.Join(dir, "profiles"))
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	f := readResult(t, out)
	in := f.Steps[0].Probes.Instructions()
	if in == nil || in.Pooler == nil || in.Pooler.Processes != 1 || in.PoolerProfile == nil {
		t.Fatalf("instructions %+v", in)
	}
	// pgbouncer passes a select-only transaction on in some thousands of
	// instructions; the server's backend takes some tens of thousands.
	if in.PoolerPerTxn < 1000 || in.PoolerPerTxn > 50000 || in.PerTxn < 5*in.PoolerPerTxn {
		t.Errorf("the pooler %.0f and the backends %.0f instructions per transaction", in.PoolerPerTxn, in.PerTxn)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(out), in.PoolerProfile.File)); err != nil || !strings.HasSuffix(in.PoolerProfile.File, ".pooler.instructions.pb.gz") {
		t.Errorf("the pooler's profile %s: %v", in.PoolerProfile.File, err)
	}
	if !strings.Contains(stdout, "the pooler ") {
		t.Errorf("the output does not show the pooler's count:\n%s", stdout)
	}
	// Its counts per function, for the why of a counted comparison.
	var own uint64
	for _, fc := range in.PoolerFunctions {
		if fc.Object == "pgbouncer" {
			own += fc.Self
		}
	}
	if len(in.PoolerFunctions) == 0 || own == 0 || own > in.Pooler.Instructions {
		t.Errorf("the pooler's functions: %d, %d instructions in pgbouncer's own of %d", len(in.PoolerFunctions), own, in.Pooler.Instructions)
	}
}

// A pooler function that gains a few instructions per transaction, under
// a third of a per cent of the pooler's count (the pgbouncer fixture's
// few commit: release_server, which runs once a transaction): the
// counted comparison names it, the pooler's, in the why and the verdict
// file, whatever its total did.
func TestProxyCountedFunctionNamed(t *testing.T) {
	trackTime(t)
	testenv.Slow(t) // two pgbouncer builds counted under Valgrind on new clusters every round (minutes)
	targettest.NeedPgBouncer(t)
	testenv.NeedProgram(t, "valgrind", "Debian: apt-get install valgrind")
	repo := buildtest.PgBouncerSourceWith(t, "few")
	dir := t.TempDir()
	example, err := os.ReadFile(targettest.Example(t, "pgbouncer"))
	if err != nil {
		t.Fatal(err)
	}
	var defs []string
	for _, rev := range []string{"base", "few"} {
		def := strings.Replace(string(example), "command: pgbouncer {{dir}}/pgbouncer.ini",
			"build:\n  source: "+repo+"@"+rev+"\n  run: ./configure --without-openssl && make\ncommand: \"{{build}}/pgbouncer {{dir}}/pgbouncer.ini\"", 1)
		path := filepath.Join(dir, rev+".yaml")
		if err := os.WriteFile(path, []byte(def), 0o644); err != nil {
			t.Fatal(err)
		}
		defs = append(defs, rev+"=proxy:"+path+",of='settings:'")
	}
	out, verdict, comment := filepath.Join(dir, "ab"), filepath.Join(dir, "verdict.json"), filepath.Join(dir, "comment.md")
	code, stdout, stderr := pgscale(t, "ab", "--target", defs[0], "--target", defs[1], "-S", "-M", "simple", "-c", "1", "-t", "200",
		"--rounds", "3", "--count", "instructions", "--out", out, "--verdict", verdict, "--comment", comment)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	v := readVerdict(t, verdict)
	var named []string
	for _, ft := range v.Candidates[0].Why.Functions {
		for _, f := range ft.Changed {
			named = append(named, ft.Process+": "+f.Function)
		}
	}
	if !slices.Contains(named, "pooler: release_server") {
		t.Errorf("the functions named %v, not the pooler's release_server:\n%s", named, stdout)
	}
	if !strings.Contains(stdout, "release_server +11") {
		t.Errorf("the why does not name release_server +11:\n%s", stdout)
	}
	// The pull request's comment names it first, though no total
	// failed, and links to no page: none was written beside it.
	if b, err := os.ReadFile(comment); err != nil || !strings.Contains(string(b), "| pooler | `release_server` |") || strings.Contains(string(b), ".html") {
		t.Errorf("the comment (%v):\n%s", err, b)
	}
	m := measure(t, v, "pooler-instr/txn@c=1")
	t.Logf("pooler-instr/txn@c=1: %s, %s; named %v", m.Text, m.Effect, named)
}
