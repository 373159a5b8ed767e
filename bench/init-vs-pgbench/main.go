// Command init-vs-pgbench times `pgbench -i` and `pgscale init` on one
// ephemeral cluster, interleaved, and prints the wall-clock ratio per round
// and its median.
//
//	go run ./bench/init-vs-pgbench -s 10 -rounds 5
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

	"github.com/pgscale/pgscale/bench/internal/benchkit"
	"github.com/pgscale/pgscale/internal/target"
)

func main() {
	scale := flag.Int("s", 10, "scale")
	rounds := flag.Int("rounds", 5, "interleaved rounds")
	extra := flag.String("args", "", "extra init arguments for both tools, e.g. --partitions 8")
	flag.Parse()
	if err := run(*scale, *rounds, *extra); err != nil {
		fmt.Fprintln(os.Stderr, "init-vs-pgbench:", err)
		os.Exit(1)
	}
}

func run(scale, rounds int, extra string) error {
	ws, err := benchkit.Open("init-vs-pgbench", "")
	if err != nil {
		return err
	}
	defer ws.Close()
	bin := ws.Pgscale
	c, err := benchkit.StartCluster(context.Background(), target.Options{}, scale)
	if err != nil {
		return err
	}
	defer c.Stop()
	env := benchkit.PgEnv(c.SocketDir, c.Port, c.User)
	s := strconv.Itoa(scale)
	var ratios []float64
	fmt.Printf("scale %s %s, %d interleaved rounds (wall-clock seconds)\n\n| round | pgbench -i | pgscale init | ratio |\n| ---: | ---: | ---: | ---: |\n", s, extra, rounds)
	for r := 1; r <= rounds; r++ {
		times := map[string]float64{}
		order := []string{"pgbench", "pgscale"}
		if r%2 == 0 {
			order = []string{"pgscale", "pgbench"}
		}
		for _, tool := range order {
			var cmd *exec.Cmd
			if tool == "pgbench" {
				cmd = exec.Command(filepath.Join(c.BinDir, "pgbench"), append([]string{"-i", "-q", "-s", s}, fields(extra)...)...)
			} else {
				cmd = exec.Command(bin, append([]string{"init", "--dsn", c.ConnString("postgres"), "-s", s}, fields(extra)...)...)
			}
			cmd.Env = env
			t0 := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("%s: %v\n%s", tool, err, out)
			}
			times[tool] = time.Since(t0).Seconds()
		}
		ratio := times["pgscale"] / times["pgbench"]
		ratios = append(ratios, ratio)
		fmt.Printf("| %d | %.2f | %.2f | %.2f |\n", r, times["pgbench"], times["pgscale"], ratio)
	}
	fmt.Printf("\nmedian pgscale/pgbench time ratio: %.2f (below 1: pgscale is faster)\n", benchkit.Summary(ratios).Median)
	return nil
}

func fields(s string) []string { return strings.Fields(s) }
