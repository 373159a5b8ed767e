package workload_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/usage"
	"github.com/pgscale/pgscale/internal/workload"
)

// Which scripts use pgbench's tables: a built-in one, or SQL naming one;
// a script of its own tables does not, and an ephemeral cluster then makes
// no pgbench data for it.
func TestUsesPgbenchTables(t *testing.T) {
	for _, tc := range []struct {
		args []workload.ScriptArg
		want bool
	}{
		{[]workload.ScriptArg{{Kind: "b", Arg: "select-only"}}, true},
		{[]workload.ScriptArg{{Kind: "sql", Arg: "knn", Source: "SELECT id FROM items ORDER BY v <-> '(1,2)' LIMIT 5;\n", Weight: 1}}, false},
		{[]workload.ScriptArg{{Kind: "sql", Arg: "fn", Source: "\\set x random(1, 10)\nSELECT f(:x);\n", Weight: 1}}, false},
		{[]workload.ScriptArg{{Kind: "sql", Arg: "acct", Source: "\\set aid random(1, 100000)\nSELECT abalance FROM Pgbench_Accounts WHERE aid = :aid;\n", Weight: 1}}, true},
	} {
		wl, err := workload.Load(workload.Spec{Scripts: tc.args})
		if err != nil {
			t.Fatal(err)
		}
		if got := wl.UsesPgbenchTables(); got != tc.want {
			t.Errorf("%s: uses pgbench's tables %v, want %v", wl.Name, got, tc.want)
		}
	}
}

// The set-up SQL is said as it starts and, when it takes long enough to
// wonder, how long it took; a failing set-up is one line naming it.
func TestSetupSaysItRuns(t *testing.T) {
	createDB(t, "setupnotice")
	var notices []string
	o := workload.PrepareOptions{Setup: "CREATE TABLE s (id int); SELECT pg_sleep(0.1);", SetupName: "--setup s.sql", Where: "test",
		Log: func(s string) { notices = append(notices, s) }}
	if _, err := workload.Prepare(context.Background(), connector("setupnotice"), o); err != nil {
		t.Fatal(err)
	}
	if len(notices) == 0 || notices[0] != "running --setup s.sql..." {
		t.Errorf("notices %q", notices)
	}
	o.Setup = "SELECT no_such_function();"
	start := time.Now()
	_, err := workload.Prepare(context.Background(), connector("setupnotice"), o)
	if err == nil || !usage.Is(err) || !strings.HasPrefix(err.Error(), "--setup s.sql: ") || strings.Contains(err.Error(), "\n") || time.Since(start) > 10*time.Second {
		t.Errorf("failing set-up: %v", err)
	}
	// Interrupted while it runs (Ctrl-C): the run could not complete,
	// which is no mistake of the user's (exit 3, not 2).
	o.Setup = "SELECT pg_sleep(30);"
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	_, err = workload.Prepare(ctx, connector("setupnotice"), o)
	if err == nil || usage.Is(err) || !errors.Is(err, context.Canceled) {
		t.Errorf("interrupted set-up: %v (usage error %v)", err, usage.Is(err))
	}
}

// A database without pgbench's tables, which the workload needs, is
// refused as the user's mistake, offering how they make the tables in
// the words the caller gives (MakeTables), or nothing.
func TestMissingTablesOfferMakeTables(t *testing.T) {
	createDB(t, "notables")
	o := workload.PrepareOptions{NeedTables: true, Where: "db", MakeTables: "make them"}
	want := "db has no pgbench tables (missing pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers)"
	_, err := workload.Prepare(context.Background(), connector("notables"), o)
	if err == nil || !usage.Is(err) || err.Error() != want+": make them" {
		t.Errorf("got %v (usage %v), want the usage error %q", err, usage.Is(err), want+": make them")
	}
	o.MakeTables = ""
	if _, err = workload.Prepare(context.Background(), connector("notables"), o); err == nil || err.Error() != want {
		t.Errorf("offering nothing: got %v, want %q", err, want)
	}
}
