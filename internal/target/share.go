package target

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/result"
)

// SettingInfo is what pg_settings says of one setting: when it can be
// changed (context) and its built-in default (boot_val, in the setting's
// base unit).
type SettingInfo struct {
	Name, Context, BootValue string
}

// PerSession reports whether a setting of this pg_settings context can be
// set by a session for itself as it connects: "user" (any user) and
// "superuser" (pgscale's clients of an ephemeral cluster connect as its
// superuser). Settings of the other contexts need a restart
// ("postmaster"), a reload ("sighup"), or cannot be set at all
// ("internal"); "backend" and "superuser-backend" ones are fixed per
// connection and kept with a cluster of their own too.
func PerSession(context string) bool { return context == "user" || context == "superuser" }

// SettingContexts asks the server what it knows of the named settings, by
// their lower-case names; a name the server does not know is absent.
func SettingContexts(ctx context.Context, conn *pgconn.PgConn, names []string) (map[string]SettingInfo, error) {
	lower := make([]string, len(names))
	for i, n := range names {
		lower[i] = strings.ToLower(n)
	}
	res := conn.ExecParams(ctx, `SELECT name, context, coalesce(boot_val, '') FROM pg_settings WHERE lower(name) = ANY($1::text[])`,
		[][]byte{[]byte(textArray(lower))}, nil, nil, nil).Read()
	if res.Err != nil {
		return nil, fmt.Errorf("read pg_settings: %w", res.Err)
	}
	out := map[string]SettingInfo{}
	for _, r := range res.Rows {
		out[strings.ToLower(string(r[0]))] = SettingInfo{Name: string(r[0]), Context: string(r[1]), BootValue: string(r[2])}
	}
	return out, nil
}

// textArray writes names as a PostgreSQL text array literal.
func textArray(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(n) + `"`
	}
	return "{" + strings.Join(q, ",") + "}"
}

// Sharing is whether a settings target's clients can connect to its
// baseline's cluster instead of a cluster of its own.
type Sharing struct {
	// Share says they can.
	Share bool
	// Session are then the settings its clients set on every connection
	// (connection options): its own, and the built-in or pgscale value of
	// every setting the baseline's cluster has and it does not, wherever
	// they differ from the baseline's.
	Session []Setting
	// Why says why not, naming the setting ("shared_buffers needs a
	// restart (context postmaster)").
	Why string
}

