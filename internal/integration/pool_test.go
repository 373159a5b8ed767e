package integration_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/build/buildtest"
	"github.com/pgscale/pgscale/internal/cli"
	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/target/targettest"
	"github.com/pgscale/pgscale/internal/testenv"
)

// 32 clients through the built-in pgbouncer: with a pool of 4 server
// connections, transactions holding theirs 4 ms, most clients wait for one
// while the server idles, and the run says pool-bound with the figures, in
// its output, its markdown, its result file and its HTML report; with a
// pool of 32 the same load is not pool-bound.
func TestPoolBoundThroughPgBouncer(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	targettest.NeedPgBouncer(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "hold.sql")
	if err := os.WriteFile(script, []byte("SELECT pg_sleep(0.004);\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(pool string) (string, string) {
		t.Helper()
		out, md := filepath.Join(dir, "p"+pool+".json"), filepath.Join(dir, "p"+pool+".md")
		code, shown, stderr := pgscale(t, "run", "--dsn", dsn("postgres"), "--pooler", "pgbouncer:default_pool_size="+pool,
			"-f", script, "-M", "simple", "-c", "32", "-T", "3", "-P", "0", "--out", out, "--markdown", md)
		if code != cli.ExitOK {
			t.Fatalf("pool %s: exit %d\n%s", pool, code, stderr)
		}
		return shown, out
	}

	shown, out := run("4")
	f := readResult(t, out)
	s := f.Steps[0]
	p := s.Probes.Pooler()
	if p == nil || p.Total.ClientsWaiting == nil || p.Total.WaitPerTxnUS == nil || p.Total.MaxWaitMs == nil {
		t.Fatalf("the result file lacks the pool's figures: %+v (unavailable %+v)", p, s.Probes.Unavailable)
	}
	if w := p.Total.ClientsWaiting.Mean; w < 16 || w > 29 {
		t.Errorf("%.1f clients waiting on average: want most of the 28 beyond the pool", w)
	}
	// The pool's 4, busy: all 4 active at a sample and never more, and
	// by pgbouncer's own time in transactions over the window (Little's
	// law) 3 or more of them in one on average. The active gauge's mean
	// is 4 samples of a moment each, and read 2.5 once under two CPU hogs.
	if a, x := p.Total.ServersActive, p.Total.XactUS; a == nil || x == nil || a.Max != 4 || *x/(p.WindowS*1e6) < 3 {
		t.Errorf("server connections active %+v, in a transaction %.2f on average: want the pool's 4, busy", a, *x/(p.WindowS*1e6))
	}
	// The pooler's count is the load's, over its own window.
	if n := *p.Total.Transactions; float64(n) < 0.9*float64(p.LoadTransactions) || float64(n) > 1.1*float64(p.LoadTransactions) {
		t.Errorf("pgbouncer counted %d transactions, the load %d in the same window", n, p.LoadTransactions)
	}
	// A transaction's wait for the pool is most of its latency.
	if w, lat := *p.Total.WaitPerTxnUS/1000, s.Summary.Latency.MeanMs; w < 0.5*lat || w > lat {
		t.Errorf("%.1f ms waited per transaction of %.1f ms latency: want most of it", w, lat)
	}
	// On a crowded machine (diagnose.Figures.Crowded) the step may be
	// cpu-bound, mostly other processes, with the waiting clients in its
	// detail: under six CPU hogs (others 95 % of the machine) the pool's
	// backends waited for a CPU 63-69 % of their time and for pgbouncer,
	// itself queued, as long as they slept, 2 of 5 runs.
	verdict, want := diagnose.PoolBound, []string{"pool-bound", "of 32 clients waited for one of 4 server connections (default_pool_size=4)", "the pool, not the server, is the limit", "waited per transaction"}
	switch v := f.Diagnosis; {
	case v == nil:
		t.Fatalf("no diagnosis, want %s", diagnose.PoolBound)
	case diagnose.ComputeIn(f, s).Crowded() && v.Steps[0].Verdict == diagnose.CPUBound && strings.Contains(v.Steps[0].Detail, "mostly other processes"):
		t.Logf("a crowded machine: %s (%s)", v.Steps[0].Verdict, v.Steps[0].Detail)
		verdict, want = diagnose.CPUBound, []string{"cpu-bound", "mostly other processes", "of 32 clients waited for a server connection, which a larger pool would not help", "waited per transaction"}
	case v.Steps[0].Verdict != diagnose.PoolBound:
		t.Fatalf("diagnosis %+v, want %s", v, diagnose.PoolBound)
	}
	md, err := os.ReadFile(filepath.Join(dir, "p4.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		if !strings.Contains(shown, w) {
			t.Errorf("the output lacks %q:\n%s", w, shown)
		}
		if !strings.Contains(strings.ReplaceAll(string(md), `\_`, "_"), w) {
			t.Errorf("the markdown lacks %q", w)
		}
	}
	page := filepath.Join(dir, "p4.html")
	if code, _, stderr := pgscale(t, "report", "--format", "html", out, "-o", page); code != cli.ExitOK {
		t.Fatalf("report html: exit %d\n%s", code, stderr)
	}
	if html, _ := os.ReadFile(page); !strings.Contains(string(html), "clients waiting") || !strings.Contains(string(html), verdict) {
		t.Errorf("the HTML report lacks the clients waiting (its pooler table) or the verdict")
	}

	_, out = run("32")
	f = readResult(t, out)
	if v := f.Diagnosis.Steps[0]; v.Verdict == diagnose.PoolBound {
		t.Errorf("a pool of 32 before 32 clients: %s (%s)", v.Verdict, v.Detail)
	}
	p = f.Steps[0].Probes.Pooler()
	if p == nil || p.Total.ClientsWaiting == nil || p.Total.ServersActive == nil {
		t.Fatalf("a pool of 32 before 32 clients: no pool figures: %+v", p)
	}
	// pgbouncer opens a pool's server connections one at a time as
	// clients wait: on a quiet machine in milliseconds, under two CPU
	// hogs 6 in the whole 3 s step, the clients waiting for them. Once
	// the pool has its 32 connections no client waits for one, however
	// loaded the machine: the step's mean, which counts the filling too,
	// read 11.5 waiting under six hogs with the pool full only late. When
	// most waited while it filled, the verdict says so.
	opened, w := diagnose.ComputeIn(f, f.Steps[0]).Pool.ServersMost, p.Total.ClientsWaiting.Mean
	switch share, after, ok := waitedOnceFull(p, 32); {
	case !ok:
		t.Logf("the pool had its 32 server connections too late in the step to tell a wait after it (%.1f waiting on average, %d console samples)", w, len(p.Series))
	case share > 0.25:
		t.Errorf("a pool of 32 before 32 clients: once it had its connections (for %.1f s), the clients waited %.0f%% of their time", after, 100*share)
	default:
		t.Logf("once the pool had its 32 server connections (for %.1f s), the clients waited %.1f%% of their time", after, 100*share)
	}
	switch v := f.Diagnosis.Steps[0]; {
	case opened < 32 && w >= 16 && !strings.Contains(v.Detail, "it was still opening them"):
		t.Errorf("a pool of 32 with %.0f server connections opened, %.1f clients waiting: %s (%s), want it said that pgbouncer was still opening them", opened, w, v.Verdict, v.Detail)
	case opened < 32:
		t.Logf("pgbouncer opened %.0f of the pool's 32 server connections in the step, %.1f clients waiting on average", opened, w)
	}
}

// waitedOnceFull is the share of the clients' time they waited for a
// server connection once the pool had size connections, by pgbouncer's
// wait time in the console's intervals after the first that began with
// the pool full (a wait is counted when it ends: the first such interval
// may still end waits from the filling), and that stretch's length; ok is
// false when there is no such interval.
func waitedOnceFull(p *result.Pools, size float64) (share, seconds float64, ok bool) {
	var waited float64
	from := -1
	for i, s := range p.Series {
		if from >= 0 && i > from+1 {
			if s.WaitUS == nil {
				return 0, 0, false
			}
			waited += *s.WaitUS
			seconds += s.TS - p.Series[i-1].TS
		}
		var n float64
		for _, g := range []*float64{s.ServersActive, s.ServersIdle, s.ServersUsed} {
			if g != nil {
				n += *g
			}
		}
		if from < 0 && n >= size {
			from = i
		}
	}
	if seconds <= 0 {
		return 0, 0, false
	}
	return waited / (seconds * 1e6 * size), seconds, true
}

// pgscale build NAME=proxy:FILE makes the build a definition's build:
// names, ahead of the run, with its patch beside the definition (the
// pgbouncer fixture at base with the diff to slow as a patch file): CI
// warms the cache this way. A second call finds it.
func TestBuildProxyDefinition(t *testing.T) {
	trackTime(t)
	testenv.Slow(t) // builds from source (minutes)
	repo := buildtest.PgBouncerSource(t)
	dir := filepath.Join(t.TempDir(), "defs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	patch, err := exec.Command("git", "-C", repo, "diff", "base", "slow").Output()
	if err != nil || len(patch) == 0 {
		t.Fatalf("git diff base slow: %v", err)
	}
	def := "build:\n  source: " + repo + "@base+slow.patch\n  run: ./configure --without-openssl && make\ncommand: \"{{build}}/pgbouncer {{dir}}/pgbouncer.ini\"\n"
	for name, text := range map[string]string{"slow.patch": string(patch), "cand.yaml": def} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range []string{"", "(from the cache, built by: ./configure --without-openssl && make)"} {
		code, out, stderr := pgscale(t, "build", "cand=proxy:"+filepath.Join(dir, "cand.yaml"))
		if code != cli.ExitOK || !strings.HasPrefix(out, "cand: build ") || !strings.Contains(out, want) {
			t.Fatalf("build %d: exit %d, output %q\n%s", i+1, code, out, stderr)
		}
		tree := strings.TrimSpace(out[strings.LastIndex(out, ": ")+2:])
		if src, err := os.ReadFile(filepath.Join(tree, "src", "client.c")); err != nil || !strings.Contains(string(src), "pgscale fixture") {
			t.Errorf("build %d: %s/src/client.c lacks the patch's loop (%v)", i+1, tree, err)
		}
	}
	// A target that builds nothing says so in one line, exit 2.
	code, _, stderr := pgscale(t, "build", "p=proxy:"+targettest.Example(t, "pgbouncer"))
	if code != cli.ExitUsage || !strings.Contains(stderr, "this target builds nothing") {
		t.Errorf("a definition without build: exit %d\n%s", code, stderr)
	}
}

// The balancing PgBouncer (examples/proxy/pgbouncer-balanced.yaml: a host
// list of the primary and its replica) spreads select-only's reads over
// both; a workload that writes through it is refused before anything
// starts, in one line naming it and the write, by run and by a suite's
// cell (the pooler-ci preset's tpcb-like cell), exit 2, no bundle left.
func TestBalancedPgBouncer(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	targettest.NeedPgBouncer(t)
	def := targettest.Example(t, "pgbouncer-balanced")
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	code, stdout, stderr := pgscale(t, "run", "--replicas", "1", "--pooler", "proxy:"+def, "-S", "-M", "simple", "-c", "8", "-T", "2", "-P", "0", "--out", out)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	u := readResult(t, out).Steps[0].Probes.Upstreams()
	if u == nil || len(u.Servers) != 2 {
		t.Fatalf("upstreams %+v", u)
	}
	// pgbouncer opens its server connections to the hosts in turn and
	// hands out the idle ones in turn: how many it opened to each sets
	// the split (here 54/46 to 84/16), never all on one.
	for _, s := range u.Servers {
		t.Logf("%s (%s): share %.2f", s.Name, s.Role, s.Share)
		if s.Statements == nil || *s.Statements < 100 || s.Share < 0.1 {
			t.Errorf("%s (%s) share %.2f: the host list should spread the reads over both", s.Name, s.Role, s.Share)
		}
	}

	const refused = "is read_only: it may send any statement to a replica, and the workload writes (builtin:tpcb-like line 6: UPDATE pgbench_accounts"
	code, _, stderr = pgscale(t, "run", "--replicas", "1", "--pooler", "proxy:"+def, "-b", "tpcb-like", "-M", "simple", "-c", "2", "-T", "2", "--out", filepath.Join(dir, "w.json"))
	if code != cli.ExitUsage || !strings.Contains(stderr, "the pooler (proxy:"+def+") "+refused) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("tpcb-like through it: exit %d, want %d and one line:\n%s", code, cli.ExitUsage, stderr)
	}
	bundle := filepath.Join(dir, "suite")
	code, _, stderr = pgscale(t, "suite", "--preset", "pooler-ci", "--quick", "--param", "base=proxy:"+def, "--param", "cand=proxy:"+def, "--out", bundle)
	if code != cli.ExitUsage || !strings.HasPrefix(stderr, "pgscale: cell workload=tpcb-like: base (proxy:"+def+") "+refused) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("the preset's tpcb-like cell through it: exit %d, want %d and one line:\n%s", code, cli.ExitUsage, stderr)
	}
	if _, err := os.Stat(bundle); !os.IsNotExist(err) {
		t.Errorf("a refused suite left %s (%v)", bundle, err)
	}
}

