package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/pgscale/pgscale/internal/engine"
	"github.com/pgscale/pgscale/internal/result"
)

// progressLine formats one interval as pgbench's -P does.
func progressLine(p engine.Progress, o *runOptions) string {
	var b strings.Builder
	tps := 0.0
	if p.Length > 0 {
		tps = float64(p.Counts.Transactions) / p.Length.Seconds()
	}
	fmt.Fprintf(&b, "progress: %.1f s, %.1f tps, lat %.3f ms stddev %.3f, %d failed",
		p.Elapsed.Seconds(), tps, p.Latency.MeanMs, p.Latency.StddevMs, p.Counts.FailedTotal())
	if o.rate > 0 {
		lag := 0.0
		if p.Counts.Transactions > 0 {
			lag = p.Counts.LagSumUS / float64(p.Counts.Transactions) / 1000
		}
		fmt.Fprintf(&b, ", lag %.3f ms", lag)
	}
	if o.latencyLimit > 0 {
		fmt.Fprintf(&b, ", %d skipped", p.Counts.Skipped)
	}
	if o.maxTries != 1 {
		fmt.Fprintf(&b, ", %d retried, %d retries", p.Counts.Retried, p.Counts.Retries)
	}
	if p.Warmup {
		b.WriteString(" (warm-up)")
	}
	return b.String()
}

// printSweepTable prints the compact table that ends every run.
func printSweepTable(w io.Writer, steps []result.Step) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	disturbed := false
	for _, s := range steps {
		disturbed = disturbed || len(s.Disturbances) > 0
	}
	head := "clients\ttps\tspeedup\tefficiency\tlat avg ms\tp99 ms\tfailed\tclient cpu/txn\t"
	if disturbed {
		head += "during/before\t"
	}
	fmt.Fprintln(tw, head)
	for _, s := range steps {
		sum := s.Summary
		cpu := "-"
		if sum.ClientCPU.PerTxnUS > 0 {
			cpu = fmt.Sprintf("%.1f µs", sum.ClientCPU.PerTxnUS)
		}
		mark := ""
		if !s.Complete {
			mark = " (incomplete)"
		}
		if disturbed {
			cpu += "\t" + duringBefore(s)
		}
		fmt.Fprintf(tw, "%d\t%.1f\t%.2f×\t%.0f%%\t%.3f\t%.3f\t%d\t%s\t%s\n", s.Clients, sum.TPS, sum.Speedup,
			sum.Efficiency*100, sum.Latency.MeanMs, sum.Latency.P99Ms, sum.Failed, cpu, mark)
	}
	tw.Flush()
}

// printCommands prints per-command latencies as pgbench -r does.
func printCommands(w io.Writer, s result.Step) {
	cur := ""
	for _, c := range s.Commands {
		if c.Script != cur {
			cur = c.Script
			fmt.Fprintf(w, "statement latencies in milliseconds, failures and retries (%s):\n", cur)
		}
		fmt.Fprintf(w, "  %10.3f  %8d  %8d  %s\n", c.MeanMs, c.Failed, c.Retries, c.Text)
	}
}

// printScripts prints each weighted script's share, as pgbench does.
func printScripts(w io.Writer, s result.Step) {
	var total, weights int64
	for _, sc := range s.Scripts {
		total += sc.Transactions
		weights += int64(sc.Weight)
	}
	pct := func(a, b int64) float64 {
		if b == 0 {
			return 0
		}
		return 100 * float64(a) / float64(b)
	}
	for i, sc := range s.Scripts {
		fmt.Fprintf(w, "SQL script %d: %s\n", i+1, sc.Name)
		fmt.Fprintf(w, " - weight: %d (targets %.1f%% of total)\n", sc.Weight, pct(int64(sc.Weight), weights))
		fmt.Fprintf(w, " - %d transactions (%.1f%% of total, tps = %f)\n", sc.Transactions, pct(sc.Transactions, total), sc.TPS)
		fmt.Fprintf(w, " - number of failed transactions: %d (%.3f%%)\n", sc.Failed, pct(sc.Failed, sc.Transactions+sc.Failed))
		fmt.Fprintf(w, " - latency average = %.3f ms\n - latency stddev = %.3f ms\n", sc.LatMeanMs, sc.LatStddevMs)
	}
}
