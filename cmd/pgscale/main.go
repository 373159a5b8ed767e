// Command pgscale measures how a PostgreSQL workload scales with concurrency,
// explains why it stops scaling, and compares two systems with honest statistics.
package main

import (
	"os"

	"github.com/pgscale/pgscale/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
