package rig_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/rig"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/target/targettest"
	"github.com/pgscale/pgscale/internal/testenv"
	"github.com/pgscale/pgscale/internal/workload"
)

// cluster is the package's one server, for its full-tier tests: none in
// -short, where its tests need none.
var cluster *target.Cluster

func TestMain(m *testing.M) {
	if testenv.Short() {
		os.Exit(m.Run())
	}
	os.Exit(targettest.Run(m, target.Options{MaxConnections: 20, DataSizeHint: workload.DataBytes(2)}, func(c *target.Cluster) { cluster = c }))
}

// Init makes pgbench's tables and rows on the target, as pgbench -i.
func TestInit(t *testing.T) {
	testenv.Slow(t) // makes pgbench's data
	dsn := cluster.ConnString("postgres")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out strings.Builder
	if err := rig.Init(ctx, rig.InitSpec{Target: target.Existing(dsn), Init: workload.InitOptions{Scale: 2, Fillfactor: 100, PartitionMethod: "range"}, Out: &out}); err != nil {
		t.Fatal(err)
	}
	conn, err := pgconn.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	res, err := conn.Exec(ctx, "SELECT count(*) FROM pgbench_accounts").ReadAll()
	if err != nil || string(res[0].Rows[0][0]) != "200000" {
		t.Errorf("pgbench_accounts after init -s 2: %v (%v)", res, err)
	}
	if !slices.ContainsFunc(strings.Split(out.String(), "\n"), func(l string) bool { return strings.Contains(l, "done in") }) {
		t.Errorf("init's account: %q", out.String())
	}
}
