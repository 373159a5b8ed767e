package target_test

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/target/targettest"
	"github.com/pgscale/pgscale/internal/testenv"
)

func connect(t *testing.T, ctx context.Context, cfg *pgconn.Config) *pgconn.PgConn {
	t.Helper()
	conn, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

func show(t *testing.T, ctx context.Context, conn *pgconn.PgConn, name string) string {
	t.Helper()
	res := conn.ExecParams(ctx, "SELECT current_setting($1)", [][]byte{[]byte(name)}, nil, nil, nil).Read()
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	return string(res.Rows[0][0])
}

// The choice per setting, against the real server: for one setting of
// every context pg_settings has, a settings target naming it shares the
// baseline's cluster exactly when the context is user or superuser; and
// the server agrees: as a connection option such a setting takes effect,
// while a restart-, reload- or build-time one makes the connection fail.
// (backend and superuser-backend settings could be given as the
// connection starts, but not changed after: they keep a cluster of their
// own.)
func TestSharingPerSettingContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg, err := pgconn.ParseConfig(cluster.ConnString("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	conn := connect(t, ctx, cfg)
	defer conn.Close(ctx)
	// The first setting of each context, with its current value (valid
	// by construction).
	res := conn.ExecParams(ctx, `SELECT DISTINCT ON (context) context, name, setting FROM pg_settings
		WHERE name NOT LIKE '%\_preload\_libraries' ORDER BY context, name`, nil, nil, nil, nil).Read()
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	contexts := map[string]bool{}
	for _, r := range res.Rows {
		context, name, value := string(r[0]), string(r[1]), string(r[2])
		contexts[context] = true
		t.Logf("context %s: %s = %q", context, name, value)
		info, err := target.SettingContexts(ctx, conn, []string{strings.ToUpper(name)})
		if err != nil {
			t.Fatal(err)
		}
		if got := info[strings.ToLower(name)].Context; got != context {
			t.Errorf("%s: SettingContexts says context %q, pg_settings %q", name, got, context)
		}
		base, _ := target.ParseSpec("base=settings:")
		cand, _ := target.ParseSpec("cand=settings:" + name + "='" + value + "'")
		sh := target.DecideSharing(base, cand, nil, info)
		want := context == "user" || context == "superuser"
		if sh.Share != want || target.PerSession(context) != want {
			t.Errorf("%s (context %s): share %v (%s), want %v", name, context, sh.Share, sh.Why, want)
		}
		if !sh.Share && !strings.Contains(sh.Why, name) {
			t.Errorf("%s: the reason %q does not name the setting", name, sh.Why)
		}
		// What the server says when the setting comes with the connection.
		opt := cfg.Copy()
		opt.RuntimeParams[name] = value
		c, err := pgconn.ConnectConfig(ctx, opt)
		if c != nil {
			c.Close(ctx)
		}
		accepted := context != "postmaster" && context != "sighup" && context != "internal"
		if (err == nil) != accepted {
			t.Errorf("%s (context %s) as a connection option: error %v, want accepted %v", name, context, err, accepted)
		}
	}
	for _, c := range []string{"internal", "postmaster", "sighup", "superuser-backend", "backend", "superuser", "user"} {
		if !contexts[c] {
			t.Errorf("no setting of context %s in pg_settings: the test covers less than it says", c)
		}
	}
}

// The session settings undo what the baseline's cluster has and the
// candidate does not: back to --set's value, or the built-in default.
func TestDecideSharingSessionSettings(t *testing.T) {
	info := map[string]target.SettingInfo{
		"work_mem":       {Name: "work_mem", Context: "user", BootValue: "4096"},
		"log_statement":  {Name: "log_statement", Context: "superuser", BootValue: "none"},
		"shared_buffers": {Name: "shared_buffers", Context: "postmaster", BootValue: "1024"},
	}
	spec := func(s string) target.Spec {
		t.Helper()
		sp, err := target.ParseSpec(s)
		if err != nil {
			t.Fatal(err)
		}
		return sp
	}
	set := func(kv ...string) []target.Setting {
		var out []target.Setting
		for i := 0; i < len(kv); i += 2 {
			out = append(out, target.Setting{Name: kv[i], Value: kv[i+1]})
		}
		return out
	}
	for _, tt := range []struct {
		name, base, cand string
		common           []target.Setting
		share            bool
		session          []target.Setting
	}{
		{"its own", "a=settings:", "b=settings:log_statement=all", nil, true, set("log_statement", "all")},
		{"the baseline's undone", "a=settings:work_mem=64MB", "b=settings:", nil, true, set("work_mem", "4096")},
		{"back to --set", "a=settings:work_mem=64MB", "b=settings:", set("work_mem", "8MB"), true, set("work_mem", "8MB")},
		{"the same value", "a=settings:WORK_MEM=8MB", "b=settings:work_mem=8MB", nil, true, nil},
		{"both", "a=settings:work_mem=64MB", "b=settings:log_statement=all", nil, true, set("work_mem", "4096", "log_statement", "all")},
		{"its restart-level", "a=settings:", "b=settings:shared_buffers=64MB", nil, false, nil},
		{"the baseline's restart-level", "a=settings:shared_buffers=64MB", "b=settings:work_mem=8MB", nil, false, nil},
		{"unknown", "a=settings:", "b=settings:no_such_setting=1", nil, false, nil},
	} {
		sh := target.DecideSharing(spec(tt.base), spec(tt.cand), tt.common, info)
		if sh.Share != tt.share || !reflect.DeepEqual(sh.Session, tt.session) {
			t.Errorf("%s: share %v session %v (%s); want %v %v", tt.name, sh.Share, sh.Session, sh.Why, tt.share, tt.session)
		}
	}
}

// OpenAll puts a settings target whose settings are all per-session on
// the baseline's cluster (Fronts, no cluster of its own, its settings as
// connection options, recorded) and gives a restart-level one a cluster
// of its own; Renew re-creates both clusters in new directories, removes
// the old ones and leaves none of their processes, and the same-cluster
// target follows the baseline's new server.
func TestOpenAllSameClusterAndRenew(t *testing.T) {
	testenv.Slow(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	specs, err := target.ParseSpecs([]string{"base=settings:work_mem=5MB", "same=settings:log_statement=all", "own=settings:shared_buffers=64MB"}, "", 2)
	if err != nil {
		t.Fatal(err)
	}
	var notices []string
	servers, err := target.OpenAll(ctx, specs, target.ClusterOptions{}, target.Needs{Clients: 2, Connections: 2},
		func(s string) { notices = append(notices, s) })
	defer func() {
		for _, s := range servers {
			s.Close()
		}
	}()
	if err != nil {
		t.Fatal(err)
	}
	base, same, own := servers[0], servers[1], servers[2]
	if same.Cluster != nil || same.Fronts != base || same.Origin() != base || same.Info.SameServerAs != "base" || !same.Ephemeral() {
		t.Fatalf("same: cluster %v, fronts %p (base %p), same_server_as %q", same.Cluster, same.Fronts, base, same.Info.SameServerAs)
	}
	if own.Cluster == nil || own.Fronts != nil || own.Info.SameServerAs != "" {
		t.Fatalf("own: cluster %v, fronts %v: want a cluster of its own", own.Cluster, own.Fronts)
	}
	joined := strings.Join(notices, "\n")
	for _, want := range []string{"target same: every setting can be set per session: its clients connect to base's cluster",
		"target own: shared_buffers needs a restart (context postmaster): a cluster of its own"} {
		if !strings.Contains(joined, want) {
			t.Errorf("notices lack %q:\n%s", want, joined)
		}
	}
	check := func(when string) {
		t.Helper()
		c := connect(t, ctx, same.Config)
		defer c.Close(ctx)
		if got, ws := show(t, ctx, c, "log_statement"), show(t, ctx, c, "work_mem"); got != "all" || ws != "4MB" {
			t.Errorf("%s: same's sessions have log_statement %s, work_mem %s; want all and the default 4MB (not base's 5MB)", when, got, ws)
		}
		b := connect(t, ctx, base.Config)
		defer b.Close(ctx)
		if got, ws := show(t, ctx, b, "log_statement"), show(t, ctx, b, "work_mem"); got != "none" || ws != "5MB" {
			t.Errorf("%s: base's sessions have log_statement %s, work_mem %s", when, got, ws)
		}
		if c.PID() == b.PID() || same.Config.Host != base.Config.Host {
			t.Errorf("%s: same connects to %s, base to %s", when, same.Config.Host, base.Config.Host)
		}
		same.RecordInfo(ctx)
		if same.Info.Settings["log_statement"] != "all" || same.Info.SessionSettings["work_mem"] != "4096" {
			t.Errorf("%s: same records settings %v, session settings %v", when, same.Info.Settings, same.Info.SessionSettings)
		}
	}
	check("first layout")

	oldDirs := []string{base.Cluster.Dir, own.Cluster.Dir}
	oldPIDs := []int{base.Cluster.PID(), own.Cluster.PID()}
	if err := target.Renew(ctx, servers); err != nil {
		t.Fatal(err)
	}
	for i, d := range oldDirs {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("old cluster directory %s still there after Renew", d)
		}
		if left := targettest.ProcessesInGroup(oldPIDs[i]); len(left) > 0 {
			t.Errorf("old cluster's processes %v still run after Renew", left)
		}
	}
	if base.Cluster.Dir == oldDirs[0] || own.Cluster.Dir == oldDirs[1] || !base.Cluster.Running() || !own.Cluster.Running() {
		t.Errorf("after Renew: dirs %s, %s (were %v), running %v %v", base.Cluster.Dir, own.Cluster.Dir, oldDirs, base.Cluster.Running(), own.Cluster.Running())
	}
	if base.Info.Name != "base" || own.Info.Name != "own" {
		t.Errorf("names after Renew: %q, %q", base.Info.Name, own.Info.Name)
	}
	check("after Renew")

	newDirs := []string{base.Cluster.Dir, own.Cluster.Dir}
	newPIDs := []int{base.Cluster.PID(), own.Cluster.PID()}
	for _, s := range servers {
		s.Close()
	}
	for i, d := range newDirs {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("cluster directory %s still there after Close", d)
		}
		if left := targettest.ProcessesInGroup(newPIDs[i]); len(left) > 0 {
			t.Errorf("processes %v still run after Close", left)
		}
	}

	// --separate-clusters: every settings target a cluster of its own.
	servers, err = target.OpenAll(ctx, specs[:2], target.ClusterOptions{Separate: true}, target.Needs{Clients: 2, Connections: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if servers[1].Cluster == nil || servers[1].Fronts != nil {
		t.Errorf("with Separate, same has cluster %v, fronts %v", servers[1].Cluster, servers[1].Fronts)
	}
}

// Renew restarts a pooler in front of a re-created cluster, pointing at
// the new one; the old pgbouncer is gone.
func TestRenewPooler(t *testing.T) {
	testenv.Slow(t)
	needPgBouncer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	specs, err := target.ParseSpecs([]string{"direct=settings:", "pooled=pgbouncer:pool_mode=session"}, "", 2)
	if err != nil {
		t.Fatal(err)
	}
	servers, err := target.OpenAll(ctx, specs, target.ClusterOptions{}, target.Needs{Clients: 2, Connections: 2}, nil)
	defer func() {
		for i := len(servers) - 1; i >= 0; i-- {
			servers[i].Close()
		}
	}()
	if err != nil {
		t.Fatal(err)
	}
	direct, pooled := servers[0], servers[1]
	oldPooler, oldDir := pooled.Pooler, direct.Cluster.Dir
	if err := target.Renew(ctx, servers); err != nil {
		t.Fatal(err)
	}
	if oldPooler.Running() || pooled.Pooler == oldPooler || !pooled.Pooler.Running() {
		t.Errorf("after Renew the old pgbouncer runs %v, a new one runs %v", oldPooler.Running(), pooled.Pooler.Running())
	}
	if direct.Cluster.Dir == oldDir || pooled.Fronts != direct || pooled.Info.Pooler.Server != direct.Info.Description || pooled.Info.Name != "pooled" {
		t.Errorf("after Renew the pooler fronts %q (the cluster is %q, was in %s)", pooled.Info.Pooler.Server, direct.Info.Description, oldDir)
	}
	c := connect(t, ctx, pooled.Config)
	defer c.Close(ctx)
	if got := show(t, ctx, c, "data_directory"); !strings.HasPrefix(got, direct.Cluster.Dir) {
		t.Errorf("through the pooler the data directory is %s, want the new cluster's (%s)", got, direct.Cluster.Dir)
	}
}
