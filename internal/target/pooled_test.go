package target_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
)

func TestParsePgBouncerSpec(t *testing.T) {
	got, err := target.ParseSpec("pooled=pgbouncer:of=direct,pool_mode=session, default_pool_size = 8")
	want := target.Spec{Name: "pooled", Kind: target.Pooled, Of: []string{"direct"},
		Arg: target.PgBouncerArg{Settings: []target.Setting{{Name: "pool_mode", Value: "session"}, {Name: "default_pool_size", Value: "8"}}}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ParseSpec = %+v, %v; want %+v", got, err, want)
	}
	if s := got.String(); s != "pooled=pgbouncer:of=direct,pool_mode=session,default_pool_size=8" {
		t.Errorf("String() = %q", s)
	}
	for _, in := range []string{
		"p=pgbouncer:Pool_Mode=session",    // not pgbouncer's form of a name
		"p=pgbouncer:pool_mode",            // not k=v
		"p=pgbouncer:of=../x",              // not a target name
		"p=pgbouncer:ignore='a,b",          // unbalanced quote
		"p=pgbouncer:x=a\nauth_type=trust", // a second line in its configuration
	} {
		if _, err := target.ParseSpec(in); err == nil {
			t.Errorf("ParseSpec(%q) accepted", in)
		}
	}
}

// A pooler fronts the target of= names, by default the first target that
// is not a pooler (wherever --baseline puts it); never another pooler.
func TestParseSpecsFronts(t *testing.T) {
	specs, err := target.ParseSpecs([]string{"p1=pgbouncer:", "direct=settings:", "other=dsn:host=/tmp", "p2=pgbouncer:of=other"}, "p1", 2)
	if err != nil {
		t.Fatal(err)
	}
	if specs[0].Name != "p1" || strings.Join(specs[0].Of, ",") != "direct" || len(specs[0].Front) != 1 || specs[0].Front[0].Kind != target.Settings {
		t.Errorf("p1 fronts %q (%+v), want direct", specs[0].Of, specs[0].Front)
	}
	if !specs[0].Ephemeral() {
		t.Error("a pooler in front of an ephemeral cluster is not ephemeral")
	}
	p2 := specs[3]
	if strings.Join(p2.Of, ",") != "other" || len(p2.Front) != 1 || p2.Front[0].Kind != target.DSN || p2.Ephemeral() {
		t.Errorf("p2: of %q, front %+v, ephemeral %v", p2.Of, p2.Front, p2.Ephemeral())
	}
	for _, tc := range []struct {
		specs []string
		want  string
	}{
		{[]string{"a=pgbouncer:", "b=pgbouncer:"}, "every target is a pooler"},
		{[]string{"a=settings:", "b=pgbouncer:of=c"}, "names no target"},
		{[]string{"a=settings:", "b=pgbouncer:", "c=pgbouncer:of=b"}, "b is a pooler"},
	} {
		if _, err := target.ParseSpecs(tc.specs, "", 2); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseSpecs(%q): %v, want %q", tc.specs, err, tc.want)
		}
	}
}

func TestWithPooler(t *testing.T) {
	front := target.ForRun("host=/tmp")
	s, err := target.WithPooler(front, "pgbouncer:pool_mode=statement")
	if err != nil || s.Kind != target.Pooled || len(s.Front) != 1 || s.Front[0].Arg != (target.DSNArg{DSN: "host=/tmp"}) || s.Ephemeral() ||
		poolerSettings(s)[0].Value != "statement" {
		t.Errorf("WithPooler = %+v, %v", s, err)
	}
	if s, err := target.WithPooler(target.Spec{Kind: target.Settings}, "pgbouncer"); err != nil || len(poolerSettings(s)) != 0 || !s.Ephemeral() {
		t.Errorf("bare pgbouncer: %+v, %v", s, err)
	}
	for _, bad := range []string{"odyssey", "pgbouncer:of=x", "pgbouncer:nonsense"} {
		var se *target.SpecError
		if _, err := target.WithPooler(front, bad); !errors.As(err, &se) || se.Spec != bad {
			t.Errorf("WithPooler(%q): %v, want a *target.SpecError of %[1]q", bad, err)
		}
	}
}

// poolerSettings are a pgbouncer target's own settings.
func poolerSettings(s target.Spec) []target.Setting {
	a, _ := s.Arg.(target.PgBouncerArg)
	return a.Settings
}

