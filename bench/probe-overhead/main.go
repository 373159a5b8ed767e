// Command probe-overhead measures what pgscale's default probes cost the
// workload they watch: select-only -M prepared at each client count, probes
// off and on, interleaved (A B, then B A, ...) over several rounds, on two
// ephemeral clusters: one with pg_wait_sampling preloaded (wait events read
// from its in-server profile) and one without it (pg_stat_activity sampled
// at 20 Hz). It prints, per cluster and client count, the TPS ratio
// probes-on / probes-off (median and range over the rounds) and what the
// probes said they cost.
//
//	go run ./bench/probe-overhead -rounds 3 -T 10 -c 2,8
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/bench/internal/benchkit"
	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/target"
)

func main() {
	rounds := flag.Int("rounds", 3, "interleaved rounds")
	dur := flag.Int("T", 10, "seconds per run")
	clients := flag.String("c", "2,8", "client counts")
	bin := flag.String("pgscale", "", "pgscale binary (default: build it)")
	only := flag.String("only", "", "run one cluster only: with or without (pg_wait_sampling)")
	flag.Parse()
	if err := run(*rounds, *dur, *clients, *bin, *only); err != nil {
		fmt.Fprintln(os.Stderr, "probe-overhead:", err)
		os.Exit(1)
	}
}

type sample struct {
	off, on   float64 // tps
	probeCost float64 // the probes' share of the machine (on)
	source    string  // wait-event source (on)
}

func run(rounds, dur int, clientList, bin, only string) error {
	ws, err := benchkit.Open("probe-overhead", bin)
	if err != nil {
		return err
	}
	defer ws.Close()
	tmp, bin := ws.Dir, ws.Pgscale
	ns, err := benchkit.Clients(clientList)
	if err != nil {
		return err
	}
	type config struct {
		name string
		opts target.Options
		exts []string
	}
	configs := []config{
		{"with pg_wait_sampling", target.Options{MaxConnections: 64}, []string{"pg_stat_statements", "pg_wait_sampling"}},
		{"without pg_wait_sampling", target.Options{MaxConnections: 64, NoPreload: true,
			Settings: []target.Setting{{Name: "shared_preload_libraries", Value: "pg_stat_statements"}}}, []string{"pg_stat_statements"}},
	}
	results := map[string]map[int][]sample{}
	for _, cfg := range configs {
		if only != "" && !strings.HasPrefix(cfg.name, only) {
			continue
		}
		res, err := measure(cfg.name, cfg.opts, cfg.exts, bin, tmp, rounds, dur, ns)
		if err != nil {
			return fmt.Errorf("%s: %w", cfg.name, err)
		}
		results[cfg.name] = res
	}
	fmt.Printf("select-only -M prepared, %d s per run, %d interleaved rounds, default probes on vs --no-probes\n\n", dur, rounds)
	fmt.Println("| cluster | clients | tps off (median) | tps on (median) | TPS ratio on/off (median [min–max]) | probes' own cost (share of machine) | wait source |")
	fmt.Println("| --- | ---: | ---: | ---: | --- | ---: | --- |")
	for _, cfg := range configs {
		res, ok := results[cfg.name]
		if !ok {
			continue
		}
		for _, n := range ns {
			var off, on, ratio, cost []float64
			src := ""
			for _, s := range res[n] {
				off, on, ratio, cost = append(off, s.off), append(on, s.on), append(ratio, s.on/s.off), append(cost, s.probeCost)
				src = s.source
			}
			r := summary(ratio)
			fmt.Printf("| %s | %d | %.0f | %.0f | %.3f [%.3f–%.3f] | %.2f%% | %s |\n", cfg.name, n, summary(off).Median, summary(on).Median,
				r.Median, r.Min, r.Max, summary(cost).Median*100, src)
		}
	}
	return nil
}

func measure(name string, opts target.Options, exts []string, bin, tmp string, rounds, dur int, ns []int) (map[int][]sample, error) {
	ctx := context.Background()
	c, err := benchkit.StartCluster(ctx, opts, 1)
	if err != nil {
		return nil, err
	}
	defer c.Stop()
	dsn := c.ConnString("postgres")
	if err := benchkit.InitData(ctx, dsn, 1); err != nil {
		return nil, err
	}
	connect := func(ctx context.Context) (*pgconn.PgConn, error) { return pgconn.Connect(ctx, dsn) }
	conn, err := connect(ctx)
	if err != nil {
		return nil, err
	}
	for _, e := range exts {
		if _, err := conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS "+e).ReadAll(); err != nil {
			conn.Close(ctx)
			return nil, err
		}
	}
	conn.Close(ctx)
	res := map[int][]sample{}
	out := filepath.Join(tmp, "r.json")
	one := func(n int, probes bool) (*result.File, error) {
		args := []string{"run", "--dsn", dsn, "-S", "-M", "prepared", "-n", "-c", strconv.Itoa(n), "-T", strconv.Itoa(dur), "-P", "0", "--out", out}
		if !probes {
			args = append(args, "--no-probes")
		}
		t0 := time.Now()
		o, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("pgscale %v: %v\n%s", args, err, o)
		}
		f, err := result.Read(out)
		if err != nil {
			return nil, err
		}
		what := "off"
		if probes {
			what = "on "
		}
		fmt.Fprintf(os.Stderr, "%s c=%d probes %s %9.1f tps (%.1f s)\n", name, n, what, f.Steps[0].Summary.TPS, time.Since(t0).Seconds())
		return f, nil
	}
	for r := 0; r < rounds; r++ {
		for _, n := range ns {
			order := []bool{false, true}
			if r%2 == 1 {
				order = []bool{true, false}
			}
			var s sample
			for _, probes := range order {
				f, err := one(n, probes)
				if err != nil {
					return nil, err
				}
				st := f.Steps[0]
				if !probes {
					s.off = st.Summary.TPS
					continue
				}
				s.on = st.Summary.TPS
				fig := diagnose.Compute(st)
				s.probeCost = fig.ProbeShare
				if st.Probes != nil && st.Probes.Waits() != nil {
					s.source = st.Probes.Waits().Source
				}
			}
			res[n] = append(res[n], s)
		}
	}
	return res, nil
}

var summary = benchkit.Summary
