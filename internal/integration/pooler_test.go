package integration_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/procfs"

	"github.com/pgscale/pgscale/internal/cli"
	"github.com/pgscale/pgscale/internal/syncio"
	"github.com/pgscale/pgscale/internal/target/targettest"
	"github.com/pgscale/pgscale/internal/testenv"
)

// children returns the live processes whose parent is pid, by command name.
func children(pid int) map[string][]int {
	out := map[string][]int{}
	procs, _ := procfs.AllProcs()
	for _, p := range procs {
		if st, err := p.Stat(); err == nil && st.PPID == pid && st.State != "Z" {
			out[st.Comm] = append(out[st.Comm], p.PID)
		}
	}
	return out
}

// peakRSS is process pid's peak resident set (VmHWM) in KiB, 0 once it
// is gone.
func peakRSS(pid int) int64 {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return 0
	}
	st, err := p.NewStatus()
	if err != nil {
		return 0
	}
	return int64(st.VmHWM >> 10)
}

// socketDir is the directory of a description's host=.
func socketDir(t *testing.T, description string) string {
	t.Helper()
	dir := strings.Fields(strings.TrimPrefix(description, "host="))[0]
	if !strings.HasPrefix(dir, os.TempDir()) {
		t.Fatalf("cannot tell a directory from %q", description)
	}
	return dir
}

// noneLeft checks that nothing of an ephemeral cluster and its pooler
// survives: no process started from their directories, no directory.
func noneLeft(t *testing.T, dirs ...string) {
	t.Helper()
	for _, dir := range dirs {
		if left := processesMentioning(dir); len(left) > 0 {
			t.Errorf("processes of %s survive: %v", dir, left)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was not removed (%v)", dir, err)
		}
	}
}

// 2 000 clients through a pgbouncer that run starts itself, in front of
// the ephemeral cluster it starts too: the run completes with no failure,
// the result file is complete and records the pooler and its CPU, and the
// load generator's peak RSS, as the kernel counted it, stays within 64 MiB
// plus 64 KiB per client (one histogram per client took 370 KiB).
func TestPooledRunOfThousandsOfClients(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	targettest.NeedPgBouncer(t)
	const clients = 2000
	bin := buildPgscale(t)
	out := filepath.Join(t.TempDir(), "r.json")
	cmd := exec.Command(bin, "run", "--pooler", "pgbouncer:default_pool_size=8", "-M", "simple", "-c", strconv.Itoa(clients),
		"-T", "2", "-P", "0", "--out", out)
	var stdout, stderr syncio.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The load generator's own peak (VmHWM of /proc/PID/status, read
	// until it exits): wait4's Maxrss is the largest of the process and
	// every descendant it waited for, the cluster's and the pooler's
	// processes among them (1.8 GiB once on a loaded machine).
	var rss int64
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for waiting := true; waiting; {
		if hwm := peakRSS(cmd.Process.Pid); hwm > rss {
			rss = hwm
		}
		select {
		case err := <-done:
			waiting = false
			if err != nil {
				t.Fatalf("run: %v\n%s", err, stderr.String())
			}
		case <-time.After(20 * time.Millisecond):
		}
	}
	bound := int64(64<<10 + 64*clients)
	t.Logf("%d clients: peak RSS %d MiB (bound %d MiB; with the waited-for descendants %d MiB)", clients, rss>>10, bound>>10,
		cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss>>10)
	if rss > bound {
		t.Errorf("peak RSS %d KiB for %d clients, over the bound of %d KiB", rss, clients, bound)
	}
	f := readResult(t, out)
	if !f.Complete || len(f.Steps) != 1 {
		t.Fatalf("result: complete %v (%s), %d steps", f.Complete, f.Reason, len(f.Steps))
	}
	s := f.Steps[0]
	if s.Clients != clients || !s.Complete || s.Summary.Transactions == 0 || s.Summary.Failed != 0 || s.Summary.InitialConnectMs <= 0 {
		t.Errorf("step: %d clients, complete %v, %d transactions, %d failed, initial connection %v ms",
			s.Clients, s.Complete, s.Summary.Transactions, s.Summary.Failed, s.Summary.InitialConnectMs)
	}
	pl := f.Target.Pooler
	if f.Target.Kind != "pgbouncer" || pl == nil || pl.Settings["default_pool_size"] != "8" || pl.Settings["pool_mode"] != "transaction" ||
		pl.Settings["max_client_conn"] != strconv.Itoa(clients+10) || f.Target.ServerVersion == "" {
		t.Errorf("target %+v, pooler %+v", f.Target, pl)
	}
	if s.Probes == nil || s.Probes.Process() == nil || s.Probes.Process().Pooler == nil || s.Probes.Process().Pooler.CPUS <= 0 {
		t.Errorf("the pooler's process was not accounted: %+v", s.Probes)
	} else if srv := s.Probes.Process().Server; srv == nil || srv.Processes > 8+20 {
		t.Errorf("the server's processes, not the pooler's clients, should be watched: %+v", srv)
	}
	if !strings.Contains(stdout.String(), "initial connection time") || !strings.Contains(stdout.String(), "pooler cpu/txn") {
		t.Errorf("the output lacks the initial connection time or the pooler's CPU:\n%s", stdout.String())
	}
	noneLeft(t, socketDir(t, f.Target.Description), socketDir(t, pl.Server))
}

