// Command agents measures what spreading the clients over agents costs:
// select-only -M prepared at 6 clients, as one process running all six
// against three agent processes running two each (from 127.0.0.11, .12
// and .13, through a coordination database on an ephemeral cluster of its
// own), interleaved over several rounds (A B, then B A, ...) on one
// target cluster over TCP on 127.0.0.1. It prints each round, then the
// paired ratio agents / one process of the TPS (geometric mean and its 95 %
// interval) and of the client CPU per transaction, and the agents' start
// skew and clock offsets' uncertainty. Every connection goes to a loopback
// address.
//
//	go run ./bench/agents -rounds 6 -T 10
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/pgscale/pgscale/bench/internal/benchkit"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/target"
)

func main() {
	rounds := flag.Int("rounds", 6, "interleaved rounds")
	dur := flag.Float64("T", 10, "seconds per run")
	clients := flag.Int("c", 6, "clients (dealt evenly to the agents)")
	agents := flag.Int("agents", 3, "agent processes")
	bin := flag.String("pgscale", "", "pgscale binary (default: build it)")
	flag.Parse()
	if err := run(*rounds, *dur, *clients, *agents, *bin); err != nil {
		fmt.Fprintln(os.Stderr, "agents:", err)
		os.Exit(1)
	}
}

// sample is one run's figures.
type sample struct {
	tps, cpuPerTxn float64
	skewMs, uncMs  float64 // agents only: largest start skew, largest offset uncertainty
}

