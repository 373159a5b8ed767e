package workload_test

import (
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/workload"
)

// A transaction whose writes a sharding pooler would route to more than
// one shard is found, named by its script's lines and how each routes;
// one whose writes all route by one value of the key is not.
func TestCrossShard(t *testing.T) {
	accounts := []workload.Shard{{Table: "pgbench_accounts", Column: "aid"}}
	byAid := append(accounts, workload.Shard{Table: "public.pgbench_history", Column: "aid"})
	all := []workload.Shard{{Table: "pgbench_accounts", Column: "aid"}, {Table: "pgbench_tellers", Column: "tid"},
		{Table: "pgbench_branches", Column: "bid"}, {Table: "pgbench_history", Column: "aid"}}
	for _, tc := range []struct {
		name, builtin, sql string
		shards             []workload.Shard
		want               string // "" for none
	}{
		{name: "reads", builtin: "select-only", shards: all},
		{name: "tpcb-like, accounts sharded", builtin: "tpcb-like", shards: accounts,
			want: "builtin:tpcb-like line 6: UPDATE pgbench_accounts ... (by aid = :aid), and line 8: UPDATE pgbench_tellers ... (not sharded: every shard)"},
		{name: "tpcb-like, all by their keys", builtin: "tpcb-like", shards: all, want: "(by aid = :aid), and line 8: UPDATE pgbench_tellers ... (by tid = :tid)"},
		{name: "simple-update, accounts and history by aid", builtin: "simple-update", shards: byAid},
		{name: "simple-update, history not sharded", builtin: "simple-update", shards: accounts, want: "(not sharded: every shard)"},
		{name: "autocommit writes", sql: "UPDATE pgbench_accounts SET abalance = 0 WHERE aid = :aid;\nUPDATE pgbench_tellers SET tbalance = 0 WHERE tid = :tid;\n", shards: accounts},
		{name: "compound", sql: "UPDATE pgbench_accounts SET abalance = 0 WHERE aid = :a \\; UPDATE pgbench_accounts SET abalance = 0 WHERE aid = :b;\n", shards: accounts, want: "(by aid = :b)"},
		{name: "not by the key", sql: "BEGIN;\nUPDATE pgbench_accounts SET abalance = 0 WHERE aid = 1;\nDELETE FROM pgbench_accounts WHERE abalance > 0;\nEND;\n", shards: accounts, want: "s line 2: UPDATE pgbench_accounts ... (by aid = 1), and line 3: DELETE FROM pgbench_accounts ... (not by aid: every shard)"},
		{name: "one key value", sql: "BEGIN;\nUPDATE pgbench_accounts SET abalance = 0 WHERE aid = :aid;\nINSERT INTO pgbench_history (aid, delta) VALUES (:aid, 1);\nCOMMIT;\n", shards: byAid},
	} {
		got, crosses := loadOne(t, tc.builtin, tc.sql).CrossShard(tc.shards)
		if crosses != (tc.want != "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %v %q, want %q", tc.name, crosses, got, tc.want)
		}
	}
}
