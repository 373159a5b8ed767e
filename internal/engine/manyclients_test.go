package engine_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/engine"
	"github.com/pgscale/pgscale/internal/load"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/target/targettest"
	"github.com/pgscale/pgscale/internal/testenv"
)

// childDSN, set in the environment, makes the test binary a child that runs
// one step (TestHelperManyClients) and reports its own peak memory: the
// parent's memory holds whatever the other tests left.
const childDSN = "PGSCALE_ENGINE_CHILD_DSN"

// startPgBouncer starts a pgbouncer in front of the package's cluster and
// stops it when the test ends, failed or not.
func startPgBouncer(t *testing.T, clients int, settings ...target.Setting) *target.PgBouncer {
	t.Helper()
	targettest.NeedPgBouncer(t)
	server, err := target.ParseDSN(cluster.ConnString("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := target.StartPgBouncer(ctx, target.PgBouncerOptions{Server: server, Clients: clients, Settings: settings})
	if p != nil {
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("pgbouncer log: %s", p.Log(20))
			}
			p.Stop()
		})
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func poolerConfig(t *testing.T, p *target.PgBouncer, extra string) *pgconn.Config {
	t.Helper()
	cfg, err := pgconn.ParseConfig(p.ConnString("postgres") + " " + extra)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// childReport is what the child step prints for its parent.
type childReport struct {
	Transactions, Failed int64
	Aborted              int
	Errors               []string
	Err                  string
	IO                   string
	ElapsedS, ConnectS   float64
	PeakRSSKiB           int64
	MaxThreads           int
}

// procStatus reads one number (kB for sizes) from /proc/self/status.
func procStatus(key string) int64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, key+":"); ok {
			n, _ := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			return n
		}
	}
	return -1
}

// TestHelperManyClients is the child's step: not a test of its own.
func TestHelperManyClients(t *testing.T) {
	dsn := os.Getenv(childDSN)
	if dsn == "" {
		t.Skip("runs as the child of TestManyClientsThroughPgBouncer")
	}
	clients, _ := strconv.Atoi(os.Getenv("PGSCALE_ENGINE_CHILD_CLIENTS"))
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	var maxThreads int
	var mu sync.Mutex
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			n := int(procStatus("Threads"))
			mu.Lock()
			maxThreads = max(maxThreads, n)
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	r, err := engine.Run(context.Background(), engine.Config{Settings: load.Settings{Duration: 2 * time.Second, MaxTries: 1}, Conn: cfg, Program: program(t, clients, "select-only"), Clients: clients, Protocol: engine.Extended})
	close(stop)
	<-sampled
	rep := childReport{PeakRSSKiB: procStatus("VmHWM"), MaxThreads: maxThreads}
	if err != nil {
		rep.Err = err.Error()
	}
	if r != nil {
		rep.Transactions, rep.Failed, rep.Aborted = r.Total.Transactions, r.Total.FailedTotal(), r.Aborted
		rep.IO, rep.ElapsedS, rep.ConnectS = r.IO.String(), r.Elapsed.Seconds(), r.ConnectElapsed.Seconds()
		for _, e := range r.Errors {
			rep.Errors = append(rep.Errors, fmt.Sprintf("%d× %s", e.Count, e.Msg))
		}
	}
	b, _ := json.Marshal(rep)
	fmt.Printf("CHILD-REPORT %s\n", b)
}

