package target_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/testenv"
)

// One cluster's data, loaded in random order, copied byte for byte to
// another cluster of the same binaries: both hold the same rows in the
// same physical order, each runs with its own settings; a re-created
// layout makes the copy's cluster empty (no initdb, no server), and a
// copy is its data again.
func TestCopyData(t *testing.T) {
	testenv.Slow(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	specs, err := target.ParseSpecs([]string{"base=settings:", "copy=settings:work_mem=8MB"}, "", 2)
	if err != nil {
		t.Fatal(err)
	}
	servers, err := target.OpenAll(ctx, specs, target.ClusterOptions{Separate: true}, target.Needs{Clients: 1, Connections: 1}, nil)
	defer func() {
		for _, s := range servers {
			s.Close()
		}
	}()
	if err != nil {
		t.Fatal(err)
	}
	base, cp := servers[0], servers[1]
	// The rows' physical order, which a copy keeps and a second load
	// would not.
	order := func(s *target.Server) string {
		c := connect(t, ctx, s.Config)
		defer c.Close(ctx)
		res := c.ExecParams(ctx, "SELECT md5(string_agg(x::text, ',' ORDER BY ctid)) FROM r", nil, nil, nil, nil).Read()
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		return string(res.Rows[0][0])
	}
	round := func(when string) {
		t.Helper()
		c := connect(t, ctx, base.Config)
		if err := c.Exec(ctx, "CREATE TABLE r AS SELECT (random() * 1e6)::int AS x FROM generate_series(1, 1000)").Close(); err != nil {
			t.Fatal(err)
		}
		c.Close(ctx)
		if why, err := target.Copyable(ctx, base, cp); why != "" || err != nil {
			t.Fatalf("%s: copyable: %q, %v", when, why, err)
		}
		if err := target.CopyData(ctx, base, []*target.Server{cp}); err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		for _, s := range servers {
			if err := s.Resume(ctx); err != nil {
				t.Fatalf("%s: %v", when, err)
			}
		}
		if a, b := order(base), order(cp); a != b {
			t.Errorf("%s: the copy's rows are not the base's: %s against %s", when, b, a)
		}
		c = connect(t, ctx, cp.Config)
		defer c.Close(ctx)
		if got := show(t, ctx, c, "work_mem"); got != "8MB" {
			t.Errorf("%s: the copy runs with work_mem %s, not its own 8MB", when, got)
		}
	}
	round("first layout")
	first := order(base)

	if err := target.Renew(ctx, servers, cp); err != nil {
		t.Fatal(err)
	}
	if !cp.Empty() || cp.Cluster.Running() || base.Empty() || !base.Cluster.Running() {
		t.Fatalf("after Renew with the copy empty: copy empty %v, running %v; base empty %v, running %v",
			cp.Empty(), cp.Cluster.Running(), base.Empty(), base.Cluster.Running())
	}
	round("second layout")
	if order(base) == first {
		t.Errorf("the second layout's data is the first's: the base made none anew")
	}

	if err := target.Renew(ctx, servers, cp); err != nil {
		t.Fatal(err)
	}
	if err := cp.Initdb(ctx); err != nil || cp.Empty() || !cp.Cluster.Running() {
		t.Errorf("Initdb of an empty cluster: %v; empty %v, running %v", err, cp.Empty(), cp.Cluster.Running())
	}
	if !strings.HasPrefix(cp.Info.Description, "host=") {
		t.Errorf("description %q", cp.Info.Description)
	}
}
