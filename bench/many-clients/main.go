// Command many-clients runs pgbench and pgscale side by side through a
// pgbouncer at thousands of clients: it starts an ephemeral cluster and a
// pgbouncer in front of it (transaction pooling), then runs both tools
// interleaved at each client count and prints per count the TPS of each and
// the ratio, each load generator's CPU per transaction (user + system of the
// process, from the kernel), its peak RSS (from the kernel, at exit) and
// most OS threads (sampled every 50 ms), the initial connection time and the
// failures. Where pgbench cannot run a count it says so, and reports
// pgscale alone.
//
//	go run ./bench/many-clients -c 1000,2500,5000,10000 -T 10
//
// Both tools get the hard open-files limit (pgbench through the shell's
// ulimit, as pgscale raises its own). Throughput on a shared or small
// machine says little: read memory and threads, which do not depend on the
// neighbours, and measure throughput on a quiet machine.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pgscale/pgscale/bench/internal/benchkit"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/target"
)

func main() {
	clients := flag.String("c", "1000,2500,5000,10000", "client counts")
	dur := flag.Int("T", 10, "seconds per run")
	rounds := flag.Int("rounds", 1, "interleaved rounds per count")
	poolSize := flag.Int("pool-size", 8, "pgbouncer default_pool_size (server connections)")
	proto := flag.String("M", "simple", "protocol for both tools (pgbouncer 1.18 in transaction mode cannot pool prepared statements)")
	bin := flag.String("pgscale", "", "pgscale binary (default: build it)")
	extra := flag.String("pgscale-args", "--no-probes", "extra pgscale run arguments")
	flag.Parse()
	if err := run(*clients, *dur, *rounds, *poolSize, *proto, *bin, *extra); err != nil {
		fmt.Fprintln(os.Stderr, "many-clients:", err)
		os.Exit(1)
	}
}

// outcome is one tool's run at one client count.
type outcome struct {
	ran        bool   // the tool measured something
	why        string // when it did not, or failed: the reason, one line
	tps        float64
	failed     int64
	conn       time.Duration // initial connection time: the connection phase's wall time (both tools)
	peakRSSKiB int64
	maxThreads int
	cpu        time.Duration // the process's user + system time, from wait4
	// cpuPerTxnUS is the load generator's CPU per transaction (the whole
	// process, connection phase included, as bench/vs-pgbench counts it);
	// 0 when unknown.
	cpuPerTxnUS float64
}

func (o *outcome) setTransactions(n int64) {
	if n > 0 {
		o.cpuPerTxnUS = float64(o.cpu.Microseconds()) / float64(n)
	}
}

