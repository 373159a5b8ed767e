// Command vs-pgbench runs pgbench and pgscale side by side on one ephemeral
// cluster, interleaved (A B A B ...), and prints per client count the TPS
// ratio pgscale/pgbench and the ratio of the load generator's CPU per
// transaction (user+sys of each process, from the kernel), median and range
// over the rounds.
//
//	go run ./bench/vs-pgbench -rounds 3 -T 10 -c 1,2,4,8
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/bench/internal/benchkit"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/workload"
)

type sample struct{ tps, cpuPerTxnUS float64 }

func main() {
	rounds := flag.Int("rounds", 3, "interleaved rounds")
	dur := flag.Int("T", 10, "seconds per run")
	clients := flag.String("c", "1,2,4,8", "client counts")
	scale := flag.Int("s", 1, "scale")
	pgscaleBin := flag.String("pgscale", "", "pgscale binary (default: build it)")
	extra := flag.String("pgscale-args", "", "extra pgscale run arguments, e.g. --io netpoll")
	script := flag.String("f", "", "custom script for both tools instead of -S")
	proto := flag.String("M", "prepared", "protocol for both tools")
	tcp := flag.Bool("tcp", false, "connect over TCP instead of the unix socket")
	flag.Parse()
	if err := run(*rounds, *dur, *clients, *scale, *pgscaleBin, *extra, *script, *proto, *tcp); err != nil {
		fmt.Fprintln(os.Stderr, "vs-pgbench:", err)
		os.Exit(1)
	}
}

