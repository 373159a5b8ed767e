// Command pgscale measures how a PostgreSQL workload scales with concurrency,
// explains why it stops scaling, and compares two systems with honest statistics.
package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"runtime/trace"

	"github.com/pgscale/pgscale/internal/cli"
)

func main() {
	os.Exit(run())
}

// run is main with deferred clean-up. PGSCALE_CPUPROFILE and PGSCALE_TRACE
// name files for a CPU profile and an execution trace of pgscale itself,
// for work on the load generator's own cost.
func run() int {
	if path := os.Getenv("PGSCALE_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			pprof.StartCPUProfile(f)
			defer func() { pprof.StopCPUProfile(); f.Close() }()
		} else {
			fmt.Fprintln(os.Stderr, "pgscale: PGSCALE_CPUPROFILE:", err)
		}
	}
	if path := os.Getenv("PGSCALE_TRACE"); path != "" {
		if f, err := os.Create(path); err == nil {
			trace.Start(f)
			defer func() { trace.Stop(); f.Close() }()
		} else {
			fmt.Fprintln(os.Stderr, "pgscale: PGSCALE_TRACE:", err)
		}
	}
	return cli.Main(os.Args[1:], os.Stdout, os.Stderr)
}