// A pooler killed in the middle of a run ends it at once with exit 3; the
// incomplete result is written and names the cause and the pooler's log,
// kept beside it; neither the pooler nor the server is left.
func TestPoolerKilledMidRun(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	targettest.NeedPgBouncer(t)
	bin := buildPgscale(t)
	out := filepath.Join(t.TempDir(), "r.json")
	cmd := exec.Command(bin, "run", "--pooler", "pgbouncer", "-M", "simple", "-c", "20", "-T", "30", "-P", "1", "--out", out)
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
	if len(kids["pgbouncer"]) != 1 || len(kids["postgres"]) != 1 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("children of pgscale: %v, want one pgbouncer and one postmaster\n%s", kids, stderr.String())
	}
	pooler := kids["pgbouncer"][0]
	killedAt := time.Now()
	syscall.Kill(pooler, syscall.SIGKILL)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != cli.ExitIncomplete {
		t.Fatalf("exit: %v, want code %d\n%s", err, cli.ExitIncomplete, stderr.String())
	}
	if took := time.Since(killedAt); took > 10*time.Second {
		t.Errorf("the run took %v to end after the pooler died", took)
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "pgscale: pgbouncer (pid "+strconv.Itoa(pooler)+") was killed by signal 9") {
		t.Errorf("last line %q does not name the killed pooler", last)
	}
	f := readResult(t, out)
	if f.Complete || !strings.Contains(f.Reason, "killed by signal 9") || len(f.Steps) != 1 || f.Steps[0].Complete ||
		f.Steps[0].Summary.Transactions == 0 {
		t.Errorf("result: complete %v, reason %q, %d steps: want the cut-short step, with what it measured", f.Complete, f.Reason, len(f.Steps))
	} else {
		// The clients lost the pooler, not the server, and the pooler's
		// CPU until it died is kept.
		s := f.Steps[0]
		if n := len(s.Outages); n == 0 || !strings.HasPrefix(s.Outages[n-1].Pooler, "pgbouncer (pid "+strconv.Itoa(pooler)+") was killed by signal 9") {
			t.Errorf("outages %+v: want the last one the pooler's", s.Outages)
		}
		if ps := s.Probes.Process(); ps == nil || ps.Pooler == nil || ps.Pooler.CPUS <= 0 || !strings.Contains(ps.PoolerNote, "exited during the step") {
			t.Errorf("process evidence %+v: want the pooler's CPU until it died", ps)
		}
		if !strings.Contains(stdout.String(), "pooler lost at ") || strings.Contains(stdout.String(), "server lost at ") {
			t.Errorf("the output should name the pooler lost, not a server:\n%s", stdout.String())
		}
		// Its death is said once, by the outage: a probe it took refers to
		// that, not to a raw error.
		rep, err := exec.Command(bin, "report", out).Output()
		if err != nil {
			t.Fatalf("report: %v", err)
		}
		for _, u := range s.Probes.Unavailable {
			if u.Probe == "pooler" && !strings.Contains(string(rep), "pooler: ended with the pooler, lost at ") {
				t.Errorf("the pooler's probe (%s) does not refer to the outage:\n%s", u.Reason, rep)
			}
		}
		for _, l := range strings.Split(string(rep), "\n") {
			if strings.Contains(l, "unavailable:") && strings.Contains(l, "broken pipe") {
				t.Errorf("a probe says the pooler's death as a raw error: %s", l)
			}
		}
	}
	logPath := strings.TrimSuffix(out, ".json") + ".pgbouncer.log"
	if _, err := os.Stat(logPath); err != nil || !strings.Contains(f.Reason, logPath) {
		t.Errorf("pooler log %s: %v; reason %q should name it", logPath, err, f.Reason)
	}
	if err := syscall.Kill(pooler, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("pgbouncer %d still there: %v", pooler, err)
	}
	noneLeft(t, socketDir(t, f.Target.Description), socketDir(t, f.Target.Pooler.Server))
}

