package disturbtest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/disturb"
	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/script"
)

// query returns the first column of the first row of sql, or "".
func query(t *testing.T, sql string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgconn.Connect(ctx, cluster.ConnString("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	res := conn.ExecParams(ctx, sql, nil, nil, nil, nil).Read()
	if res.Err != nil {
		t.Fatalf("%s: %v", sql, res.Err)
	}
	if len(res.Rows) == 0 {
		return ""
	}
	return string(res.Rows[0][0])
}

// TestSessionsKeepToTheirWindows drives the Disturber directly, without a
// workload: a statement still running at the window's end is cancelled on
// the server, failures are counted and paced, \gset and \if work, and
// long-txn holds a snapshot open for its window only.
func TestSessionsKeepToTheirWindows(t *testing.T) {
	cfg, err := pgconn.ParseConfig(cluster.ConnString("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	parse := func(name, src string) *script.Script {
		s, err := script.Parse(name, src)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	lt, _ := disturb.Find("long-txn")
	ms := time.Millisecond
	dist := func(name, src string, start, end time.Duration, sessions int) disturb.Disturbance {
		return disturb.Disturbance{Name: name, Spec: name, Script: parse(name, src), Window: disturb.Window{Start: start, End: end}, Sessions: sessions}
	}
	hold := dist("long-txn", lt.Script, 200*ms, 1800*ms, 1)
	hold.Hold = true
	dt := &disturb.Disturber{Conn: cfg, Disturbances: []disturb.Disturbance{
		dist("sleeper", "SELECT pg_sleep(30);\n", 500*ms, 1500*ms, 1),
		dist("failing", "SELECT 1/0;\n", 0, 1000*ms, 2),
		dist("gset", "SELECT 2 AS two \\gset\n\\if :two != 2\nSELECT 1/0;\n\\endif\n", 0, 1000*ms, 1),
		hold,
	}}
	ctx := context.Background()
	t0 := time.Now()
	if err := dt.Start(ctx, observe.StepInfo{Clients: 1, Start: t0, Window: t0, Duration: 2 * time.Second}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(t0.Add(1200 * ms)))
	heldXmin := query(t, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pgscale disturbance long-txn' AND state = 'idle in transaction' AND backend_xmin IS NOT NULL")
	time.Sleep(time.Until(t0.Add(2 * time.Second)))
	step := result.Step{Clients: 1, ElapsedS: 2}
	if err := dt.Stop(ctx, &step); err != nil {
		t.Fatal(err)
	}
	if heldXmin != "1" {
		t.Errorf("long-txn during its window: %s sessions idle in transaction with a snapshot; want 1", heldXmin)
	}
	if n := query(t, "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(30)%' AND state = 'active'"); n != "0" {
		t.Errorf("%s pg_sleep still running on the server after its window", n)
	}
	if n := query(t, "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'pgscale disturbance%'"); n != "0" {
		t.Errorf("%s disturbance sessions still connected after Stop", n)
	}
	got := map[string]result.Disturbance{}
	for _, d := range step.Disturbances {
		got[d.Name] = d
	}
	if d := got["sleeper"]; d.Iterations != 0 || d.CutOff != 1 || d.Errors != 0 || d.RanS < 0.9 || d.RanS > 1.4 {
		t.Errorf("sleeper: %d iterations, %d cut off, %d errors, ran %.2f s; want 0, 1, 0, about 1 s", d.Iterations, d.CutOff, d.Errors, d.RanS)
	}
	// Two sessions failing for 1 s, pausing 10, 20, 40 ... ms between
	// failures: about 7 failures each, never a spin.
	if d := got["failing"]; d.Iterations != 0 || d.Errors < 4 || d.Errors > 30 || len(d.ErrorMessages) != 1 ||
		!strings.Contains(d.ErrorMessages[0].Message, "division by zero") || d.ErrorMessages[0].Count != d.Errors {
		t.Errorf("failing: %d iterations, %d errors %+v; want 0 and a paced few, all division by zero", d.Iterations, d.Errors, d.ErrorMessages)
	}
	if d := got["gset"]; d.Iterations < 10 || d.Errors != 0 {
		t.Errorf("gset: %d iterations, %d errors %+v; want many, none", d.Iterations, d.Errors, d.ErrorMessages)
	}
	if d := got["long-txn"]; d.Iterations != 1 || d.Errors != 0 || d.RanS < 1.5 || d.RanS > 1.8 {
		t.Errorf("long-txn: %d iterations, %d errors, ran %.2f s; want 1, 0, 1.6 s", d.Iterations, d.Errors, d.RanS)
	}
}