// DecideSharing decides whether settings target cand can run on the
// cluster of settings target base: every setting of either must be one a
// session can set (PerSession, from the server's pg_settings in info); a
// setting the server does not know keeps a cluster of its own too. common
// are the settings both clusters would get before their own (pgscale's
// defaults, then --set).
func DecideSharing(base, cand Spec, common []Setting, info map[string]SettingInfo) Sharing {
	baseSettings, _ := settingsOf(base)
	candSettings, _ := settingsOf(cand)
	for _, side := range []struct {
		settings []Setting
		who      string
	}{{candSettings, ""}, {baseSettings, "the baseline " + base.Name + "'s "}} {
		for _, s := range side.settings {
			in, ok := info[strings.ToLower(s.Name)]
			switch {
			case !ok:
				return Sharing{Why: fmt.Sprintf("%s%s is not a setting the server knows", side.who, s.Name)}
			case !PerSession(in.Context):
				return Sharing{Why: fmt.Sprintf("%s%s %s (context %s)", side.who, in.Name, contextNeeds(in.Context), in.Context)}
			}
		}
	}
	var names []string
	seen := map[string]bool{}
	for _, s := range append(append([]Setting{}, baseSettings...), candSettings...) {
		if n := strings.ToLower(s.Name); !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	var session []Setting
	for _, n := range names {
		want := effective(candSettings, common, info[n])
		if want != effective(baseSettings, common, info[n]) {
			session = append(session, Setting{Name: info[n].Name, Value: want})
		}
	}
	return Sharing{Share: true, Session: session}
}

// contextNeeds says in words what changing a setting of context needs.
func contextNeeds(context string) string {
	switch context {
	case "postmaster":
		return "needs a restart"
	case "sighup":
		return "needs a reload"
	case "internal":
		return "is fixed when the server is built or initialised"
	}
	return "is fixed as a connection starts"
}

// effective is the value a cluster with own settings (after common) has
// for a setting: its last own value, else the last common one, else the
// built-in default.
func effective(own, common []Setting, info SettingInfo) string {
	for _, layer := range [][]Setting{own, common} {
		for i := len(layer) - 1; i >= 0; i-- {
			if strings.EqualFold(layer[i].Name, info.Name) {
				return layer[i].Value
			}
		}
	}
	return info.BootValue
}

// sessionConfig is the server's connection configuration with the
// settings set on every connection.
func sessionConfig(server *pgconn.Config, session []Setting) *pgconn.Config {
	cfg := server.Copy()
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	for _, s := range session {
		cfg.RuntimeParams[s.Name] = s.Value
	}
	return cfg
}

// shareBaseline decides, from the baseline's pg_settings, which of the
// settings targets in maybe run on its cluster, says so, makes room in
// the cluster for their connections (restarting it when max_connections
// grows), and returns those targets' servers by index.
func shareBaseline(ctx context.Context, base *Server, specs []Spec, maybe map[int]bool, opt ClusterOptions, needs Needs, extra int,
	log func(string)) (map[int]*Server, error) {
	var names []string
	for _, s := range specs {
		settings, _ := settingsOf(s)
		for _, st := range settings {
			names = append(names, st.Name)
		}
	}
	conn, err := base.Connect(ctx)
	if err != nil {
		return nil, named(specs[0], err)
	}
	info, err := SettingContexts(ctx, conn, names)
	conn.Close(context.Background())
	if err != nil {
		return nil, named(specs[0], err)
	}
	common, err := commonSettings(opt, base.Cluster)
	if err != nil {
		return nil, err
	}
	out := map[int]*Server{}
	for i, s := range specs {
		if !maybe[i] {
			continue
		}
		sh := DecideSharing(specs[0], s, common, info)
		log(sessionNotice(s, specs[0].Name, sh, opt.Words))
		if sh.Share {
			out[i] = openSession(s, base, sh.Session, log)
		}
	}
	if len(out) == 0 {
		return out, nil
	}
	n := needs
	n.Connections += extra + len(out)*needs.Connections
	base.how.needs = n
	if err := base.Cluster.resize(ctx, clusterConnections(n)); err != nil {
		return nil, named(specs[0], fmt.Errorf("ephemeral cluster: %w", err))
	}
	return out, nil
}

// openSession opens a same-cluster settings target: its clients connect
// to base, the baseline's server, with the session settings.
func openSession(spec Spec, base *Server, session []Setting, log func(string)) *Server {
	cfg := sessionConfig(base.Config, session)
	bi := base.Info
	info := result.Target{Kind: bi.Kind, Name: spec.Name, Description: Describe(cfg), BinDir: bi.BinDir, Preloaded: bi.Preloaded,
		Tmpfs: bi.Tmpfs, SameServerAs: bi.Name, SessionSettings: map[string]string{}}
	for _, s := range session {
		info.SessionSettings[s.Name] = s.Value
	}
	return &Server{Config: cfg, Fronts: base, session: session, log: log, Info: info}
}

// sessionNotice says what was decided for a settings target, and, when it
// shares the baseline's cluster, what gives it one of its own (w.Separate).
func sessionNotice(spec Spec, base string, sh Sharing, w Words) string {
	own := ""
	if w.Separate != "" {
		own = " (" + w.Separate + ": a cluster of its own)"
	}
	if !sh.Share {
		return fmt.Sprintf("target %s: %s: a cluster of its own", spec.Name, sh.Why)
	}
	if own, _ := settingsOf(spec); len(own) == 0 && len(sh.Session) == 0 {
		return fmt.Sprintf("target %s: the same settings as %s: its clients connect to %s's cluster%s", spec.Name, base, base, own)
	}
	var set []string
	for _, s := range sh.Session {
		set = append(set, s.Name+"="+s.Value)
	}
	sort.Strings(set)
	what := "no setting differs from " + base + "'s"
	if len(set) > 0 {
		what = strings.Join(set, ", ") + " set per session"
	}
	return fmt.Sprintf("target %s: every setting can be set per session: its clients connect to %s's cluster, %s%s",
		spec.Name, base, what, own)
}