// A pgbouncer built from source in one word (pgbouncer:src=, the fixture
// at slow, found in the build cache the build tests filled, or built)
// balancing select-only's reads over a primary and its replica
// (balance=round-robin), its build said in the result and the report's
// head; a workload that writes through a balancing pgbouncer is refused
// before anything starts. About 10 s with the build cached.
func TestPgBouncerFromSourceBalanced(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	repo := buildtest.PgBouncerSource(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	code, stdout, stderr := pgscale(t, "run", "--replicas", "1", "--pooler", "pgbouncer:src="+repo+"@slow,balance=round-robin", "-S", "-M", "simple", "-c", "8", "-T", "2", "-P", "0", "--out", out)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, lastLines(stderr, 10))
	}
	f := readResult(t, out)
	if b := f.Target.Pooler.Build; b == nil || b.Source != repo+"@slow" || b.Command != "./configure --without-openssl && make" || b.Commit == "" {
		t.Errorf("the pooler's build: %+v", b)
	}
	if f.Target.Pooler.Settings["server_round_robin"] != "1" {
		t.Errorf("settings %v: want server_round_robin=1", f.Target.Pooler.Settings)
	}
	if !strings.Contains(stdout, "pooler:   pgbouncer built from "+repo+"@slow (commit ") {
		t.Errorf("the head does not say the pooler's build:\n%s", lastLines(stdout, 60))
	}
	u := f.Steps[0].Probes.Upstreams()
	if u == nil || len(u.Servers) != 2 {
		t.Fatalf("upstreams %+v", u)
	}
	for _, s := range u.Servers {
		t.Logf("%s (%s): share %.2f", s.Name, s.Role, s.Share)
		if s.Statements == nil || *s.Statements < 100 || s.Share < 0.1 {
			t.Errorf("%s (%s) share %.2f: balance=round-robin should spread the reads over both", s.Name, s.Role, s.Share)
		}
	}
	code, _, stderr = pgscale(t, "run", "--replicas", "1", "--pooler", "pgbouncer:balance=round-robin", "-b", "tpcb-like", "-M", "simple", "-c", "2", "-T", "2", "--out", filepath.Join(dir, "w.json"))
	want := "the pooler (pgbouncer:balance=round-robin) is read_only: it may send any statement to a replica, and the workload writes (builtin:tpcb-like line 6: UPDATE pgbench_accounts"
	if code != cli.ExitUsage || !strings.Contains(stderr, want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("tpcb-like through a balancing pgbouncer: exit %d, want %d and one line:\n%s", code, cli.ExitUsage, stderr)
	}
}