// 2 000 clients through pgbouncer in transaction mode complete a short run
// with no failure, in bounded memory and threads: at most 64 KiB per client
// above a fixed base (a latency histogram per client made it 370 KiB), and
// no more OS threads than a few per CPU, whatever the client count.
func TestManyClientsThroughPgBouncer(t *testing.T) {
	testenv.Slow(t)
	const clients = 2000
	p := startPgBouncer(t, clients, target.Setting{Name: "pool_mode", Value: "transaction"},
		target.Setting{Name: "default_pool_size", Value: "8"})
	cmd := osexec.Command(os.Args[0], "-test.run=^TestHelperManyClients$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), childDSN+"="+p.ConnString("postgres"), "PGSCALE_ENGINE_CHILD_CLIENTS="+strconv.Itoa(clients))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s%s", err, out, stderr.Bytes())
	}
	var rep childReport
	sc := bufio.NewScanner(bytes.NewReader(out))
	found := false
	for sc.Scan() {
		if js, ok := strings.CutPrefix(sc.Text(), "CHILD-REPORT "); ok {
			found = json.Unmarshal([]byte(js), &rep) == nil
		}
	}
	if !found {
		t.Fatalf("child printed no report:\n%s", out)
	}
	t.Logf("%d clients: %d transactions in %.1f s, connected in %.2f s, io %s, peak RSS %d KiB, at most %d threads",
		clients, rep.Transactions, rep.ElapsedS, rep.ConnectS, rep.IO, rep.PeakRSSKiB, rep.MaxThreads)
	if rep.Err != "" || rep.Failed != 0 || rep.Aborted != 0 || rep.Transactions < clients {
		t.Fatalf("run: err %q, %d transactions, %d failed, %d aborted; errors %v", rep.Err, rep.Transactions, rep.Failed, rep.Aborted, rep.Errors)
	}
	if rep.ConnectS <= 0 {
		t.Errorf("initial connection time %v s: want it measured", rep.ConnectS)
	}
	if rep.ElapsedS > 2.5 {
		t.Errorf("measured window %.2f s for a 2 s step: the connection phase counted in it?", rep.ElapsedS)
	}
	// The race detector's shadow memory multiplies the heap several times.
	base, perClient := int64(64<<10), int64(64) // KiB
	if raceEnabled {
		base, perClient = 512<<10, 320
	}
	if bound := base + perClient*clients; rep.PeakRSSKiB <= 0 || rep.PeakRSSKiB > bound {
		t.Errorf("peak RSS %d KiB for %d clients, want at most %d KiB (%d MiB + %d KiB per client)",
			rep.PeakRSSKiB, clients, bound, base>>10, perClient)
	}
	if bound := 4*runtime.NumCPU() + 32; rep.MaxThreads <= 0 || rep.MaxThreads > bound {
		t.Errorf("%d OS threads for %d clients, want at most %d", rep.MaxThreads, clients, bound)
	}
}