func run(rounds int, dur float64, clients, agents int, bin string) error {
	if agents < 1 || agents > 200 {
		return fmt.Errorf("-agents %d: 1 to 200 (127.0.0.11 and up)", agents)
	}
	ws, err := benchkit.Open("agents", bin)
	if err != nil {
		return err
	}
	defer ws.Close()
	ctx := context.Background()
	loopback := []string{"host all all 127.0.0.0/8 trust"}
	srv, err := benchkit.StartCluster(ctx, target.Options{TCP: true, HBA: loopback, MaxConnections: clients + 20}, 1)
	if err != nil {
		return fmt.Errorf("target cluster: %w", err)
	}
	defer srv.Stop()
	if err := benchkit.InitData(ctx, srv.ConnString("postgres"), 1); err != nil {
		return err
	}
	co, err := target.Start(ctx, target.Options{NoPreload: true, MaxConnections: agents + 20})
	if err != nil {
		return fmt.Errorf("coordination cluster: %w", err)
	}
	co.StopOnSignal()
	defer co.Stop()
	coord := co.ConnString("postgres")
	dsn := srv.TCPConnString("postgres")
	common := []string{"run", "--dsn", dsn, "-S", "-M", "prepared", "-n", "--no-probes", "-P", "0", "-c", strconv.Itoa(clients),
		"-T", strconv.FormatFloat(dur, 'f', -1, 64)}

	one := func(r int) (sample, error) {
		out := filepath.Join(ws.Dir, "one.json")
		if o, err := exec.Command(ws.Pgscale, append(common, "--out", out)...).CombinedOutput(); err != nil {
			return sample{}, fmt.Errorf("one process: %v\n%s", err, o)
		}
		return read(out)
	}
	spread := func(r int) (sample, error) {
		job := fmt.Sprintf("bench-%d", r)
		var procs []*exec.Cmd
		var outs []*bytes.Buffer
		for i := range agents {
			var b bytes.Buffer
			a := exec.Command(ws.Pgscale, "agent", "--coordinator", coord, "--index", strconv.Itoa(i), "--job", job,
				"--source-address", fmt.Sprintf("127.0.0.%d", 11+i), "--wait", "60s")
			a.Stdout, a.Stderr = &b, &b
			if err := a.Start(); err != nil {
				return sample{}, err
			}
			procs, outs = append(procs, a), append(outs, &b)
		}
		out := filepath.Join(ws.Dir, "agents.json")
		o, err := exec.Command(ws.Pgscale, append(common, "--out", out, "--agents", strconv.Itoa(agents), "--coordinator", coord,
			"--agents-job", job)...).CombinedOutput()
		for i, a := range procs {
			if werr := a.Wait(); werr != nil && err == nil {
				err = fmt.Errorf("agent %d: %v\n%s", i, werr, outs[i])
			}
		}
		if err != nil {
			return sample{}, fmt.Errorf("agents: %v\n%s", err, o)
		}
		return read(out)
	}

	var base, cand []sample
	for r := 1; r <= rounds; r++ {
		order := []bool{false, true}
		if r%2 == 0 {
			order = []bool{true, false}
		}
		for _, spreadIt := range order {
			t0 := time.Now()
			var s sample
			var err error
			what := "1 process  "
			if spreadIt {
				what = fmt.Sprintf("%d agents   ", agents)
				s, err = spread(r)
				cand = append(cand, s)
			} else {
				s, err = one(r)
				base = append(base, s)
			}
			if err != nil {
				return fmt.Errorf("round %d: %w", r, err)
			}
			extra := ""
			if spreadIt {
				extra = fmt.Sprintf(", start skew %.3f ms, offsets ± %.3f ms", s.skewMs, s.uncMs)
			}
			fmt.Fprintf(os.Stderr, "round %d: %s %9.1f tps, client cpu %.2f µs/txn%s (%.1f s)\n", r, what, s.tps, s.cpuPerTxn, extra,
				time.Since(t0).Seconds())
		}
	}
	fmt.Printf("select-only -M prepared, %d clients, %g s per run, %d interleaved rounds, target over TCP on 127.0.0.1, no probes\n\n",
		clients, dur, rounds)
	fmt.Println("| measure | 1 process (median) | agents (median) | ratio agents / 1 process (geometric mean [95 % interval]) |")
	fmt.Println("| --- | ---: | ---: | --- |")
	for _, m := range []struct {
		name string
		get  func(sample) float64
	}{{"tps", func(s sample) float64 { return s.tps }}, {"client cpu µs/txn (all processes)", func(s sample) float64 { return s.cpuPerTxn }}} {
		var b, c []float64
		for i := range base {
			b, c = append(b, m.get(base[i])), append(c, m.get(cand[i]))
		}
		ratio := paired(b, c)
		fmt.Printf("| %s | %.2f | %.2f | %s |\n", m.name, benchkit.Summary(b).Median, benchkit.Summary(c).Median, ratio)
	}
	var skew, unc []float64
	for _, s := range cand {
		skew, unc = append(skew, s.skewMs), append(unc, s.uncMs)
	}
	sk, un := benchkit.Summary(skew), benchkit.Summary(unc)
	fmt.Printf("\nagents' start skew (largest per run): median %.3f ms [%.3f–%.3f]; clock offsets' uncertainty (largest per run): median %.3f ms [%.3f–%.3f]\n",
		sk.Median, sk.Min, sk.Max, un.Median, un.Min, un.Max)
	return nil
}

// paired is the geometric mean of the per-round ratios c/b with its 95 %
// t interval, from the paired differences of the logarithms.
func paired(b, c []float64) string {
	var lb, lc []float64
	for i := range b {
		lb, lc = append(lb, math.Log(b[i])), append(lc, math.Log(c[i]))
	}
	d := stats.PairedDifference(lb, lc, stats.Options{})
	return fmt.Sprintf("%.3f [%.3f–%.3f]", math.Exp(d.Diff), math.Exp(d.Lo), math.Exp(d.Hi))
}

// read takes a run's figures from its result file.
func read(path string) (sample, error) {
	f, err := result.Read(path)
	if err != nil {
		return sample{}, err
	}
	if len(f.Steps) != 1 || !f.Complete {
		return sample{}, fmt.Errorf("%s: incomplete: %s", path, f.Reason)
	}
	st := f.Steps[0]
	s := sample{tps: st.Summary.TPS, cpuPerTxn: st.Summary.ClientCPU.PerTxnUS}
	for _, a := range st.Agents {
		s.skewMs = max(s.skewMs, a.StartSkewMs)
		s.uncMs = max(s.uncMs, a.Offset.UncertaintyMs)
	}
	return s, nil
}