// A suite's cell on targets of its own (cells:): the tpcb-like cell
// through pgbouncer in front of a primary and its replica sends every
// statement to the primary; the select-only cell, on the balancing
// definition under the same target name, has the targets in use closed
// and its own opened, and spreads its reads over both. The same suite
// giving the balancing definition to the tpcb-like cell is refused before
// anything starts, in one line naming the cell, the target and the write,
// exit 2, no bundle, and so is its tpcb-like cell through a sharding
// definition (its transaction writes beyond one shard); a parameter given
// without the one that goes with it (given_together:) is said before the
// run. The select-only cell's targets are opened once before the first
// cell measures, and a balancing definition pgbouncer refuses is refused
// then, before any cell, in seconds. About 50 s on 2 loaded cores (load
// average 13), the refusals under a second but the broken definition's
// (its servers start first: about 6 s).
func TestSuiteCellsOnTargetsOfTheirOwn(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	targettest.NeedPgBouncer(t)
	def := targettest.Example(t, "pgbouncer-balanced")
	dir := t.TempDir()
	file := filepath.Join(dir, "cells.yaml")
	src := `name: cells
targets: ["p={{plain}},of='settings:replicas=1'"]
params: {plain: "pgbouncer:", balanced: "proxy:` + def + `"}
given_together: [[plain, balanced]]
matrix:
  workload: [tpcb-like, select-only]
scripts:
  - builtin: "{{workload}}"
cells:
  - where: workload=select-only
    targets: ["p={{balanced}},of='settings:replicas=1'"]
protocol: simple
clients: [4]
duration: 2s
warmup: 0.5s
`
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(dir, "bundle")
	code, stdout, stderr := pgscale(t, "suite", file, "--out", bundle, "--param", "plain=pgbouncer:default_pool_size=8")
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, lastLines(stderr, 10))
	}
	// A parameter given without the one that goes with it: said before
	// the run, not refused.
	if !strings.Contains(stderr, "pgscale: note: --param plain is given without balanced, which cells takes with it: in the cells workload=select-only, p is balanced, left at its default (proxy:"+def+"): give --param balanced=... too\n") {
		t.Errorf("no note of the parameter given apart:\n%s", stderr)
	}
	if !strings.Contains(stderr, "cell workload=select-only runs on targets of its own: p=proxy:"+def) {
		t.Errorf("the reopening is not said:\n%s", stderr)
	}
	// The select-only cell's targets were checked before the first cell.
	if check, first := strings.Index(stderr, "checking cell workload=select-only's targets before the first cell measures"), strings.Index(stderr, "cell 1/2"); check < 0 || first < check {
		t.Errorf("the select-only cell's targets are not checked before the first cell:\n%s", stderr)
	}
	x, err := result.ReadSuiteIndex(bundle)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range x.Cells {
		f := readResult(t, filepath.Join(bundle, c.Dir, c.Files[0]))
		u := f.Steps[0].Probes.Upstreams()
		if u == nil || len(u.Servers) != 2 {
			t.Fatalf("cell %s: upstreams %+v", c.Key, u)
		}
		for _, s := range u.Servers {
			n := int64(0)
			if s.Statements != nil {
				n = *s.Statements
			}
			t.Logf("cell %s: %s (%s) share %.2f, %d statements", c.Key, s.Name, s.Role, s.Share, n)
			switch {
			case c.Key == "workload=tpcb-like" && s.Role == "replica" && n != 0,
				c.Key == "workload=tpcb-like" && s.Role == "primary" && n < 100:
				t.Errorf("cell %s: %s has %d statements: want every one on the primary", c.Key, s.Role, n)
			case c.Key == "workload=select-only" && (n < 100 || s.Share < 0.1):
				t.Errorf("cell %s: %s share %.2f: the balancing definition should spread the reads over both", c.Key, s.Role, s.Share)
			}
		}
		// Each cell's file records the target it ran on.
		if kind := map[string]string{"workload=tpcb-like": "pgbouncer", "workload=select-only": "proxy"}[c.Key]; f.Target.Kind != kind {
			t.Errorf("cell %s ran on a %s target, want %s", c.Key, f.Target.Kind, kind)
		}
	}

	// A balancing definition pgbouncer refuses (load_balance_hosts as a
	// [pgbouncer] setting, which 1.24 and later take in [databases] only,
	// and 1.18 nowhere): refused before the first cell measures, in
	// seconds, naming the cell, the target and pgbouncer's own line, with
	// no bundle.
	ex, err := os.ReadFile(def)
	if err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(dir, "broken.yaml")
	if err := os.WriteFile(broken, []byte(strings.Replace(string(ex), "    server_round_robin = 1\n", "    server_round_robin = 1\n    load_balance_hosts = round-robin\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	none := filepath.Join(dir, "none")
	started := time.Now()
	code, _, stderr = pgscale(t, "suite", file, "--out", none, "--param", "balanced=proxy:"+broken)
	took := time.Since(started)
	want := "pgscale: cell workload=select-only (its targets checked before the first cell measures): target p: pgbouncer exited during start-up: "
	if code != cli.ExitIncomplete || !strings.Contains(stderr, want) || !strings.Contains(stderr, "unknown parameter: pgbouncer/load_balance_hosts") || strings.Contains(stderr, "cell 1/2") {
		t.Errorf("a broken balancing definition: exit %d, want %d and %q before any cell:\n%s", code, cli.ExitIncomplete, want, stderr)
	}
	t.Logf("a broken definition of the second cell refused in %s", took.Round(100*time.Millisecond))
	if _, err := os.Stat(none); !os.IsNotExist(err) {
		t.Errorf("a refused suite left %s (%v)", none, err)
	}

	// The balancing definition in the writing cell: refused, one line.
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(strings.Replace(src, "where: workload=select-only", "where: workload=tpcb-like", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = pgscale(t, "suite", bad, "--out", none)
	want = "pgscale: cell workload=tpcb-like: p (proxy:" + def + ") is read_only: it may send any statement to a replica, and the workload writes (builtin:tpcb-like line 6: UPDATE pgbench_accounts"
	if code != cli.ExitUsage || !strings.HasPrefix(stderr, want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("exit %d, want %d and one line beginning %q:\n%s", code, cli.ExitUsage, want, stderr)
	}
	if _, err := os.Stat(none); !os.IsNotExist(err) {
		t.Errorf("a refused suite left %s (%v)", none, err)
	}

	// A cell through a sharding definition (shards:, in front of two
	// servers of its own) whose transaction writes beyond one shard: the
	// same, naming the cell and the two writes.
	shardDef := filepath.Join(dir, "sharded.yaml")
	if err := os.WriteFile(shardDef, []byte("command: pgbouncer {{dir}}/x.ini\nshards: {pgbench_accounts: aid, pgbench_history: aid}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sharded := strings.NewReplacer("p={{balanced}},of='settings:replicas=1'", "p=proxy:"+shardDef+",of='settings:',of='settings:'",
		"where: workload=select-only", "where: workload=tpcb-like", "given_together: [[plain, balanced]]\n", "",
		`, balanced: "proxy:`+def+`"`, "").Replace(src)
	if err := os.WriteFile(bad, []byte(sharded), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = pgscale(t, "suite", bad, "--out", none)
	want = "pgscale: cell workload=tpcb-like: p (proxy:" + shardDef + ") shards pgbench_accounts by aid and pgbench_history by aid over 2 servers, and a transaction of the workload writes beyond one shard (builtin:tpcb-like line 6: UPDATE pgbench_accounts ... (by aid = :aid), and line 8: UPDATE pgbench_tellers ... (not sharded: every shard))"
	if code != cli.ExitUsage || !strings.HasPrefix(stderr, want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("sharded: exit %d, want %d and one line beginning %q:\n%s", code, cli.ExitUsage, want, stderr)
	}
	if _, err := os.Stat(none); !os.IsNotExist(err) {
		t.Errorf("a refused suite left %s (%v)", none, err)
	}

	// pooler-ci: a pgbouncer given for base is balanced in the select-only
	// cell, base_balanced derived from it: nothing to note. A balancing
	// definition given without its plain one is noted.
	code, stdout, _ = pgscale(t, "suite", "--preset", "pooler-ci", "--quick", "--dry-run", "--param", "base=pgbouncer:default_pool_size=5")
	if code != cli.ExitOK || strings.Contains(stdout, "note: --param") || !strings.Contains(stdout, "workload=select-only  on base=pgbouncer:of='settings:replicas=1',balance=round-robin,default_pool_size=5, cand=") {
		t.Errorf("--dry-run: exit %d, base_balanced not derived from base:\n%s", code, stdout)
	}
	code, stdout, _ = pgscale(t, "suite", "--preset", "pooler-ci", "--quick", "--dry-run", "--param", "base_balanced=proxy:"+def)
	if code != cli.ExitOK || !strings.Contains(stdout, "pgscale: note: --param base_balanced is given without base, which pooler-ci takes with it: pooler-ci's base is base, left at its default (pgbouncer:)") {
		t.Errorf("--dry-run: exit %d, no note of the parameter given apart:\n%s", code, stdout)
	}
}
