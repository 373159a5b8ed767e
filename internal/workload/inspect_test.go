package workload_test

import (
	"context"
	"testing"

	"github.com/pgscale/pgscale/internal/disturb"
	"github.com/pgscale/pgscale/internal/workload"
)

func TestBiggestTable(t *testing.T) {
	createDB(t, "biggest")
	ctx := context.Background()
	conn, err := connector("biggest")(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := workload.BiggestTable(ctx, conn); err == nil {
		t.Errorf("BiggestTable on an empty database: no error")
	}
	// A partitioned table counts as its partitions together: 3 × 2000
	// rows beat a plain table of 4000, and no partition is chosen alone.
	err = conn.Exec(ctx, `CREATE TABLE small (a int); INSERT INTO small SELECT generate_series(1, 100);
CREATE TABLE "Plain" (a int, b text); INSERT INTO "Plain" SELECT i, repeat('x', 100) FROM generate_series(1, 4000) i;
CREATE TABLE parted (a int, b text) PARTITION BY RANGE (a);
CREATE TABLE parted_1 PARTITION OF parted FOR VALUES FROM (0) TO (2000);
CREATE TABLE parted_2 PARTITION OF parted FOR VALUES FROM (2000) TO (4000);
CREATE TABLE parted_3 PARTITION OF parted FOR VALUES FROM (4000) TO (6000);`).Close()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := workload.BiggestTable(ctx, conn); err != nil || got != `public."Plain"` {
		t.Errorf(`BiggestTable = %q, %v; want public."Plain" (quoted)`, got, err)
	}
	if err := conn.Exec(ctx, `INSERT INTO parted SELECT i, repeat('x', 100) FROM generate_series(0, 5999) i`).Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := workload.BiggestTable(ctx, conn); err != nil || got != "public.parted" {
		t.Errorf("BiggestTable = %q, %v; want public.parted", got, err)
	}
	d, _ := disturb.Find("vacuum")
	if vars, err := d.Vars(ctx, conn, ""); err != nil || vars["table"] != "public.parted" {
		t.Errorf("vacuum's default table: %v, %v", vars, err)
	}
}
