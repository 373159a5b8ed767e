// Package benchkit holds what the benchmark programs under bench/ share: a
// workspace (a temporary directory and the pgscale binary they run), an
// ephemeral cluster with pgbench's data, the libpq environment that points
// pgbench at a server, and the parsing and summaries every main repeats.
// Each main keeps only its experiment.
package benchkit

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/workload"
)

// Workspace is a benchmark's temporary directory and the pgscale binary it
// runs.
type Workspace struct {
	Dir     string // removed by Close
	Pgscale string // the binary: as given, or built into Dir
}

// Open makes a temporary directory named after the benchmark and returns it
// with the pgscale binary: bin when given, else ./cmd/pgscale built into the
// directory. Close removes the directory.
func Open(name, bin string) (*Workspace, error) {
	dir, err := os.MkdirTemp("", name+"-")
	if err != nil {
		return nil, err
	}
	w := &Workspace{Dir: dir}
	if w.Pgscale, err = Pgscale(dir, bin); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// Close removes the workspace's directory.
func (w *Workspace) Close() { os.RemoveAll(w.Dir) }

// Pgscale returns bin when given, else builds ./cmd/pgscale into dir and
// returns the binary's path.
func Pgscale(dir, bin string) (string, error) {
	if bin != "" {
		return bin, nil
	}
	bin = filepath.Join(dir, "pgscale")
	build := exec.Command("go", "build", "-o", bin, "./cmd/pgscale")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("build pgscale: %w", err)
	}
	return bin, nil
}

// StartCluster starts an ephemeral cluster sized for pgbench's data at
// scale (opts.DataSizeHint), stopped on Ctrl-C or SIGTERM too. The caller
// stops it.
func StartCluster(ctx context.Context, opts target.Options, scale int) (*target.Cluster, error) {
	opts.DataSizeHint = workload.DataBytes(scale)
	c, err := target.Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	c.StopOnSignal()
	return c, nil
}

// InitData creates pgbench's data at scale in the database dsn names.
func InitData(ctx context.Context, dsn string, scale int) error {
	connect := func(ctx context.Context) (*pgconn.PgConn, error) { return pgconn.Connect(ctx, dsn) }
	_, err := workload.Init(ctx, connect, workload.InitOptions{Scale: scale}, io.Discard)
	return err
}

// PgEnv is this process's environment plus libpq's variables for a server
// at host (a socket directory or an address), port and user, database
// postgres: what pgbench reads.
func PgEnv(host string, port int, user string) []string {
	return append(os.Environ(), "PGHOST="+host, "PGPORT="+strconv.Itoa(port), "PGUSER="+user, "PGDATABASE=postgres")
}

// Clients parses a comma list of client counts (1,2,4,8).
func Clients(list string) ([]int, error) {
	var ns []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad client count %q", f)
		}
		ns = append(ns, n)
	}
	return ns, nil
}

// Summary is the median, minimum and maximum of xs (internal/stats).
func Summary(xs []float64) stats.Summary { return stats.Summarize(xs, stats.Options{}) }