func run(clientList string, dur, rounds, poolSize int, proto, bin, extra string) error {
	ns, err := benchkit.Clients(clientList)
	if err != nil {
		return err
	}
	maxN := 0
	for _, n := range ns {
		maxN = max(maxN, n)
	}
	ws, err := benchkit.Open("many-clients", bin)
	if err != nil {
		return err
	}
	defer ws.Close()
	tmp, bin := ws.Dir, ws.Pgscale
	ctx := context.Background()
	c, err := benchkit.StartCluster(ctx, target.Options{MaxConnections: poolSize + 16}, 1)
	if err != nil {
		return err
	}
	defer c.Stop()
	if err := benchkit.InitData(ctx, c.ConnString("postgres"), 1); err != nil {
		return err
	}
	server, err := target.ParseDSN(c.ConnString("postgres"))
	if err != nil {
		return err
	}
	pb, err := target.StartPgBouncer(ctx, target.PgBouncerOptions{Server: server, Clients: maxN,
		Settings: []target.Setting{{Name: "pool_mode", Value: "transaction"}, {Name: "default_pool_size", Value: strconv.Itoa(poolSize)},
			// Thousands of log lines per run would cost the pooler, and so both tools, CPU.
			{Name: "log_connections", Value: "0"}, {Name: "log_disconnections", Value: "0"}}})
	if pb != nil {
		defer pb.Stop()
	}
	if err != nil {
		return err
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return err
	}
	dsn := pb.ConnString("postgres")
	pgbench := filepath.Join(c.BinDir, "pgbench")
	fmt.Fprintf(os.Stderr, "pgbouncer %s (pid %d), transaction pooling, %d server connections; open-files limit %d\n",
		pb.Version, pb.PID(), poolSize, lim.Max)

	res := map[string]map[int][]outcome{"pgbench": {}, "pgscale": {}}
	for _, n := range ns {
		for r := 1; r <= rounds; r++ {
			order := []string{"pgbench", "pgscale"}
			if r%2 == 0 {
				order = []string{"pgscale", "pgbench"}
			}
			for _, tool := range order {
				var o outcome
				t0 := time.Now()
				if tool == "pgbench" {
					o = runPgbench(pgbench, pb, lim.Max, proto, n, dur)
				} else {
					o = runPgscale(bin, dsn, filepath.Join(tmp, "r.json"), extra, proto, n, dur)
				}
				res[tool][n] = append(res[tool][n], o)
				status := fmt.Sprintf("%9.0f tps, %5.1f µs cpu/txn, %d failed", o.tps, o.cpuPerTxnUS, o.failed)
				if !o.ran || o.why != "" {
					status = "did not run: " + o.why
				}
				fmt.Fprintf(os.Stderr, "c=%d round %d %-7s %s; peak RSS %d MiB, %d threads (%.1f s)\n",
					n, r, tool, status, o.peakRSSKiB>>10, o.maxThreads, time.Since(t0).Seconds())
			}
		}
	}

	fmt.Printf("select-only -M %s through pgbouncer %s (transaction pooling, default_pool_size %d), %d s per run, %d round%s per count, pgbench -j %d, %d CPUs\n\n",
		proto, pb.Version, poolSize, dur, rounds, plural(rounds), runtime.NumCPU(), runtime.NumCPU())
	fmt.Println("| clients | pgbench tps | pgscale tps | TPS ratio | pgbench cpu/txn | pgscale cpu/txn | pgbench peak RSS | pgscale peak RSS | pgbench threads | pgscale threads | pgbench initial connection | pgscale initial connection | pgbench failed | pgscale failed |")
	fmt.Println("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	var notes []string
	for _, n := range ns {
		a, b := summarize(res["pgbench"][n]), summarize(res["pgscale"][n])
		ratio := "—"
		if a.ran && b.ran && a.tps > 0 {
			ratio = fmt.Sprintf("%.2f", b.tps/a.tps)
		}
		fmt.Printf("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", n,
			tpsCell(a), tpsCell(b), ratio, cpuCell(a), cpuCell(b), rssCell(a, n), rssCell(b, n), threadsCell(a), threadsCell(b),
			connCell(a), connCell(b), failCell(a), failCell(b))
		for tool, o := range map[string]outcome{"pgbench": a, "pgscale": b} {
			if o.why != "" {
				notes = append(notes, fmt.Sprintf("%d clients, %s: %s", n, tool, o.why))
			}
		}
	}
	sort.Strings(notes)
	if len(notes) > 0 {
		fmt.Println()
		for _, s := range notes {
			fmt.Println("- " + s)
		}
	}
	return nil
}

// summarize folds a count's rounds: median TPS and connection time, the
// largest memory and thread count, all failures; a round that did not run
// makes the count's figures those of the rounds that did.
func summarize(os []outcome) outcome {
	var s outcome
	var tps, conn, cpu []float64
	for _, o := range os {
		if o.why != "" && s.why == "" {
			s.why = o.why
		}
		s.peakRSSKiB = max(s.peakRSSKiB, o.peakRSSKiB)
		s.maxThreads = max(s.maxThreads, o.maxThreads)
		if !o.ran {
			continue
		}
		s.ran = true
		s.failed += o.failed
		tps = append(tps, o.tps)
		conn = append(conn, float64(o.conn))
		cpu = append(cpu, o.cpuPerTxnUS)
	}
	if s.ran {
		s.tps = median(tps)
		s.conn = time.Duration(median(conn))
		s.cpuPerTxnUS = median(cpu)
	}
	return s
}

func tpsCell(o outcome) string {
	if !o.ran {
		return "could not run"
	}
	return fmt.Sprintf("%.0f", o.tps)
}

func cpuCell(o outcome) string {
	if !o.ran || o.cpuPerTxnUS <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f µs", o.cpuPerTxnUS)
}

func rssCell(o outcome, n int) string {
	if o.peakRSSKiB <= 0 {
		return "—"
	}
	return fmt.Sprintf("%d MiB (%d KiB/client)", o.peakRSSKiB>>10, o.peakRSSKiB/int64(n))
}

func threadsCell(o outcome) string {
	if o.maxThreads <= 0 {
		return "—"
	}
	return strconv.Itoa(o.maxThreads)
}

func connCell(o outcome) string {
	if !o.ran {
		return "—"
	}
	return fmt.Sprintf("%.0f ms", float64(o.conn.Microseconds())/1000)
}

func failCell(o outcome) string {
	if !o.ran {
		return "—"
	}
	return strconv.FormatInt(o.failed, 10)
}

var (
	pgbenchTPS     = regexp.MustCompile(`tps = ([0-9.]+)`)
	pgbenchConn    = regexp.MustCompile(`initial connection time = ([0-9.]+) ms`)
	pgbenchFailed  = regexp.MustCompile(`number of failed transactions: ([0-9]+)`)
	pgbenchTxns    = regexp.MustCompile(`number of transactions actually processed: ([0-9]+)`)
	pgbenchAborted = regexp.MustCompile(`(?m)^.*(could not create connection|Run was aborted|too many|connection to server).*$`)
)

// runPgbench runs pgbench with -j = CPUs, its open-files limit raised to
// limit (pgbench does not raise its own).
func runPgbench(pgbench string, pb *target.PgBouncer, limit uint64, proto string, n, dur int) outcome {
	j := min(runtime.NumCPU(), n)
	cmd := exec.Command("/bin/sh", "-c", `ulimit -Sn "$1" || exit 1; shift; exec "$@"`, "sh", strconv.FormatUint(limit, 10),
		pgbench, "-n", "-S", "-M", proto, "-c", strconv.Itoa(n), "-j", strconv.Itoa(j), "-T", strconv.Itoa(dur))
	cmd.Env = benchkit.PgEnv(pb.SocketDir, pb.Port, pb.User)
	out, o, err := measure(cmd)
	if err != nil {
		o.why = "pgbench: " + lastMatch(out, pgbenchAborted, err)
	}
	if m := pgbenchTPS.FindSubmatch(out); m != nil && err == nil {
		o.ran = true
		o.tps, _ = strconv.ParseFloat(string(m[1]), 64)
		if m := pgbenchConn.FindSubmatch(out); m != nil {
			ms, _ := strconv.ParseFloat(string(m[1]), 64)
			o.conn = time.Duration(ms * float64(time.Millisecond))
		}
		if m := pgbenchFailed.FindSubmatch(out); m != nil {
			o.failed, _ = strconv.ParseInt(string(m[1]), 10, 64)
		}
		if m := pgbenchTxns.FindSubmatch(out); m != nil {
			n, _ := strconv.ParseInt(string(m[1]), 10, 64)
			o.setTransactions(n)
		}
	}
	return o
}

// runPgscale runs pgscale run against dsn and reads its result file.
func runPgscale(bin, dsn, out, extra, proto string, n, dur int) outcome {
	os.Remove(out)
	args := append([]string{"run", "--dsn", dsn, "-n", "-S", "-M", proto, "-c", strconv.Itoa(n), "-T", strconv.Itoa(dur), "-P", "0", "--out", out},
		strings.Fields(extra)...)
	stdout, o, err := measure(exec.Command(bin, args...))
	if err != nil {
		o.why = "pgscale: " + lastLine(stdout, err)
	}
	f, rerr := result.Read(out)
	if rerr != nil || len(f.Steps) == 0 {
		if o.why == "" {
			o.why = fmt.Sprintf("pgscale wrote no result (%v)", rerr)
		}
		return o
	}
	st := f.Steps[0]
	if st.Summary.Transactions > 0 {
		o.ran = true
	}
	o.tps = st.Summary.TPS
	o.failed = st.Summary.Failed
	o.setTransactions(st.Summary.Transactions)
	o.conn = time.Duration(st.Summary.InitialConnectMs * float64(time.Millisecond))
	return o
}

// measure runs cmd with its output captured, sampling its thread count
// every 50 ms; the peak RSS is the kernel's, from wait4.
func measure(cmd *exec.Cmd) ([]byte, outcome, error) {
	var o outcome
	var buf strings.Builder
	var mu sync.Mutex
	w := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return buf.Write(p) })
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		return nil, o, err
	}
	stop := make(chan struct{})
	sampled := make(chan int)
	go func() {
		most := 0
		for {
			most = max(most, threads(cmd.Process.Pid))
			select {
			case <-stop:
				sampled <- most
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	err := cmd.Wait()
	close(stop)
	o.maxThreads = <-sampled
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		o.peakRSSKiB = ru.Maxrss // KiB on Linux
	}
	o.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	mu.Lock()
	defer mu.Unlock()
	return []byte(buf.String()), o, err
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// threads returns the Threads: line of /proc/PID/status (0 once it is gone).
func threads(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "Threads:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(rest))
			return n
		}
	}
	return 0
}

func lastMatch(out []byte, re *regexp.Regexp, err error) string {
	if m := re.FindAll(out, -1); len(m) > 0 {
		return strings.TrimSpace(string(m[len(m)-1]))
	}
	return lastLine(out, err)
}

func lastLine(out []byte, err error) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return l
	}
	return err.Error()
}

func median(x []float64) float64 {
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
