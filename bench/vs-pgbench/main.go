// Command vs-pgbench runs pgbench and pgscale side by side on one ephemeral
// cluster, interleaved (A B A B ...), and prints per client count the TPS
// ratio pgscale/pgbench and the ratio of the load generator's CPU per
// transaction (user+sys of each process, from the kernel), median and range
// over the rounds.
//
//	go run ./bench/vs-pgbench -rounds 3 -T 10 -c 1,2,4,8
//
// -variants runs several pgscale command lines in the same rounds (each a
// table against pgbench), to compare engine options side by side:
//
//	go run ./bench/vs-pgbench -c 4,8 -variants 'default=;engine=--no-probes'
//
// A variant's words of the form env:KEY=VALUE set its environment, and a
// word bin:PATH runs another pgscale binary (an older build, to compare
// two builds in the same rounds):
//
//	go run ./bench/vs-pgbench -c 1,2,4,8 -variants 'old=bin:/tmp/pgscale-old;new='
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pgscale/pgscale/bench/internal/benchkit"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/target"
)

type sample struct{ tps, cpuPerTxnUS float64 }

func main() {
	rounds := flag.Int("rounds", 3, "interleaved rounds")
	dur := flag.Int("T", 10, "seconds per run")
	clients := flag.String("c", "1,2,4,8", "client counts")
	scale := flag.Int("s", 1, "scale")
	pgscaleBin := flag.String("pgscale", "", "pgscale binary (default: build it)")
	extra := flag.String("pgscale-args", "", "extra pgscale run arguments, e.g. --io netpoll")
	variants := flag.String("variants", "", "pgscale variants run in the same rounds, 'NAME=ARGS;NAME=ARGS' (ARGS after -pgscale-args; env:KEY=VALUE sets the environment, bin:PATH another pgscale binary)")
	script := flag.String("f", "", "custom script for both tools instead of -S")
	proto := flag.String("M", "prepared", "protocol for both tools")
	tcp := flag.Bool("tcp", false, "connect over TCP instead of the unix socket")
	flag.Parse()
	vs, err := parseVariants(*variants, *extra)
	if err == nil {
		err = run(*rounds, *dur, *clients, *scale, *pgscaleBin, vs, *script, *proto, *tcp)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "vs-pgbench:", err)
		os.Exit(1)
	}
}

// variant is one pgscale command line measured against pgbench.
type variant struct {
	name string
	args []string // after run's own
	env  []string
	bin  string // another pgscale binary; "" for the workspace's
}

func parseVariants(spec, extra string) ([]variant, error) {
	if spec == "" {
		return []variant{{name: "pgscale", args: strings.Fields(extra)}}, nil
	}
	var vs []variant
	for _, part := range strings.Split(spec, ";") {
		name, rest, ok := strings.Cut(part, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" || name == "pgbench" {
			return nil, fmt.Errorf("-variants: %q is not NAME=ARGS", part)
		}
		v := variant{name: name, args: strings.Fields(extra)}
		for _, w := range strings.Fields(rest) {
			if kv, isEnv := strings.CutPrefix(w, "env:"); isEnv {
				v.env = append(v.env, kv)
			} else if path, isBin := strings.CutPrefix(w, "bin:"); isBin {
				v.bin = path
			} else {
				v.args = append(v.args, w)
			}
		}
		vs = append(vs, v)
	}
	return vs, nil
}

func run(rounds, dur int, clientList string, scale int, bin string, variants []variant, scriptFile, proto string, tcp bool) error {
	ws, err := benchkit.Open("vs-pgbench", bin)
	if err != nil {
		return err
	}
	defer ws.Close()
	tmp, bin := ws.Dir, ws.Pgscale
	ctx := context.Background()
	c, err := benchkit.StartCluster(ctx, target.Options{TCP: tcp, MaxConnections: 64}, scale)
	if err != nil {
		return err
	}
	defer c.Stop()
	dsn := c.ConnString("postgres")
	if tcp {
		dsn = c.TCPConnString("postgres")
	}
	if err := benchkit.InitData(ctx, dsn, scale); err != nil {
		return err
	}
	pgbench := filepath.Join(c.BinDir, "pgbench")
	env := benchkit.PgEnv(c.SocketDir, c.Port, c.User)
	if tcp {
		env = append(env, "PGHOST=127.0.0.1")
	}
	ns, err := benchkit.Clients(clientList)
	if err != nil {
		return err
	}
	workloadArgs := []string{"-S"}
	if scriptFile != "" {
		abs, _ := filepath.Abs(scriptFile)
		workloadArgs = []string{"-f", abs}
	}
	res := map[string]map[int][]sample{"pgbench": {}}
	tools := []string{"pgbench"}
	byName := map[string]variant{}
	for _, v := range variants {
		res[v.name] = map[int][]sample{}
		tools = append(tools, v.name)
		byName[v.name] = v
	}
	tpsRE := regexp.MustCompile(`tps = ([0-9.]+)`)
	txRE := regexp.MustCompile(`number of transactions actually processed: ([0-9]+)`)
	for r := 1; r <= rounds; r++ {
		for _, n := range ns {
			order := append([]string(nil), tools...)
			if r%2 == 0 {
				slices.Reverse(order)
			}
			for _, tool := range order {
				var cmd *exec.Cmd
				out := filepath.Join(tmp, "r.json")
				if tool == "pgbench" {
					args := append([]string{"-n", "-M", proto, "-c", strconv.Itoa(n), "-j", strconv.Itoa(n), "-T", strconv.Itoa(dur)}, workloadArgs...)
					cmd = exec.Command(pgbench, args...)
				} else {
					args := append([]string{"run", "--dsn", dsn, "-n", "-M", proto, "-c", strconv.Itoa(n), "-T", strconv.Itoa(dur), "-P", "0", "--out", out}, workloadArgs...)
					args = append(args, byName[tool].args...)
					cmd = exec.Command(cmp.Or(byName[tool].bin, bin), args...)
				}
				cmd.Env = append(env, byName[tool].env...)
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
	fmt.Printf("%s -M %s, %d s per run, %d interleaved rounds, scale %d, %s\n", strings.Join(workloadArgs, " "), proto, dur, rounds, scale, map[bool]string{true: "TCP", false: "unix socket"}[tcp])
	for _, v := range variants {
		fmt.Printf("\n%s: %s run ... %s\n\n", v.name, cmp.Or(v.bin, "pgscale"), strings.Join(append(v.env, v.args...), " "))
		table(ns, res["pgbench"], res[v.name])
	}
	return nil
}

// table prints one variant against pgbench, a row per client count.
func table(ns []int, base, cand map[int][]sample) {
	fmt.Println("| clients | pgbench tps | pgscale tps | TPS ratio (median [min–max]) | TPS ratio (geometric mean, 95 % interval) | pgbench cpu/txn | pgscale cpu/txn | CPU/txn ratio (median [min–max]) | CPU/txn ratio (geometric mean, 95 % interval) |")
	fmt.Println("| ---: | ---: | ---: | --- | --- | ---: | ---: | --- | --- |")
	for _, n := range ns {
		a, b := base[n], cand[n]
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

var summary = benchkit.Summary