// A pgbouncer target opens as a Server whose Config is the pooler and whose
// Origin is the server behind it; the result's target records the pooler,
// and Close stops it and removes its directory.
func TestOpenPooled(t *testing.T) {
	needPgBouncer(t)
	spec, err := target.WithPooler(target.ForRun(cluster.ConnString("postgres")), "pgbouncer:default_pool_size=3")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := target.Open(ctx, spec, target.ClusterOptions{}, target.Needs{Clients: 500, Connections: 500}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	pb, _ := srv.Pooler.(*target.PgBouncer)
	if pb == nil || !pb.Running() || srv.Origin() == srv || srv.Origin().Config.Port != uint16(cluster.Port) {
		t.Fatalf("pooler %v, origin %+v", pb, srv.Origin())
	}
	if srv.Config.Host != pb.SocketDir || srv.Ephemeral() {
		t.Errorf("clients connect to %s (want the pooler's %s); ephemeral %v", srv.Config.Host, pb.SocketDir, srv.Ephemeral())
	}
	if got := showConfig(t, pb); got["pool_mode"] != "transaction" || got["default_pool_size"] != "3" || got["max_client_conn"] != "510" {
		t.Errorf("running with pool_mode %q, default_pool_size %q, max_client_conn %q; want transaction, 3 and 510",
			got["pool_mode"], got["default_pool_size"], got["max_client_conn"])
	}
	srv.RecordInfo(ctx)
	in := srv.Info
	if in.Kind != "pgbouncer" || in.Pooler == nil || in.Pooler.Version != pb.Version || in.Pooler.ServerKind != "dsn" ||
		in.Pooler.Settings["default_pool_size"] != "3" || in.Settings["work_mem"] != "7MB" || in.ServerVersion == "" {
		t.Errorf("target info %+v, pooler %+v: want the pooler's and the server's", in, in.Pooler)
	}
	conn, err := srv.Connect(ctx)
	if err != nil {
		t.Fatalf("through the pooler: %v", err)
	}
	conn.Close(ctx)
	srv.Close()
	if pb.Running() {
		t.Error("pgbouncer still runs after Close")
	}
	if _, err := os.Stat(pb.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pgbouncer's directory %s left after Close", pb.Dir)
	}
}

// What cannot work is a usage error before anything starts: pgbouncer
// missing, prepared statements through transaction pooling of a pgbouncer
// that cannot keep them, more clients than the open-files limit.
func TestOpenPooledRefusals(t *testing.T) {
	spec, err := target.WithPooler(target.ForRun(cluster.ConnString("postgres")), "pgbouncer")
	if err != nil {
		t.Fatal(err)
	}
	open := func(needs target.Needs) error {
		srv, err := target.Open(context.Background(), spec, target.ClusterOptions{}, needs, nil)
		if err == nil {
			srv.Close()
		}
		return err
	}
	t.Setenv("PGSCALE_PGBOUNCER", "/no/such/pgbouncer")
	if err := open(target.Needs{Clients: 1}); !usage.Is(err) || !errors.Is(err, target.ErrNoPgBouncer) || strings.Contains(err.Error(), "\n") {
		t.Errorf("without pgbouncer: %v, want one usage error", err)
	}
	t.Setenv("PGSCALE_PGBOUNCER", "")
	needPgBouncer(t)
	if err := open(target.Needs{Clients: 20000000}); !usage.Is(err) || !strings.Contains(err.Error(), "ulimit -Hn") {
		t.Errorf("20 million clients: %v, want a usage error naming the limit", err)
	}
	err = open(target.Needs{Clients: 1, Prepared: true})
	if old := pgbouncerBefore(t, 1, 21); old && (!usage.Is(err) || !strings.Contains(err.Error(), "-M simple")) {
		t.Errorf("-M prepared through transaction pooling: %v, want a usage error naming -M simple", err)
	} else if !old && err != nil {
		t.Errorf("-M prepared through pgbouncer 1.21 or later: %v", err)
	}
	session, _ := target.WithPooler(target.ForRun(cluster.ConnString("postgres")), "pgbouncer:pool_mode=session")
	srv, err := target.Open(context.Background(), session, target.ClusterOptions{}, target.Needs{Clients: 1, Prepared: true}, nil)
	if err != nil {
		t.Errorf("-M prepared through session pooling: %v", err)
	} else {
		srv.Close()
	}
}

// pgbouncerBefore reports whether the installed pgbouncer is older than
// major.minor.
func pgbouncerBefore(t *testing.T, major, minor int) bool {
	t.Helper()
	bin, err := target.FindPgBouncer("")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	var got [2]int
	if _, err := fmt.Sscanf(strings.TrimPrefix(strings.ToLower(string(out)), "pgbouncer "), "%d.%d", &got[0], &got[1]); err != nil {
		t.Fatalf("version from %q: %v", out, err)
	}
	return got[0] < major || got[0] == major && got[1] < minor
}

// In an A/B run a pooler fronts its of= target's server, the same Server,
// so that the data, the probes and the server's figures are that target's.
func TestOpenAllPooledFrontsATarget(t *testing.T) {
	needPgBouncer(t)
	specs, err := target.ParseSpecs([]string{"direct=dsn:" + cluster.ConnString("postgres"), "pooled=pgbouncer:pool_mode=session"}, "", 2)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	servers, err := target.OpenAll(ctx, specs, target.ClusterOptions{}, target.Needs{Clients: 4, Connections: 4}, nil)
	for _, s := range servers {
		defer s.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	direct, pooled := servers[0], servers[1]
	if pooled.Fronts != direct || pooled.Origin() != direct || direct.Pooler != nil || pooled.Info.Pooler.Of != "direct" {
		t.Errorf("pooled fronts %p (direct is %p), of %q", pooled.Fronts, direct, pooled.Info.Pooler.Of)
	}
	pb := pooled.Pooler
	pooled.Close()
	if pb.Running() {
		t.Error("pgbouncer runs after Close")
	}
	conn, err := direct.Connect(ctx)
	if err != nil {
		t.Fatalf("closing the pooler closed the server it fronts: %v", err)
	}
	conn.Close(ctx)
}
