package workload_test

import (
	"testing"

	"github.com/pgscale/pgscale/internal/workload"
)

func TestWrites(t *testing.T) {
	for _, tc := range []struct {
		builtin, sql string
		writes       bool
		first        string
	}{
		{builtin: "select-only"},
		{builtin: "tpcb-like", writes: true, first: "builtin:tpcb-like line 6: UPDATE pgbench_accounts"},
		{builtin: "simple-update", writes: true},
		{sql: "SELECT pg_sleep(0.001);\n"},
		{sql: "BEGIN;\nSELECT 1 FROM pgbench_branches WHERE bid = 1 FOR UPDATE;\nEND;\n", writes: true},
		{sql: "WITH d AS (DELETE FROM pgbench_history RETURNING *) SELECT count(*) FROM d;\n", writes: true},
		{sql: "WITH a AS (SELECT 1) SELECT * FROM a;\n"},
		{sql: "SELECT 1 \\; insert into t values (1);\n", writes: true},
	} {
		cmd, ok := loadOne(t, tc.builtin, tc.sql).Writes()
		if ok != tc.writes || (tc.first != "" && (len(cmd) < len(tc.first) || cmd[:len(tc.first)] != tc.first)) {
			t.Errorf("%s%q: writes %v (%q), want %v", tc.builtin, tc.sql, ok, cmd, tc.writes)
		}
	}
}

// loadOne loads a workload of one script: a built-in, or sql as a script
// called s.
func loadOne(t *testing.T, builtin, sql string) *workload.Loaded {
	t.Helper()
	w := workload.Spec{}
	if builtin != "" {
		w.Scripts = []workload.ScriptArg{{Kind: "b", Arg: builtin}}
	} else {
		w.Scripts = []workload.ScriptArg{{Kind: "sql", Arg: "s", Source: sql, Weight: 1}}
	}
	l, err := workload.Load(w)
	if err != nil {
		t.Fatalf("%s%s: %v", builtin, sql, err)
	}
	return l
}