// A pooler killed mid-run ends the step with an error naming the cause, no
// hang; what was measured before is kept, and nothing is left running.
func TestPoolerKilledMidRun(t *testing.T) {
	testenv.Slow(t)
	p := startPgBouncer(t, 50, target.Setting{Name: "pool_mode", Value: "transaction"})
	pid := p.PID()
	time.AfterFunc(700*time.Millisecond, p.Kill)
	goroutines := runtime.NumGoroutine()
	t0 := time.Now()
	r, err := engine.Run(context.Background(), engine.Config{Settings: load.Settings{Duration: time.Minute, MaxTries: 1}, Conn: poolerConfig(t, p, ""), Program: program(t, 50, "select-only"), Clients: 50, Protocol: engine.Simple, ReconnectTimeout: time.Second})
	took := time.Since(t0)
	if !errors.Is(err, engine.ErrAllClientsFailed) || !strings.Contains(err.Error(), "no server is listening") {
		t.Fatalf("err = %v, want every client failed, naming the pooler gone", err)
	}
	// Its address was right: the fix says it stopped, not to fix host/port.
	if !strings.Contains(err.Error(), "succeeded earlier in the step") || strings.Contains(err.Error(), "host/port") {
		t.Errorf("err = %v, want it said that the pooler stopped, not that its address is wrong", err)
	}
	if took > 15*time.Second {
		t.Errorf("took %v to give up on a dead pooler", took)
	}
	if r == nil || r.Incomplete == "" || r.Total.Transactions == 0 || len(r.Series) == 0 {
		t.Fatalf("result %+v: want the transactions before the kill, marked incomplete", r)
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if syscall.Kill(pid, 0) == nil {
		t.Errorf("pgbouncer %d still runs", pid)
	}
	if left := targettest.ProcessesInGroup(pid); len(left) > 0 {
		t.Errorf("processes left in pgbouncer's group: %v", left)
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > goroutines+2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > goroutines+2 {
		t.Errorf("%d goroutines after the step, %d before: clients left running", n, goroutines)
	}
	if got := exec(t, "SELECT 1"); got != "1" {
		t.Errorf("the server behind the pooler: SELECT 1 = %q", got)
	}
}

// When no client can connect, the step ends at once (nothing listens
// there: no retries) with a result that says why and holds empty series,
// not nil ones, so it can still be written.
func TestNoClientConnects(t *testing.T) {
	cfg, err := pgconn.ParseConfig("host=" + t.TempDir() + " port=5432 user=postgres dbname=postgres")
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	r, err := engine.Run(context.Background(), engine.Config{Settings: load.Settings{Duration: time.Second, MaxTries: 1}, Conn: cfg, Program: program(t, 20, "select-only"), Clients: 20})
	if err == nil || !strings.Contains(err.Error(), "no server is listening") {
		t.Fatalf("err = %v, want the cause named", err)
	}
	if took := time.Since(t0); took > 5*time.Second {
		t.Errorf("took %v to fail where nothing listens", took)
	}
	if r == nil {
		t.Fatal("no result")
	}
	if !strings.Contains(r.Incomplete, "could not connect") || !strings.Contains(r.Incomplete, "no server is listening") || strings.Contains(r.Incomplete, "\n") {
		t.Errorf("incomplete reason %q: want one line with the cause", r.Incomplete)
	}
	if r.Series == nil || len(r.Series) != 0 || r.Slices == nil || r.Errors == nil {
		t.Errorf("series %#v, slices %#v, errors %#v: want empty, not nil", r.Series, r.Slices, r.Errors)
	}
	if len(r.Errors) != 1 || r.Errors[0].Count != 1 {
		t.Errorf("errors %+v: want the one connection failure", r.Errors)
	}
	if r.Total == nil || r.Total.Latency == nil || r.Total.Transactions != 0 {
		t.Errorf("total %+v: want an empty interval", r.Total)
	}
}

// A pooler with no room for more clients refuses them; the refusal is
// retried until the connect timeout, then the step fails naming it.
func TestRefusedUntilTimeout(t *testing.T) {
	testenv.Slow(t)
	p := startPgBouncer(t, 0, target.Setting{Name: "max_client_conn", Value: "5"})
	t0 := time.Now()
	r, err := engine.Run(context.Background(), engine.Config{Settings: load.Settings{Duration: time.Second, MaxTries: 1}, Conn: poolerConfig(t, p, "connect_timeout=1"), Program: program(t, 10, "select-only"), Clients: 10, Protocol: engine.Simple})
	took := time.Since(t0)
	if err == nil || !strings.Contains(err.Error(), "no more connections allowed") || !strings.Contains(err.Error(), "still refused after") {
		t.Fatalf("err = %v, want pgbouncer's refusal, retried", err)
	}
	if took < 900*time.Millisecond || took > 5*time.Second {
		t.Errorf("gave up after %v, want about the 1 s connect timeout", took)
	}
	if r == nil || r.Incomplete == "" {
		t.Errorf("result %+v: want it marked incomplete", r)
	}
}

// Connections refused because the pooler's listen queue is full (a unix
// socket's connect fails with EAGAIN) are retried: with pgbouncer stopped
// until the first progress report (250 ms into the phase) and a listen
// queue of 4, 100 clients 50 at a time all connect. Progress is reported
// along the way and at the end.
func TestConnectRampWaitsOutAFullQueue(t *testing.T) {
	testenv.Slow(t)
	p := startPgBouncer(t, 100, target.Setting{Name: "listen_backlog", Value: "4"})
	pid := p.PID()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	var resume sync.Once
	cont := func() { resume.Do(func() { syscall.Kill(pid, syscall.SIGCONT) }) }
	t.Cleanup(cont)
	var seen [][2]int // ConnectProgress is called from one goroutine
	r, err := engine.Run(context.Background(), engine.Config{Settings: load.Settings{Duration: 300 * time.Millisecond, ConnectConcurrency: 50, MaxTries: 1}, Conn: poolerConfig(t, p, ""), Program: program(t, 100, "select-only"), Clients: 100, Protocol: engine.Simple, ConnectProgress: func(connected, total int) {
		seen = append(seen, [2]int{connected, total})
		cont()
	}})
	cont()
	if err != nil {
		t.Fatalf("engine.Run: %v (errors %v)", err, r.Errors)
	}
	if r.ConnectElapsed < engine.ConnectProgressEvery {
		t.Errorf("initial connection time %v, but the pooler was stopped until the first progress report", r.ConnectElapsed)
	}
	if r.ConnectMean <= 0 || r.ConnectMean > r.ConnectElapsed {
		t.Errorf("mean connection time %v, phase %v", r.ConnectMean, r.ConnectElapsed)
	}
	if r.Total.Transactions == 0 || r.Total.FailedTotal() != 0 {
		t.Errorf("%d transactions, %d failed", r.Total.Transactions, r.Total.FailedTotal())
	}
	if len(seen) < 2 || seen[0] != [2]int{0, 100} || seen[len(seen)-1] != [2]int{100, 100} {
		t.Fatalf("progress calls %v: want 0 of 100 while the pooler was stopped, 100 of 100 at the end", seen)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i][0] < seen[i-1][0] {
			t.Errorf("progress went back: %v", seen)
		}
	}
}

// Raw I/O holds an OS thread per client: beyond its limit it is refused,
// and auto picks the netpoller.
func TestRawIOLimit(t *testing.T) {
	_, err := engine.Run(context.Background(), engine.Config{Settings: load.Settings{Duration: time.Second, IO: "raw", MaxTries: 1}, Conn: connConfig(t), Program: program(t, 1, "select-only"), Clients: engine.RawLimit + 1})
	if err == nil || !strings.Contains(err.Error(), "raw I/O") {
		t.Errorf("raw I/O for %d clients: err %v, want a refusal", engine.RawLimit+1, err)
	}
}
