package engine_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/engine"
	"github.com/pgscale/pgscale/internal/load"
	"github.com/pgscale/pgscale/internal/testenv"
)

// With Quiesce the window's edges fall between transactions: between the
// two calls the server runs exactly the transactions counted (here each
// one a row inserted), none of the warm-up's, and every client is still
// connected at the end.
func TestQuiesceEdgesAreExact(t *testing.T) {
	testenv.Slow(t)
	exec(t, "DROP TABLE IF EXISTS quiesce; CREATE TABLE quiesce (n int)")
	count := func() int {
		n, _ := strconv.Atoi(exec(t, "SELECT count(*) FROM quiesce"))
		return n
	}
	var at [2]int
	var connected int
	var edges []engine.Edge
	const clients, tx = 3, 40
	r := run(t, engine.Config{Settings: load.Settings{Transactions: tx, Warmup: 300 * time.Millisecond, MaxTries: 1}, Program: program(t, clients, "INSERT INTO quiesce VALUES (1);"), Clients: clients, Protocol: engine.Prepared, Quiesce: func(e engine.Edge) error {
		edges = append(edges, e)
		// A transaction still running would land meanwhile; and the
		// window's clock must not run.
		time.Sleep(map[engine.Edge]time.Duration{engine.WindowStart: time.Second, engine.WindowEnd: 50 * time.Millisecond}[e])
		at[e] = count()
		if e == engine.WindowEnd {
			connected, _ = strconv.Atoi(exec(t, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pgscale'"))
		}
		return nil
	}})
	if len(edges) != 2 || edges[0] != engine.WindowStart || edges[1] != engine.WindowEnd {
		t.Fatalf("edges %v, want start then end", edges)
	}
	if at[engine.WindowStart] == 0 {
		t.Error("no warm-up transaction ran before the window")
	}
	if got := at[engine.WindowEnd] - at[engine.WindowStart]; got != clients*tx || r.Total.Transactions != clients*tx {
		t.Errorf("the server ran %d transactions in the window and %d were counted, want %d both", got, r.Total.Transactions, clients*tx)
	}
	if n := count(); n != at[engine.WindowEnd] {
		t.Errorf("%d rows after the step, %d at its end", n, at[engine.WindowEnd])
	}
	if connected != clients {
		t.Errorf("%d clients connected at the window's end, want %d", connected, clients)
	}
	if r.Elapsed <= 0 || r.Elapsed >= time.Second {
		t.Errorf("measured window %v: want the transactions' time alone, not the second spent at its start", r.Elapsed)
	}

	// A warm-up of a transaction count runs exactly that many.
	at = [2]int{}
	base := count()
	r = run(t, engine.Config{Settings: load.Settings{Transactions: tx, MaxTries: 1}, Program: program(t, clients, "INSERT INTO quiesce VALUES (1);"), Clients: clients, WarmupTransactions: 7, Protocol: engine.Prepared, Quiesce: func(e engine.Edge) error { at[e] = count(); return nil }})
	if at[engine.WindowStart]-base != clients*7 || at[engine.WindowEnd]-at[engine.WindowStart] != clients*tx || r.Total.Transactions != clients*tx {
		t.Errorf("warm-up ran %d transactions (want %d), the window %d (want %d, counted %d)",
			at[engine.WindowStart]-base, clients*7, at[engine.WindowEnd]-at[engine.WindowStart], clients*tx, r.Total.Transactions)
	}
	if false {
		t.Errorf("measured window %v: want the transactions' time alone, not the second spent at its start", r.Elapsed)
	}
}
