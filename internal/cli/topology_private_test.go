package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
	"github.com/pgscale/pgscale/internal/workload"
)

// A workload that cannot run where its targets send it is refused in one
// line naming the target and the statements: writes through a definition
// (or a pgbouncer: that balances) that may send them to a replica; a transaction whose writes a sharding
// definition routes to more than one of its servers. What fits runs: reads
// anywhere, and writes of one key value through the sharding one; so does
// anything through a sharding definition in front of one server.
func TestTopologyRefusals(t *testing.T) {
	dir := t.TempDir()
	def := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("command: pgbouncer {{dir}}/x.ini\n"+text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sharded := def("sharded.yaml", "of: [s1, s2]\nshards: {pgbench_accounts: aid, pgbench_history: aid}\n")
	balanced := def("balanced.yaml", "read_only: true\n")
	one := def("one.yaml", "of: s1\nshards: {pgbench_accounts: aid, pgbench_history: aid}\n")
	for _, tc := range []struct {
		name, target, builtin, want string
	}{
		{"sharded, tpcb-like", "p=proxy:" + sharded, "tpcb-like", "p (proxy:" + sharded + ") shards pgbench_accounts by aid and pgbench_history by aid over 2 servers, and a transaction of the workload writes beyond one shard (builtin:tpcb-like line 6: UPDATE pgbench_accounts ... (by aid = :aid), and line 8: UPDATE pgbench_tellers ... (not sharded: every shard))"},
		{"sharded, simple-update", "p=proxy:" + sharded, "simple-update", ""},
		{"sharded, select-only", "p=proxy:" + sharded, "select-only", ""},
		{"one shard, tpcb-like", "p=proxy:" + one, "tpcb-like", ""},
		{"balanced, simple-update", "p=proxy:" + balanced + ",of=s1", "simple-update", "p (proxy:" + balanced + ") is read_only: it may send any statement to a replica, and the workload writes (builtin:simple-update line 6: UPDATE pgbench_accounts"},
		{"balanced, select-only", "p=proxy:" + balanced + ",of=s1", "select-only", ""},
		{"balancing pgbouncer, tpcb-like", "p=pgbouncer:balance=round-robin,of=s1", "tpcb-like", "p (pgbouncer:balance=round-robin) is read_only: it may send any statement to a replica, and the workload writes (builtin:tpcb-like line 6: UPDATE pgbench_accounts"},
		{"balancing pgbouncer, select-only", "p=pgbouncer:balance=round-robin,of=s1", "select-only", ""},
		{"pgbouncer, tpcb-like", "p=pgbouncer:of=s1", "tpcb-like", ""},
	} {
		specs, err := target.ParseSpecs([]string{"s1=settings:", "s2=settings:", tc.target}, "", 2)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		wl, err := workload.Load(workload.Spec{Scripts: []workload.ScriptArg{{Kind: "b", Arg: tc.builtin}}})
		if err != nil {
			t.Fatal(err)
		}
		err = checkTopology(specs, wl)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.want != "" && (err == nil || !usage.Is(err) || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%s: %v\nwant one usage line beginning %q", tc.name, err, tc.want)
		}
	}
}
