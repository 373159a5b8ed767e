package probe_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/build"
	"github.com/pgscale/pgscale/internal/build/buildtest"
	"github.com/pgscale/pgscale/internal/probe"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/testenv"
	"github.com/pgscale/pgscale/internal/watch"
	"github.com/pgscale/pgscale/internal/workload"
)

// The fast-path slot count comes from the build when it says (21 on the
// fp21 fixture), and is otherwise observed: the version says 16, yet a
// backend holds 19 fast-path locks, so the build has at least 19. The
// installed server's figure is the version's (TestPartitionsExhaustFastPathSlots).
func TestLockProbeReadsTheBuildOrObserves(t *testing.T) {
	testenv.Slow(t) // builds from source (minutes)
	src := buildtest.PGSource(t)
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Minute)
	defer cancel()
	b, err := buildtest.Builder(t).Build(ctx, build.Postgres{Name: "fp21", Source: build.Source{Path: src, Rev: "fp21"}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := target.Start(ctx, target.Options{BinDir: b.BinDir(), MaxConnections: 30, DataSizeHint: workload.DataBytes(1)})
	if err != nil {
		if c != nil {
			c.Stop()
		}
		t.Fatal(err)
	}
	defer c.Stop()
	execOn(t, c, `CREATE TABLE fp (id int NOT NULL, v int) PARTITION BY HASH (id);
		DO $$ BEGIN FOR i IN 0..17 LOOP
			EXECUTE format('CREATE TABLE fp_%s PARTITION OF fp FOR VALUES WITH (MODULUS 18, REMAINDER %s)', i, i);
		END LOOP; END $$;
		CREATE INDEX ON fp (id);
		INSERT INTO fp SELECT g, g FROM generate_series(1, 1000) g; ANALYZE fp`)
	slots, _ := b.Manifest.FastPathSlots()
	// The locks are held over the sleep, where the snapshots find them.
	const count = "BEGIN;\nSELECT count(*) FROM fp;\nSELECT pg_sleep(0.002);\nEND;\n"
	for _, tc := range []struct {
		given int
		from  string
		text  string
	}{
		{slots, probe.SlotsFromBuild, "fast-path slots 21 (the build's; up to 19 used)"},
		{0, probe.SlotsFromObserved, "fast-path slots at least 19 (observed, more than the version's; up to 19 used)"},
	} {
		f, out := runSweepOn(t, c, []int{2}, 3*time.Second, count, func(cfg *probe.Config) {
			cfg.Server, cfg.WaitSource = builtWith{cfg.Server, tc.given}, probe.WaitSourceStatActivity
		})
		l := f.Steps[0].Probes.Locks()
		if l == nil || l.FastPathSlotsFrom != tc.from || l.MaxFastPath < 19 {
			t.Fatalf("given %d: locks %+v, want slots from %s and 19 fast-path locks held at least", tc.given, l, tc.from)
		}
		// A backend's first statements are planned afresh, which also
		// locks the indexes: a snapshot may see up to 21 then.
		if want := max(tc.given, l.MaxFastPath); l.FastPathSlots != want || tc.given > 0 && l.Exhausted != 0 {
			t.Errorf("given %d: locks %+v, want %d slots, none exhausted past the build's", tc.given, l, want)
		}
		if l.MaxFastPath == 19 && !strings.Contains(strings.Join(strings.Fields(out), " "), tc.text) {
			t.Errorf("given %d: the report does not say %q", tc.given, tc.text)
		}
	}
}

func execOn(t *testing.T, c *target.Cluster, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgconn.ConnectConfig(ctx, connConfigOf(t, c))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql).ReadAll(); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// builtWith is a cluster whose build says it has slots fast-path lock
// slots per backend (none when 0), as a src: target's record does.
type builtWith struct {
	watch.Server
	slots int
}

func (b builtWith) BuildConstant(name string) (int, bool) {
	if name != "FP_LOCK_SLOTS_PER_BACKEND" || b.slots == 0 {
		return 0, false
	}
	return b.slots, true
}
