package agent_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/cli"
	"github.com/pgscale/pgscale/internal/metrics"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/target/targettest"
	"github.com/pgscale/pgscale/internal/testenv"
	"github.com/pgscale/pgscale/internal/workload"
)

// cluster is the package's one server: the target (pgbench's data at scale
// 1 in database postgres, over TCP on 127.0.0.1, open to every loopback
// address) and, in a database of each test's own, the coordination
// database. Every connection goes to a loopback address.
var cluster *target.Cluster

// execAgent, set in the environment of a child process, makes the test
// binary pgscale itself: the agents are processes of their own.
const execAgent = "PGSCALE_AGENT_TEST_EXEC"

func TestMain(m *testing.M) {
	if os.Getenv(execAgent) == "1" {
		os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	if testenv.Short() {
		os.Exit(m.Run()) // every test of agents at work is the full suite's: no cluster
	}
	os.Exit(targettest.Run(m, target.Options{TCP: true, HBA: []string{"host all all 127.0.0.0/8 trust"}},
		func(c *target.Cluster) {
			cluster = c
			connect := func(ctx context.Context) (*pgconn.PgConn, error) {
				return pgconn.Connect(ctx, c.ConnString("postgres"))
			}
			if _, err := workload.Init(context.Background(), connect, workload.InitOptions{Scale: 1}, io.Discard); err != nil {
				panic(err)
			}
		}))
}

func exec1(t *testing.T, q string) string {
	t.Helper()
	ctx := context.Background()
	c, err := pgconn.Connect(ctx, cluster.ConnString("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	res, err := c.Exec(ctx, q).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	var b strings.Builder
	for _, r := range res {
		for _, row := range r.Rows {
			for i, v := range row {
				if i > 0 {
					b.WriteByte('\t')
				}
				b.Write(v)
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// coordination creates a coordination database of the test's own and
// returns its connection string (over the unix socket).
func coordination(t *testing.T, name string) string {
	t.Helper()
	exec1(t, "DROP DATABASE IF EXISTS "+name)
	exec1(t, "CREATE DATABASE "+name+" TEMPLATE template0")
	return cluster.ConnString(name)
}

// proc is an agent running as a process of its own.
type proc struct {
	cmd  *exec.Cmd
	out  *bytes.Buffer
	done chan struct{}
	code int
}

func startAgent(t *testing.T, coord string, index int, job string, extra ...string) *proc {
	t.Helper()
	args := append([]string{"agent", "--coordinator", coord, "--index", fmt.Sprint(index), "--job", job, "--wait", "60s",
		"--source-address", fmt.Sprintf("127.0.0.%d", 11+index)}, extra...)
	cmd := exec.Command(os.Args[0], args...)
	p := &proc{cmd: cmd, out: &bytes.Buffer{}, done: make(chan struct{})}
	w := &lockedWriter{b: p.out}
	cmd.Stdout, cmd.Stderr = w, w
	cmd.Env = append(os.Environ(), execAgent+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		cmd.Wait()
		p.code = cmd.ProcessState.ExitCode()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// wait waits for the agent to exit and returns its exit code.
func (p *proc) wait(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(within):
		t.Fatalf("agent still running after %v; its output:\n%s", within, p.output())
		return -1
	}
}

func (p *proc) output() string {
	w := p.cmd.Stdout.(*lockedWriter)
	w.mu.Lock()
	defer w.mu.Unlock()
	return p.out.String()
}

type lockedWriter struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (w *lockedWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(b)
}

func pgscale(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := cli.Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

func targetDSN() string {
	return fmt.Sprintf("host=127.0.0.1 port=%d user=postgres dbname=postgres sslmode=disable", cluster.Port)
}

// Three agent processes, each connecting from a loopback address of its
// own, run a 6-client step: the merged histogram counts every transaction,
// the transactions are the agents' added, the server saw the three
// addresses, and each agent's own file is kept.
func TestThreeAgents(t *testing.T) {
	testenv.Slow(t)
	coord := coordination(t, "coord_three")
	var agents []*proc
	for i := range 3 {
		agents = append(agents, startAgent(t, coord, i, "three"))
	}
	// What the server sees of the clients, while the run goes.
	addrs := map[string]bool{}
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		ctx := context.Background()
		c, err := pgconn.Connect(ctx, cluster.ConnString("postgres"))
		if err != nil {
			return
		}
		defer c.Close(ctx)
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			res, err := c.Exec(ctx, `SELECT host(client_addr) FROM pg_stat_activity WHERE application_name = 'pgscale' AND client_addr IS NOT NULL`).ReadAll()
			if err != nil {
				return
			}
			for _, r := range res {
				for _, row := range r.Rows {
					addrs[string(row[0])] = true
				}
			}
		}
	}()
	dump := time.AfterFunc(40*time.Second, func() {
		for i, a := range agents {
			fmt.Fprintf(os.Stderr, "agent %d so far:\n%s\n", i, a.output())
		}
	})
	defer dump.Stop()
	out := filepath.Join(t.TempDir(), "three.json")
	code, stdout, stderr := pgscale("run", "--dsn", targetDSN(), "-c", "6", "-T", "3", "--agents", "3", "--coordinator", coord,
		"--agents-job", "three", "--agents-timeout", "30s", "--out", out, "--random-seed", "7", "-P", "1")
	close(stop)
	<-watched
	if code != 0 {
		t.Fatalf("run exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for i, a := range agents {
		if c := a.wait(t, 20*time.Second); c != 0 {
			t.Errorf("agent %d exited %d:\n%s", i, c, a.output())
		}
	}
	f, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Steps) != 1 || !f.Complete {
		t.Fatalf("%d steps, complete %v (%s)", len(f.Steps), f.Complete, f.Reason)
	}
	s := f.Steps[0]
	h, err := metrics.DecodeHistogram(s.Histogram)
	if err != nil {
		t.Fatal(err)
	}
	var sum, ivSum int64
	for _, a := range s.Agents {
		sum += a.Transactions
	}
	for _, iv := range s.Intervals {
		ivSum += iv.Transactions
	}
	t.Logf("6 clients on 3 agents: %d transactions, %.0f tps; agents %+v", s.Summary.Transactions, s.Summary.TPS, s.Agents)
	if s.Summary.Transactions == 0 || h.TotalCount() != s.Summary.Transactions || sum != s.Summary.Transactions || ivSum != s.Summary.Transactions {
		t.Errorf("transactions %d, merged histogram counts %d, agents' sum %d, intervals' sum %d: want all equal and not 0",
			s.Summary.Transactions, h.TotalCount(), sum, ivSum)
	}
	if len(s.Agents) != 3 {
		t.Fatalf("%d agents in the step, want 3", len(s.Agents))
	}
	var want, got []string
	for i, a := range s.Agents {
		if a.Index != i || a.FirstClient != 2*i || a.Clients != 2 || !a.Complete {
			t.Errorf("agent %d: %+v, want clients %d-%d, complete", i, a, 2*i, 2*i+1)
		}
		if a.SourceAddress != fmt.Sprintf("127.0.0.%d", 11+i) {
			t.Errorf("agent %d: source address %q", i, a.SourceAddress)
		}
		if a.Offset.UncertaintyMs <= 0 || a.Offset.UncertaintyMs > 100 || a.StartSkewMs < 0 || a.StartSkewMs > 200 {
			t.Errorf("agent %d: offset %.3f ± %.3f ms, start skew %.3f ms: not what one machine gives", i, a.Offset.Ms, a.Offset.UncertaintyMs, a.StartSkewMs)
		}
		want = append(want, a.SourceAddress)
	}
	for a := range addrs {
		got = append(got, a)
	}
	sort.Strings(got)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("pg_stat_activity.client_addr of the clients: %v, want %v", got, want)
	}
	if len(f.Agents) != 3 || f.Coordination == nil || f.Coordination.Job != "three" {
		t.Fatalf("agents %+v, coordination %+v", f.Agents, f.Coordination)
	}
	for i, a := range f.Agents {
		af, err := result.Read(filepath.Join(filepath.Dir(out), a.File))
		if err != nil {
			t.Errorf("agent %d's file: %v", i, err)
			continue
		}
		if len(af.Steps) != 1 || af.Steps[0].Summary.Transactions != s.Agents[i].Transactions || a.Transactions != s.Agents[i].Transactions {
			t.Errorf("agent %d's file does not hold its %d transactions", i, s.Agents[i].Transactions)
		}
	}
}

// An agent killed with SIGKILL in the middle of a step: the run ends with
// exit 3 within seconds, the step incomplete and the agent named with what
// it last reported; the other agent stops; a restarted agent with the same
// index cannot join the measurement in progress.
func TestAgentKilledMidStep(t *testing.T) {
	testenv.Slow(t)
	coord := coordination(t, "coord_kill")
	a0 := startAgent(t, coord, 0, "kill")
	a1 := startAgent(t, coord, 1, "kill")
	out := filepath.Join(t.TempDir(), "kill.json")
	type ran struct {
		code           int
		stdout, stderr string
	}
	done := make(chan ran, 1)
	began := time.Now()
	go func() {
		code, stdout, stderr := pgscale("run", "--dsn", targetDSN(), "-c", "4", "-T", "30", "--agents", "2", "--coordinator", coord,
			"--agents-job", "kill", "--agents-lost-after", "2s", "--out", out)
		done <- ran{code, stdout, stderr}
	}()
	// Kill agent 1 once it has reported two intervals.
	deadline := time.Now().Add(30 * time.Second)
	for intervals(t, coord, 1) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("agent 1 reported no interval in 30 s:\n%s", a1.output())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := a1.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	a1.wait(t, 5*time.Second)
	// A pod restarted with the same index cannot join.
	again := startAgent(t, coord, 1, "kill")
	if c := again.wait(t, 10*time.Second); c != 3 || !strings.Contains(again.output(), "cannot join a measurement in progress") {
		t.Errorf("restarted agent 1 exited %d:\n%s", c, again.output())
	}
	var r ran
	select {
	case r = <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("the run did not end within 20 s of the kill")
	}
	t.Logf("run ended %.1f s after the kill (%.1f s in all)\nstderr:\n%s", time.Since(killed).Seconds(), time.Since(began).Seconds(), r.stderr)
	if r.code != 3 {
		t.Errorf("run exited %d, want 3\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "agent 1 (") || !strings.Contains(r.stderr, "stopped heartbeating") || !strings.Contains(r.stderr, "last reported: interval") {
		t.Errorf("the error does not name agent 1 and what it last reported:\n%s", r.stderr)
	}
	if c := a0.wait(t, 10*time.Second); c != 3 {
		t.Errorf("agent 0 exited %d, want 3:\n%s", c, a0.output())
	}
	f, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if f.Complete || len(f.Steps) != 1 || f.Steps[0].Complete || !strings.Contains(f.Steps[0].Reason, "agent 1") {
		t.Fatalf("complete %v, steps %d, step reason %q: want the step incomplete, naming agent 1", f.Complete, len(f.Steps), f.Steps[0].Reason)
	}
	s := f.Steps[0]
	if len(s.Agents) != 2 || s.Agents[1].Complete || s.Agents[1].Transactions == 0 || s.Agents[0].Transactions == 0 {
		t.Errorf("agents %+v: want both with their transactions, agent 1 incomplete", s.Agents)
	}
	if n := exec1(t, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pgscale' AND client_addr IS NOT NULL"); strings.TrimSpace(n) != "0" {
		t.Errorf("%s client connections left on the server", strings.TrimSpace(n))
	}
}

// intervals counts the measured intervals (warm-up left out) agent idx
// has sent in coordination database coord.
func intervals(t *testing.T, coord string, idx int) int {
	t.Helper()
	ctx := context.Background()
	c, err := pgconn.Connect(ctx, coord)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	res, err := c.Exec(ctx, fmt.Sprintf("SELECT count(*) FROM pgscale_agent_intervals WHERE idx = %d AND NOT coalesce((body->>'warmup')::bool, false)", idx)).ReadAll()
	if err != nil || len(res) == 0 || len(res[0].Rows) == 0 {
		return 0 // the schema may not be there yet
	}
	var n int
	fmt.Sscan(string(res[0].Rows[0][0]), &n)
	return n
}

// An agent that never comes: the run fails before measuring, in one line
// naming its index, and writes no result file; the agent that came stops.
func TestMissingAgent(t *testing.T) {
	testenv.Slow(t)
	coord := coordination(t, "coord_missing")
	a0 := startAgent(t, coord, 0, "missing")
	out := filepath.Join(t.TempDir(), "missing.json")
	code, stdout, stderr := pgscale("run", "--dsn", targetDSN(), "-c", "2", "-T", "2", "--agents", "2", "--coordinator", coord,
		"--agents-job", "missing", "--agents-timeout", "2s", "--out", out)
	t.Logf("stderr:\n%s", stderr)
	if code != 3 {
		t.Errorf("run exited %d, want 3", code)
	}
	var errLines []string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if strings.HasPrefix(l, "pgscale:") {
			errLines = append(errLines, l)
		}
	}
	if len(errLines) != 1 || !strings.Contains(errLines[0], "agent 1 did not join") {
		t.Errorf("error lines %q: want one, naming agent 1", errLines)
	}
	if strings.Contains(stdout, "step 1") || strings.Contains(stderr, "step 1/") {
		t.Errorf("something was measured:\n%s", stdout)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a result file was written for a run that measured nothing")
	}
	if c := a0.wait(t, 10*time.Second); c != 3 {
		t.Errorf("agent 0 exited %d, want 3:\n%s", c, a0.output())
	}
}

// Ctrl-C on the coordinator (a process of its own here) stops every agent:
// the run writes what it measured, marked interrupted, and every process
// exits 3.
func TestInterruptStopsEveryAgent(t *testing.T) {
	testenv.Slow(t)
	coord := coordination(t, "coord_int")
	a0 := startAgent(t, coord, 0, "int")
	a1 := startAgent(t, coord, 1, "int")
	out := filepath.Join(t.TempDir(), "int.json")
	run := exec.Command(os.Args[0], "run", "--dsn", targetDSN(), "-c", "2", "-T", "30", "--agents", "2", "--coordinator", coord,
		"--agents-job", "int", "--out", out)
	var b bytes.Buffer
	run.Stdout, run.Stderr = &b, &b
	run.Env = append(os.Environ(), execAgent+"=1")
	run.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	defer run.Process.Kill()
	deadline := time.Now().Add(30 * time.Second)
	for intervals(t, coord, 0) < 1 || intervals(t, coord, 1) < 1 {
		if time.Now().After(deadline) {
			t.Fatal("no interval in 30 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	run.Process.Signal(os.Interrupt)
	exited := make(chan struct{})
	go func() { run.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(15 * time.Second):
		t.Fatalf("the coordinator did not stop within 15 s of Ctrl-C:\n%s", b.String())
	}
	if c := run.ProcessState.ExitCode(); c != 3 {
		t.Errorf("coordinator exited %d, want 3:\n%s", c, b.String())
	}
	for i, a := range []*proc{a0, a1} {
		if c := a.wait(t, 10*time.Second); c != 3 || !strings.Contains(a.output(), "interrupted") {
			t.Errorf("agent %d exited %d, want 3 saying the run was interrupted:\n%s", i, c, a.output())
		}
	}
	f, err := result.Read(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if f.Complete || f.Reason != "interrupted" || len(f.Steps) != 1 || f.Steps[0].Summary.Transactions == 0 {
		t.Errorf("complete %v, reason %q, %d steps: want one step, with transactions, interrupted", f.Complete, f.Reason, len(f.Steps))
	}
}

// With no --dsn the run's own ephemeral cluster listens on 127.0.0.1 and
// lets every loopback address in, and the agents get its address.
func TestAgentsOnEphemeralTarget(t *testing.T) {
	testenv.Slow(t) // an agent process, the coordinator's database and a cluster of the run's own
	coord := coordination(t, "coord_eph")
	a0 := startAgent(t, coord, 0, "eph")
	out := filepath.Join(t.TempDir(), "eph.json")
	code, stdout, stderr := pgscale("run", "-c", "2", "-T", "1", "--agents", "1", "--coordinator", coord, "--agents-job", "eph",
		"--out", out, "--no-probes")
	if code != 0 {
		t.Fatalf("run exited %d\nstdout:\n%s\nstderr:\n%s\nagent:\n%s", code, stdout, stderr, a0.output())
	}
	if c := a0.wait(t, 10*time.Second); c != 0 {
		t.Errorf("agent exited %d:\n%s", c, a0.output())
	}
	f, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if f.Target.Kind != "ephemeral" || f.Steps[0].Summary.Transactions == 0 || f.Steps[0].Agents[0].SourceAddress != "127.0.0.11" {
		t.Errorf("target %s, %d transactions, agents %+v", f.Target.Kind, f.Steps[0].Summary.Transactions, f.Steps[0].Agents)
	}
}

// Mistakes are usage errors (exit 2) in one line, before anything starts;
// what ab cannot do on agents (slices, a pooler it starts, counting) is
// refused saying why.
func TestAgentsUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--agents", "2"}, "--agents needs --coordinator"},
		{[]string{"run", "--agents", "2", "--coordinator", "host=/nowhere", "--pooler", "pgbouncer"}, "--agents and --pooler"},
		{[]string{"run", "--agents", "2", "--coordinator", "host=/nowhere", "--source-address", "127.0.0.11"}, "give each agent its own --source-address"},
		{[]string{"run", "--source-address", "nowhere"}, "is not an IP address"},
		{[]string{"ab", "--target", "a=settings:", "--target", "b=settings:", "--agents", "2"}, "--agents needs --coordinator"},
		{[]string{"ab", "--target", "a=settings:", "--target", "b=settings:", "--agents", "2", "--coordinator", "host=/nowhere", "--slice", "0.1"}, "--agents runs whole-step turns"},
		{[]string{"ab", "--target", "a=settings:", "--target", "b=settings:", "--agents", "2", "--coordinator", "host=/nowhere", "--agents-dsn", "host=x"}, "--agents-dsn names one target"},
		{[]string{"ab", "--target", "a=settings:", "--target", "b=pgbouncer:", "--agents", "2", "--coordinator", "host=/nowhere"}, "cannot reach a pooler or proxy pgscale starts"},
		{[]string{"ab", "--target", "a=settings:", "--target", "b=settings:", "-t", "10", "--count", "instructions", "--agents", "2", "--coordinator", "host=/nowhere"}, "--agents and --count instructions"},
		{[]string{"suite", "--preset", "fastpath", "--agents", "2"}, "--agents needs --coordinator"},
		{[]string{"agent", "--coordinator", "host=/nowhere"}, "give the agent's index"},
		{[]string{"agent", "--index", "0"}, "an agent needs --coordinator"},
		{[]string{"agent", "--index", "0", "--coordinator", "host=/nowhere", "--source-address", "x"}, "is not an IP address"},
		{[]string{"agent", "--manifest", "--agents", "2", "--image", "i"}, "--secret"},
	} {
		os.Unsetenv("JOB_COMPLETION_INDEX")
		os.Unsetenv("PGSCALE_COORDINATOR")
		code, _, stderr := pgscale(c.args...)
		if code != cli.ExitUsage || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line saying %q", c.args, code, stderr, c.want)
		}
	}
}

// agentsScript is a workload that fails unless the agents' own source
// addresses reach the server (a client from anywhere else divides by zero
// and aborts the step), and sleeps 10 ms in a session with work_mem 8MB:
// target b's transactions are the slow ones only if its settings reached
// the agents' sessions.
const agentsScript = `SELECT 1 / (host(inet_client_addr()) IN ('127.0.0.11', '127.0.0.12'))::int, pg_sleep(CASE WHEN current_setting('work_mem') = '8MB' THEN 0.01 ELSE 0 END);
`

// checkTurns checks one target's result file of an A/B run on two agents:
// every step lists both agents, whose transactions add up to the step's,
// as its merged histogram does; each agent's own file holds its share;
// and the steps' mean latency says whether the target's sessions slept.
func checkTurns(t *testing.T, path string, rounds int, slow bool) {
	t.Helper()
	f, err := result.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Complete || len(f.Steps) != rounds || len(f.Agents) != 2 || f.Coordination == nil {
		t.Fatalf("%s: complete %v (%s), %d steps, agents %+v, coordination %+v", path, f.Complete, f.Reason, len(f.Steps), f.Agents, f.Coordination)
	}
	var own [2]int64
	for _, s := range f.Steps {
		h, err := metrics.DecodeHistogram(s.Histogram)
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		for i, a := range s.Agents {
			sum += a.Transactions
			own[i] += a.Transactions
			if a.SourceAddress != fmt.Sprintf("127.0.0.%d", 11+i) || a.Transactions == 0 {
				t.Errorf("%s round %d, agent %d: %+v", path, s.Round, i, a)
			}
		}
		if len(s.Agents) != 2 || sum != s.Summary.Transactions || h.TotalCount() != sum || sum == 0 {
			t.Errorf("%s round %d: agents %+v add up to %d, histogram %d, summary %d: want 2 agents, all equal", path, s.Round,
				s.Agents, sum, h.TotalCount(), s.Summary.Transactions)
		}
		if mean := s.Summary.Latency.MeanMs; slow != (mean >= 10) {
			t.Errorf("%s round %d: mean latency %.3f ms: the target's work_mem did not reach the agents' sessions as it should", path, s.Round, mean)
		}
	}
	for i, a := range f.Agents {
		af, err := result.Read(filepath.Join(filepath.Dir(path), a.File))
		if err != nil {
			t.Errorf("agent %d's file: %v", i, err)
			continue
		}
		var n int64
		for _, s := range af.Steps {
			n += s.Summary.Transactions
		}
		if len(af.Steps) != rounds || n != own[i] || a.Transactions != own[i] {
			t.Errorf("%s: agent %d's file holds %d steps, %d transactions; the target's file says %d (%d)", path, i, len(af.Steps), n, own[i], a.Transactions)
		}
	}
}

// An A/B run of two settings targets on clusters of their own, on two
// agent processes: each target's turn runs on the agents, every step lists
// them and adds up, and the clients reached each target's server from the
// agents' addresses with the target's settings.
func TestABOnAgents(t *testing.T) {
	testenv.Slow(t)
	coord := coordination(t, "coord_ab")
	a0 := startAgent(t, coord, 0, "ab")
	a1 := startAgent(t, coord, 1, "ab")
	dir := t.TempDir()
	script := filepath.Join(dir, "agents.sql")
	if err := os.WriteFile(script, []byte(agentsScript), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "ab")
	began := time.Now()
	code, stdout, stderr := pgscale("ab", "--target", "a=settings:", "--target", "b=settings:work_mem=8MB", "--separate-clusters",
		"--reshuffle", "0", "-c", "2", "-T", "1", "--warmup", "0", "--rounds", "2", "-f", script, "--agents", "2", "--coordinator", coord,
		"--agents-job", "ab", "--agents-timeout", "60s", "--out", out)
	t.Logf("ab on 2 agents: %.1f s\nstderr:\n%s", time.Since(began).Seconds(), stderr)
	if code != 0 {
		t.Fatalf("ab exited %d\nstdout:\n%s\nagent 0:\n%s\nagent 1:\n%s", code, stdout, a0.output(), a1.output())
	}
	for i, a := range []*proc{a0, a1} {
		if c := a.wait(t, 20*time.Second); c != 0 {
			t.Errorf("agent %d exited %d:\n%s", i, c, a.output())
		}
	}
	checkTurns(t, filepath.Join(out, "a.json"), 2, false)
	checkTurns(t, filepath.Join(out, "b.json"), 2, true)
}

// A suite's cells are A/B runs on the same agents, which join once: here
// two cells over a settings target on its baseline's cluster, its work_mem
// set per session, which the agents' sessions get too.
func TestSuiteOnAgents(t *testing.T) {
	testenv.Slow(t)
	coord := coordination(t, "coord_suite")
	a0 := startAgent(t, coord, 0, "suite")
	a1 := startAgent(t, coord, 1, "suite")
	dir := t.TempDir()
	src := `name: on-agents
targets: ["a=settings:", "b=settings:work_mem=8MB"]
matrix:
  protocol: [simple, extended]
scripts:
  - sql: |
      ` + strings.TrimSpace(agentsScript) + `
clients: [2]
duration: 1s
warmup: 0s
rounds: 2
probes: false
`
	file := filepath.Join(dir, "agents.yaml")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "suite")
	began := time.Now()
	code, stdout, stderr := pgscale("suite", file, "--agents", "2", "--coordinator", coord, "--agents-job", "suite",
		"--agents-timeout", "60s", "--out", out)
	t.Logf("suite on 2 agents: %.1f s\nstderr:\n%s", time.Since(began).Seconds(), stderr)
	if code != 0 {
		t.Fatalf("suite exited %d\nstdout:\n%s\nagent 0:\n%s\nagent 1:\n%s", code, stdout, a0.output(), a1.output())
	}
	for i, a := range []*proc{a0, a1} {
		if c := a.wait(t, 20*time.Second); c != 0 {
			t.Errorf("agent %d exited %d:\n%s", i, c, a.output())
		}
	}
	x, err := result.ReadSuiteIndex(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Cells) != 2 {
		t.Fatalf("%d cells", len(x.Cells))
	}
	for _, c := range x.Cells {
		if c.Status != result.CellComplete {
			t.Errorf("cell %s: %s %s", c.Key, c.Status, c.Reason)
			continue
		}
		checkTurns(t, filepath.Join(out, c.Dir, "a.json"), 2, false)
		checkTurns(t, filepath.Join(out, c.Dir, "b.json"), 2, true)
	}
}