// More clients than the open-files limit lets pgscale hold is one usage
// error, naming the limit, before anything starts; so is a pooler that is
// not installed.
func TestPoolerLimitsAreUsageErrors(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	bin := buildPgscale(t)
	cmd := exec.Command("/bin/sh", "-c", `ulimit -n 1000 && ulimit -Hn 1000 && exec "$@"`, "sh",
		bin, "run", "--pooler", "pgbouncer", "-M", "simple", "-c", "10,2000", "-T", "1")
	cmd.Dir = t.TempDir()
	b, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	msg := strings.TrimSpace(string(b))
	if !errors.As(err, &ee) || ee.ExitCode() != cli.ExitUsage || strings.Contains(msg, "\n") ||
		!strings.Contains(msg, "open-files limit is 1000") || !strings.Contains(msg, "-c 2000") {
		t.Errorf("2000 clients under a hard limit of 1000: %v\n%s", err, msg)
	}
	if entries, _ := os.ReadDir(cmd.Dir); len(entries) > 0 {
		t.Errorf("something was written before the refusal: %v", entries)
	}

	t.Setenv("PGSCALE_PGBOUNCER", "/no/such/pgbouncer")
	code, _, stderr := pgscale(t, "run", "--dsn", dsn("postgres"), "--pooler", "pgbouncer", "-M", "simple", "-c", "1", "-T", "1")
	if code != cli.ExitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "pgbouncer not found at $PGSCALE_PGBOUNCER=/no/such/pgbouncer") {
		t.Errorf("no pgbouncer: exit %d\n%s", code, stderr)
	}
	code, _, stderr = pgscale(t, "run", "--dsn", dsn("postgres"), "--pooler", "odyssey", "-c", "1", "-T", "1")
	if code != cli.ExitUsage || !strings.Contains(stderr, "--pooler") {
		t.Errorf("--pooler odyssey: exit %d\n%s", code, stderr)
	}
}

// A pooled run prints what report prints of its result file, the pooler
// in the header and its CPU per transaction in the sweep table included.
func TestPooledRunPrintsWhatReportShows(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	targettest.NeedPgBouncer(t)
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := pgscale(t, "run", "--dsn", dsn("postgres"), "--pooler", "pgbouncer:default_pool_size=2", "-n", "-M", "extended",
		"-c", "1,4", "-T", "1", "-S", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, shown, stderr := pgscale(t, "report", out)
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	printed := strings.TrimSuffix(stdout, "result: "+out+"\n")
	if printed != shown {
		t.Errorf("run printed:\n%s\nreport shows:\n%s", printed, shown)
	}
	for _, want := range []string{"target:   pgbouncer ", "default_pool_size=2", "in front of dsn PostgreSQL", "  pooler: ",
		"pooler cpu/txn", "initial connection time"} {
		if !strings.Contains(printed, want) {
			t.Errorf("the output lacks %q:\n%s", want, printed)
		}
	}
}

// Direct and pooled targets on one server in one ab run: the pooler fronts
// the first target that is not a pooler, the data is that server's, and
// with whole-step turns each target's probes account the pooler only in
// the pooled target's steps.
func TestABDirectAgainstPooled(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	targettest.NeedPgBouncer(t)
	out := t.TempDir()
	code, stdout, stderr := pgscale(t, "ab", "--target", "direct=dsn:"+dsn("postgres"), "--target", "pooled=pgbouncer:default_pool_size=2",
		"-n", "-S", "-M", "simple", "-c", "2", "-T", "0.5", "--warmup", "0.2", "--rounds", "2", "--slice", "0", "--out", out)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	direct, pooled := readResult(t, filepath.Join(out, "direct.json")), readResult(t, filepath.Join(out, "pooled.json"))
	if pl := pooled.Target.Pooler; pooled.Target.Kind != "pgbouncer" || pl == nil || pl.Of != "direct" || pl.ServerKind != "dsn" ||
		pooled.Target.ServerVersion != direct.Target.ServerVersion || pooled.Workload.Scale != direct.Workload.Scale {
		t.Errorf("pooled target %+v (pooler %+v), direct %+v", pooled.Target, pl, direct.Target)
	}
	if spec := pooled.AB.Targets[1].Spec; spec != "pooled=pgbouncer:of=direct,default_pool_size=2" {
		t.Errorf("recorded spec %q", spec)
	}
	for _, s := range pooled.Steps {
		if s.Probes == nil || s.Probes.Process() == nil || s.Probes.Process().Pooler == nil {
			t.Errorf("pooled step of round %d: no pooler accounted", s.Round)
		}
	}
	for _, s := range direct.Steps {
		if s.Probes != nil && s.Probes.Process() != nil && s.Probes.Process().Pooler != nil {
			t.Errorf("direct step of round %d accounts a pooler", s.Round)
		}
	}
}