func run(rounds, dur int, clientList string, scale int, bin, extra, scriptFile, proto string, tcp bool) error {
	tmp, err := os.MkdirTemp("", "vs-pgbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if bin, err = benchkit.Pgscale(tmp, bin); err != nil {
		return err
	}
	ctx := context.Background()
	c, err := target.Start(ctx, target.Options{TCP: tcp, MaxConnections: 64, DataSizeHint: workload.DataBytes(scale)})
	if err != nil {
		return err
	}
	defer c.Stop()
	c.StopOnSignal()
	dsn := c.ConnString("postgres")
	if tcp {
		dsn = c.TCPConnString("postgres")
	}
	connect := func(ctx context.Context) (*pgconn.PgConn, error) { return pgconn.Connect(ctx, dsn) }
	if _, err := workload.Init(ctx, connect, workload.InitOptions{Scale: scale}, io.Discard); err != nil {
		return err
	}
	pgbench := filepath.Join(c.BinDir, "pgbench")
	env := append(os.Environ(), "PGHOST="+c.SocketDir, "PGPORT="+strconv.Itoa(c.Port), "PGUSER="+c.User, "PGDATABASE=postgres")
	if tcp {
		env = append(env, "PGHOST=127.0.0.1")
	}
	var ns []int
	for _, f := range strings.Split(clientList, ",") {
		n, err := strconv.Atoi(f)
		if err != nil {
			return err
		}
		ns = append(ns, n)
	}
	workloadArgs := []string{"-S"}
	if scriptFile != "" {
		abs, _ := filepath.Abs(scriptFile)
		workloadArgs = []string{"-f", abs}
	}
	res := map[string]map[int][]sample{"pgbench": {}, "pgscale": {}}
	tpsRE := regexp.MustCompile(`tps = ([0-9.]+)`)
	txRE := regexp.MustCompile(`number of transactions actually processed: ([0-9]+)`)
	for r := 1; r <= rounds; r++ {
		for _, n := range ns {
			order := []string{"pgbench", "pgscale"}
			if r%2 == 0 {
				order = []string{"pgscale", "pgbench"}
			}
			for _, tool := range order {
				var cmd *exec.Cmd
				out := filepath.Join(tmp, "r.json")
				if tool == "pgbench" {
					args := append([]string{"-n", "-M", proto, "-c", strconv.Itoa(n), "-j", strconv.Itoa(n), "-T", strconv.Itoa(dur)}, workloadArgs...)
					cmd = exec.Command(pgbench, args...)
				} else {
					args := append([]string{"run", "--dsn", dsn, "-n", "-M", proto, "-c", strconv.Itoa(n), "-T", strconv.Itoa(dur), "-P", "0", "--out", out}, workloadArgs...)
					args = append(args, strings.Fields(extra)...)
					cmd = exec.Command(bin, args...)
				}
				cmd.Env = env
				t0 := time.Now()
				o, err := cmd.CombinedOutput()
				if err != nil {
					return fmt.Errorf("%s: %v\n%s", tool, err, o)
				}
				cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
				var s sample
				if tool == "pgbench" {
					m, m2 := tpsRE.FindSubmatch(o), txRE.FindSubmatch(o)
					if m == nil || m2 == nil {
						return fmt.Errorf("cannot read pgbench output:\n%s", o)
					}
					s.tps, _ = strconv.ParseFloat(string(m[1]), 64)
					tx, _ := strconv.ParseFloat(string(m2[1]), 64)
					s.cpuPerTxnUS = float64(cpu.Microseconds()) / tx
				} else {
					f, err := result.Read(out)
					if err != nil {
						return err
					}
					st := f.Steps[0].Summary
					s.tps = st.TPS
					s.cpuPerTxnUS = float64(cpu.Microseconds()) / float64(st.Transactions)
				}
				res[tool][n] = append(res[tool][n], s)
				fmt.Fprintf(os.Stderr, "round %d c=%d %-7s %9.1f tps  %5.1f µs cpu/txn  (%.1f s)\n", r, n, tool, s.tps, s.cpuPerTxnUS, time.Since(t0).Seconds())
			}
		}
	}
	fmt.Printf("%s -M %s, %d s per run, %d interleaved rounds, scale %d, %s\n\n", strings.Join(workloadArgs, " "), proto, dur, rounds, scale, map[bool]string{true: "TCP", false: "unix socket"}[tcp])
	fmt.Println("| clients | pgbench tps | pgscale tps | TPS ratio (median [min–max]) | TPS ratio (geometric mean, 95 % interval) | pgbench cpu/txn | pgscale cpu/txn | CPU/txn ratio (median [min–max]) | CPU/txn ratio (geometric mean, 95 % interval) |")
	fmt.Println("| ---: | ---: | ---: | --- | --- | ---: | ---: | --- | --- |")
	for _, n := range ns {
		a, b := res["pgbench"][n], res["pgscale"][n]
		var tr, cr []float64
		for i := range a {
			tr = append(tr, b[i].tps/a[i].tps)
			cr = append(cr, b[i].cpuPerTxnUS/a[i].cpuPerTxnUS)
		}
		t, c := summary(tr), summary(cr)
		fmt.Printf("| %d | %.0f | %.0f | %.3f [%.3f–%.3f] | %s | %.1f µs | %.1f µs | %.2f [%.2f–%.2f] | %s |\n", n,
			summary(field(a, 0)).Median, summary(field(b, 0)).Median, t.Median, t.Min, t.Max, pairedRatio(field(a, 0), field(b, 0)),
			summary(field(a, 1)).Median, summary(field(b, 1)).Median, c.Median, c.Min, c.Max, pairedRatio(field(a, 1), field(b, 1)))
	}
	return nil
}

// pairedRatio is the geometric mean of the per-round ratios cand/base with
// the paired interval pgscale ab reports (internal/stats), as ratios.
func pairedRatio(base, cand []float64) string {
	c := stats.ComparePaired(stats.Measure{Name: "ratio"}, base, cand, stats.Options{})
	if math.IsInf(c.Lo, 0) || math.IsInf(c.Hi, 0) || math.IsNaN(c.Change) {
		return "n/a (too few rounds)"
	}
	return fmt.Sprintf("%.3f [%.3f–%.3f]", 1+c.Change, 1+c.Lo, 1+c.Hi)
}

func field(s []sample, i int) []float64 {
	var out []float64
	for _, x := range s {
		if i == 0 {
			out = append(out, x.tps)
		} else {
			out = append(out, x.cpuPerTxnUS)
		}
	}
	return out
}

// summary is the median, minimum and maximum of xs (internal/stats).
func summary(xs []float64) stats.Summary { return stats.Summarize(xs, stats.Options{}) }
