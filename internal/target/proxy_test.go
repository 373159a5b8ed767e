package target_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/procfs"

	"github.com/pgscale/pgscale/internal/build/buildtest"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/target/targettest"
	"github.com/pgscale/pgscale/internal/testenv"
	"github.com/pgscale/pgscale/internal/usage"
)

// openProxy opens the package's cluster as target direct and a proxy
// target in front of it from the definition in file; it closes both when
// the test ends.
func openProxy(t *testing.T, file string, clients int) ([]*target.Server, error) {
	t.Helper()
	specs, err := target.ParseSpecs([]string{"direct=dsn:" + cluster.ConnString("postgres"), "p=proxy:" + file}, "", 2)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	servers, err := target.OpenAll(ctx, specs, target.ClusterOptions{}, target.Needs{Clients: clients, Connections: clients}, nil)
	t.Cleanup(func() {
		for _, s := range servers {
			s.Close()
		}
	})
	return servers, err
}

// writeDef writes a proxy definition into a temporary file.
func writeDef(t *testing.T, def string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "proxy.yaml")
	if err := os.WriteFile(p, []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// tree lists pid and every process below it.
func tree(pid int) []int {
	procs, _ := procfs.AllProcs()
	parent := map[int]int{}
	for _, p := range procs {
		if st, err := p.Stat(); err == nil && st.State != "Z" {
			parent[st.PID] = st.PPID
		}
	}
	var out []int
	for p := range parent {
		for a := p; a > 1; a = parent[a] {
			if a == pid {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// checkProxy checks that queries pass through a proxy target to the
// package's cluster, that it records what it ran, and that Close leaves
// nothing of it: no process of its tree, no directory.
func checkProxy(t *testing.T, servers []*target.Server, program string, minProcs int) {
	t.Helper()
	srv := servers[1]
	px, ok := srv.Pooler.(*target.Proxy)
	if !ok || srv.Origin() != servers[0] {
		t.Fatalf("pooler %T, origin %p (direct is %p)", srv.Pooler, srv.Origin(), servers[0])
	}
	// work_mem=7MB is this package's cluster setting: the query reached it.
	if got := query(t, px.ConnString("postgres"), "SELECT current_setting('work_mem')"); got != "7MB" {
		t.Errorf("through the proxy: work_mem = %q, want the cluster's 7MB", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv.RecordInfo(ctx)
	in := srv.Info
	if in.Kind != "proxy" || in.Pooler == nil || in.Pooler.Program != program || in.Pooler.Of != "direct" ||
		!strings.Contains(in.Pooler.Command, px.Dir) || len(in.Pooler.Files) == 0 || in.Settings["work_mem"] != "7MB" {
		t.Errorf("target info %+v, pooler %+v", in, in.Pooler)
	}
	for name, text := range in.Pooler.Files {
		if strings.Contains(text, "{{") {
			t.Errorf("file %s recorded unrendered: %s", name, text)
		}
	}
	pid := px.PID()
	if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); strings.TrimSpace(string(comm)) != program {
		t.Errorf("the pooler's pid %d is %q, want %s itself (a simple command is exec'd)", pid, comm, program)
	}
	var lim syscall.Rlimit
	syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	if got := procLimit(t, pid); got != lim.Max {
		t.Errorf("%s's open-files limit is %d, want the hard limit %d", program, got, lim.Max)
	}
	procs := append(tree(pid), pid)
	if len(procs) < minProcs {
		t.Errorf("%s's tree has %d processes, want at least %d", program, len(procs), minProcs)
	}
	srv.Close()
	time.Sleep(50 * time.Millisecond)
	for _, p := range procs {
		if syscall.Kill(p, 0) == nil && !strings.Contains(procStat(p), ") Z") {
			t.Errorf("process %d of %s's tree survives Close", p, program)
		}
	}
	if _, err := os.Stat(px.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s's directory %s left after Close (%v)", program, px.Dir, err)
	}
	if conn, err := servers[0].Connect(ctx); err != nil {
		t.Errorf("closing the proxy closed the server it fronts: %v", err)
	} else {
		conn.Close(ctx)
	}
}

func procStat(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return string(b)
}

// pgbouncer started through a proxy definition (the repository's example)
// pools the cluster like the built-in pgbouncer: target.
func TestProxyPgBouncer(t *testing.T) {
	needPgBouncer(t)
	servers, err := openProxy(t, targettest.Example(t, "pgbouncer"), 20)
	if err != nil {
		t.Fatal(err)
	}
	if ini := servers[1].Info.Pooler.Files["pgbouncer.ini"]; !strings.Contains(ini, "host="+cluster.SocketDir) || !strings.Contains(ini, "max_client_conn = 30") {
		t.Errorf("pgbouncer.ini as written: %s", ini)
	}
	checkProxy(t, servers, "pgbouncer", 1)
}

// pgpool-II (a process per client slot, forked by its main process) in
// front of the cluster: queries pass, its whole tree is the pooler's and
// goes with it.
func TestProxyPgpool(t *testing.T) {
	targettest.NeedPgpool(t)
	servers, err := openProxy(t, targettest.Example(t, "pgpool"), 4)
	if err != nil {
		t.Fatal(err)
	}
	checkProxy(t, servers, "pgpool", 4+10)
}

// A proxy that exits at start, or never answers, fails the open with one
// line that says so and carries its output (hostile text and all, as
// text); nothing of it is left. A program that is not there, or a
// template that names nothing, is a usage error before anything starts.
func TestProxyFailures(t *testing.T) {
	testenv.Slow(t)
	exits := writeDef(t, `command: "echo '<script>alert(1)</script> no such option: {{port}}' >&2; exit 3"
ready: 5s
`)
	servers, err := openProxy(t, exits, 1)
	if err == nil || servers[1] != nil {
		t.Fatalf("a proxy that exits at start opened: %v", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "exited during start-up") || !strings.Contains(msg, "<script>alert(1)</script> no such option") ||
		strings.Contains(msg, "\n") || usage.Is(err) || !strings.HasPrefix(msg, "target p: ") {
		t.Errorf("exits at start: %q", msg)
	}
	never := writeDef(t, "command: sleep 654321\nready: 1s\n")
	start := time.Now()
	servers, err = openProxy(t, never, 1)
	if err == nil || servers[1] != nil {
		t.Fatalf("a proxy that never answers opened: %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "sleep did not answer a startup and SELECT 1 within 1s") || strings.Contains(msg, "\n") {
		t.Errorf("never ready: %q", msg)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("giving up on a proxy that never answers took %v", took)
	}
	procs, _ := procfs.AllProcs()
	for _, p := range procs {
		if cl, _ := p.CmdLine(); strings.HasSuffix(strings.Join(cl, " "), "sleep 654321") {
			t.Errorf("the proxy that never answered survives: pid %d", p.PID)
		}
	}
	for _, def := range []struct{ text, want string }{
		{"command: no-such-pooler {{dir}}/x.ini\n", "proxy program not found"},
		{"command: /no/such/pooler\n", "not an executable file"},
	} {
		if _, err := openProxy(t, writeDef(t, def.text), 1); !usage.Is(err) || !strings.Contains(err.Error(), def.want) {
			t.Errorf("%q: %v, want a usage error with %q", def.text, err, def.want)
		}
	}
	for _, def := range []struct{ text, want string }{
		{"command: pgbouncer {{nope}}\n", `function "nope" not defined`},
		{"files: {a.ini: x}\n", "command: the program's command line is missing"},
		{"command: x\nready: soon\n", `ready: "soon" is not a duration`},
		{"command: x\nfiles: {../a.ini: x}\n", "a file name, without a directory"},
		{"command: x\nflavour: mint\n", "unknown field"},
	} {
		_, err := target.ParseSpec("p=proxy:" + writeDef(t, def.text))
		if err == nil || !strings.Contains(err.Error(), def.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want one line with %q", def.text, err, def.want)
		}
	}
}

// The templates see every upstream, in order, and the first as
// {{upstream.NAME}}; the definition's of: is the spec's default.
func TestProxyTemplates(t *testing.T) {
	def := writeDef(t, `command: /bin/sh -c 'cat {{dir}}/up.txt; exec sleep 600'
files:
  up.txt: |
    first {{upstream.name}} {{upstream.host}}:{{upstream.port}} {{upstream.user}}/{{upstream.database}}
    {{range .Upstreams}}{{.Index}} {{.Name}} {{.Role}} {{.Port}}
    {{end}}clients {{clients}} port {{port}}
of: [s1, s2]
`)
	specs, err := target.ParseSpecs([]string{"s1=dsn:" + cluster.ConnString("postgres"), "s2=dsn:" + cluster.TCPConnString("postgres"),
		"p=proxy:" + def}, "", 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := specs[2].Of; len(got) != 2 || got[0] != "s1" || got[1] != "s2" {
		t.Fatalf("of %v, want the definition's [s1 s2]", got)
	}
	if s := specs[2].String(); s != "p=proxy:of=s1,of=s2,"+def {
		t.Errorf("String() = %q", s)
	}
	px, err := target.StartProxy(context.Background(), target.ProxyOptions{
		Def:       target.ProxyDef{Command: "cat {{dir}}/up.txt; exec sleep 600", Files: []target.ProxyFile{{Name: "up.txt", Template: "{{upstream.port}} {{range .Upstreams}}{{.Name}},{{end}} {{clients}}\n"}}, Ready: 200 * time.Millisecond},
		Upstreams: []target.Upstream{{Name: "s1", Host: "/tmp", Port: 1, User: "u", Database: "d"}, {Name: "s2", Host: "h", Port: 2, Role: "replica"}},
		Clients:   7,
	})
	if px != nil {
		defer px.Stop()
	}
	if err == nil || !strings.Contains(err.Error(), "did not answer") {
		t.Fatalf("a proxy that answers nothing: %v", err)
	}
	if got := px.Files["up.txt"]; got != "1 s1,s2, 7\n" {
		t.Errorf("up.txt rendered %q", got)
	}
}

// An ephemeral target with a streaming replica: the replica replays what
// the primary writes (CatchUp), is an upstream of the target, is made
// again with it by Renew, and is gone, processes and directory, after
// Close.
func TestReplicas(t *testing.T) {
	testenv.Slow(t)
	spec, err := target.ParseSpec("a=settings:work_mem=5MB,replicas=1")
	if err != nil || spec.Replicas != 1 || spec.String() != "a=settings:replicas=1,work_mem=5MB" {
		t.Fatalf("ParseSpec: %+v (%s), %v", spec, spec.String(), err)
	}
	if _, err := target.ParseSpec("a=settings:replicas=99"); err == nil || !strings.Contains(err.Error(), "from 0 to 8") {
		t.Errorf("99 replicas: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv, err := target.Open(ctx, spec, target.ClusterOptions{}, target.Needs{Clients: 2, Connections: 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if len(srv.Replicas) != 1 {
		t.Fatalf("%d replicas", len(srv.Replicas))
	}
	check := func() *target.Server {
		t.Helper()
		r := srv.Replicas[0]
		query(t, srv.Cluster.ConnString("postgres"), "CREATE TABLE IF NOT EXISTS replicated AS SELECT 42 AS answer")
		if err := srv.CatchUp(ctx); err != nil {
			t.Fatal(err)
		}
		if got := query(t, r.Cluster.ConnString("postgres"), "SELECT answer FROM replicated"); got != "42" {
			t.Errorf("the replica reads %q from the table made on the primary", got)
		}
		if got := query(t, r.Cluster.ConnString("postgres"), "SELECT pg_is_in_recovery()::text || current_setting('work_mem')"); got != "true5MB" {
			t.Errorf("the replica: in recovery and work_mem %q, want true and the primary's 5MB", got)
		}
		ups := srv.Upstreams()
		if len(ups) != 2 || ups[0].Role != "primary" || ups[1].Role != "replica" || ups[1].Name != "a-replica1" || ups[1].Server != r {
			t.Errorf("upstreams %+v", ups)
		}
		// What the probes are told: the replica knows its primary's place.
		w := srv.Watch()
		if wu := w.Upstreams(); len(wu) != 2 || wu[0].Primary != -1 || wu[1].Primary != 0 || wu[1].Conn != r.Config {
			t.Errorf("watched upstreams %+v", wu)
		}
		if w.PID() != srv.Cluster.PID() || !w.Ephemeral() || w.DataDir() != srv.Cluster.DataDir || w.Pooler() != nil || w.Callgrind() != nil {
			t.Errorf("watched: pid %d (want %d), ephemeral %v, data directory %q, pooler %v, callgrind %v",
				w.PID(), srv.Cluster.PID(), w.Ephemeral(), w.DataDir(), w.Pooler(), w.Callgrind())
		}
		if _, ok := w.BuildConstant("FP_LOCK_SLOTS_PER_BACKEND"); ok {
			t.Error("an installed server's build said its constants")
		}
		return r
	}
	old := check()
	if err := target.Renew(ctx, []*target.Server{srv}); err != nil {
		t.Fatal(err)
	}
	if srv.Replicas[0] == old || old.Cluster.Running() {
		t.Error("Renew kept the old replica")
	}
	check()
	r := srv.Replicas[0]
	pid, dir := r.Cluster.PID(), r.Cluster.Dir
	srv.Close()
	if left := targettest.ProcessesInGroup(pid); len(left) > 0 {
		t.Errorf("replica processes left after Close: %v", left)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("replica directory %s left after Close", dir)
	}
}

// A proxy built from its own source at a revision (the pgbouncer fixture
// at base and slow, built by ./configure && make into the shared build
// cache, or found there): each runs its own build, and the result records
// which.
func TestProxyBuiltFromSource(t *testing.T) {
	needPgBouncer(t)
	testenv.Slow(t) // builds from source (minutes)
	repo := buildtest.PgBouncerSource(t)
	keys := map[string]string{}
	for _, rev := range []string{"base", "slow"} {
		def := writeDef(t, strings.Replace(readExample(t, "pgbouncer"), "command: pgbouncer {{dir}}/pgbouncer.ini",
			"build:\n  source: "+repo+"@"+rev+"\n  run: ./configure --without-openssl && make\ncommand: \"{{build}}/pgbouncer {{dir}}/pgbouncer.ini\"", 1))
		servers, err := openProxy(t, def, 4)
		if err != nil {
			t.Fatal(err)
		}
		b := servers[1].Info.Pooler.Build
		if b == nil || b.Commit == "" || b.Key == "" || !strings.HasSuffix(b.Source, "@"+rev) {
			t.Fatalf("%s: build record %+v", rev, b)
		}
		keys[rev] = b.Key
		exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", servers[1].Pooler.PID()))
		if !strings.Contains(exe, b.Key) {
			t.Errorf("%s: the pooler runs %s, not its build %s", rev, exe, b.Key)
		}
		checkProxy(t, servers, "pgbouncer", 1)
	}
	if keys["base"] == keys["slow"] {
		t.Errorf("base and slow ran the same build %s", keys["base"])
	}
}

func readExample(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(targettest.Example(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A proxy in front of a server of its own (of='settings:...'): no target
// of the run, started for it and stopped with it.
func TestProxyOwnServer(t *testing.T) {
	testenv.Slow(t)
	needPgBouncer(t)
	specs, err := target.ParseSpecs([]string{"a=proxy:" + targettest.Example(t, "pgbouncer") + ",of='settings:work_mem=3MB'"}, "", 1)
	if err != nil {
		t.Fatal(err)
	}
	if s := specs[0]; len(s.Own) != 1 || len(s.Of) != 1 || s.Of[0] != "a.s1" || len(s.Front) != 1 || !s.Ephemeral() {
		t.Fatalf("spec %+v", s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	servers, err := target.OpenAll(ctx, specs, target.ClusterOptions{}, target.Needs{Clients: 2, Connections: 2}, nil)
	for _, s := range servers {
		defer s.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	srv := servers[0]
	own := srv.OwnFronts()
	if len(own) != 1 || srv.Origin() != own[0] || own[0].Cluster == nil {
		t.Fatalf("own servers %v, origin %+v", own, srv.Origin())
	}
	px := srv.Pooler.(*target.Proxy)
	if got := query(t, px.ConnString("postgres"), "SHOW work_mem"); got != "3MB" {
		t.Errorf("through the proxy: work_mem %q, want its own server's 3MB", got)
	}
	dir := own[0].Cluster.Dir
	srv.Close()
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("its server's directory %s left after Close", dir)
	}
}

// A patch in build.source, like the tree, is relative to the
// definition's file, not to where pgscale runs.
func TestProxyBuildPatchBesideTheDefinition(t *testing.T) {
	def := writeDef(t, "command: \"{{build}}/pgbouncer {{dir}}/pgbouncer.ini\"\nbuild:\n  source: src@base+slow.patch\n  run: make\n")
	dir := filepath.Dir(def)
	spec, err := target.ParseSpec("p=proxy:" + def)
	if err != nil {
		t.Fatal(err)
	}
	b := spec.Arg.(target.ProxyArg).Def.Build
	if want := filepath.Join(dir, "src") + "@base+" + filepath.Join(dir, "slow.patch"); b == nil || b.Source != want {
		t.Errorf("build %+v, want source %s", b, want)
	}
}

// The balancing example starts on this machine's pgbouncer (Debian's
// 1.18) in front of the cluster and passes queries; the form it once
// suggested, load_balance_hosts in [pgbouncer], is refused by pgbouncer as
// it starts, its log's line in the one-line error (which a suite now sees
// before its first cell measures).
func TestProxyPgBouncerBalanced(t *testing.T) {
	needPgBouncer(t)
	ex := targettest.Example(t, "pgbouncer-balanced")
	b, err := os.ReadFile(ex)
	if err != nil {
		t.Fatal(err)
	}
	broken := writeDef(t, strings.Replace(string(b), "    server_round_robin = 1\n", "    server_round_robin = 1\n    load_balance_hosts = round-robin\n", 1))
	if _, err := openProxy(t, broken, 20); err == nil || !strings.Contains(err.Error(), "pgbouncer exited during start-up") ||
		!strings.Contains(err.Error(), "unknown parameter: pgbouncer/load_balance_hosts") || strings.Contains(err.Error(), "\n") {
		t.Errorf("load_balance_hosts in [pgbouncer]: %v", err)
	}
	servers, err := openProxy(t, ex, 20)
	if err != nil {
		t.Fatal(err)
	}
	checkProxy(t, servers, "pgbouncer", 1)
}
