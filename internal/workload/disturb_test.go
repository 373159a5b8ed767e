package workload_test

import (
	"context"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/script"
	"github.com/pgscale/pgscale/internal/workload"
)

func TestBuiltinDisturbancesParse(t *testing.T) {
	ds := workload.Disturbances()
	var names []string
	for _, d := range ds {
		names = append(names, d.Name)
		if d.Stresses == "" {
			t.Errorf("%s does not say what it stresses", d.Name)
		}
		s, err := script.Parse(d.Name, d.Script)
		if err != nil {
			t.Errorf("%s: %v", d.Name, err)
			continue
		}
		if len(s.Commands) == 0 {
			t.Errorf("%s: empty script", d.Name)
		}
	}
	if got := strings.Join(names, " "); got != "analyze checkpoint ddl-churn long-txn vacuum" {
		t.Errorf("built-in disturbances %q", got)
	}
	if _, err := workload.FindDisturbance("ddl"); err == nil || !strings.Contains(err.Error(), "have analyze, checkpoint, ddl-churn, long-txn, vacuum") {
		t.Errorf("FindDisturbance(ddl) error %v; want the list of names", err)
	}
}

func TestDisturbanceArgs(t *testing.T) {
	find := func(name string) workload.Disturbance {
		d, err := workload.FindDisturbance(name)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	ctx := context.Background()
	// A period becomes microseconds for \sleep :every_us us.
	for arg, want := range map[string]string{"": "5000000", "10s": "10000000", "500ms": "500000", "2.5": "2500000"} {
		vars, err := find("checkpoint").Vars(ctx, nil, arg)
		if err != nil || vars["every_us"] != want {
			t.Errorf("checkpoint=%s: vars %v, %v; want every_us %s", arg, vars, err, want)
		}
	}
	for name, arg := range map[string]string{
		"checkpoint": "soon", "ddl-churn": "x", "long-txn": "1", "vacuum": "t; DROP TABLE x", "analyze": "a b",
	} {
		if err := find(name).CheckArg(arg); err == nil {
			t.Errorf("%s=%s accepted", name, arg)
		}
	}
	for _, arg := range []string{"pgbench_accounts", `public."Big Table"`, "s.t"} {
		vars, err := find("vacuum").Vars(ctx, nil, arg)
		if err != nil || vars["table"] != arg {
			t.Errorf("vacuum=%s: vars %v, %v", arg, vars, err)
		}
	}
}

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
	d, _ := workload.FindDisturbance("vacuum")
	if vars, err := d.Vars(ctx, conn, ""); err != nil || vars["table"] != "public.parted" {
		t.Errorf("vacuum's default table: %v, %v", vars, err)
	}
}
