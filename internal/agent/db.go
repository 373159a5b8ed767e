package agent

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/target"
)

// connect opens a connection to the coordination database, named in
// pg_stat_activity by application_name; field is the option that gives
// its connection string dsn.
func connect(ctx context.Context, field, dsn, name string) (*pgx.Conn, string, error) {
	pc, err := target.ParseDSN(dsn)
	if err != nil {
		return nil, "", optionError(field, "", err)
	}
	where := target.Describe(pc)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, where, optionError(field, "", err)
	}
	cfg.RuntimeParams["application_name"] = name
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, where, &CoordinationError{Err: target.ClassifyConnectError(pc, err)}
	}
	return conn, where, nil
}

// serverClock reads the database server's clock in one round trip.
func serverClock(conn *pgx.Conn) Clock {
	return func(ctx context.Context) (t time.Time, err error) {
		err = conn.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&t)
		return t, err
	}
}

// TargetDSN is the connection string an agent gets for the target cfg
// describes: host, port, user, database, TLS mode and the connection's
// runtime parameters, never the password (an agent takes it from its own
// PGPASSWORD, .pgpass or Kubernetes Secret).
func TargetDSN(cfg *pgconn.Config) string {
	kv := []string{"host=" + quoteDSN(cfg.Host), "port=" + strconv.Itoa(int(cfg.Port)), "user=" + quoteDSN(cfg.User),
		"dbname=" + quoteDSN(cfg.Database), "sslmode=" + sslMode(cfg)}
	var keys []string
	for k := range cfg.RuntimeParams {
		if k != "application_name" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		kv = append(kv, k+"="+quoteDSN(cfg.RuntimeParams[k]))
	}
	return strings.Join(kv, " ")
}

// sslMode is the libpq sslmode that gives cfg's TLS behaviour.
func sslMode(cfg *pgconn.Config) string {
	plainFallback := false
	for _, f := range cfg.Fallbacks {
		plainFallback = plainFallback || f.TLSConfig == nil
	}
	switch {
	case cfg.TLSConfig == nil && plainFallback:
		return "allow"
	case cfg.TLSConfig == nil:
		return "disable"
	case plainFallback:
		return "prefer"
	case cfg.TLSConfig.InsecureSkipVerify:
		return "require"
	default:
		return "verify-full"
	}
}

// quoteDSN quotes a keyword/value connection string's value when it must be.
func quoteDSN(v string) string {
	if v != "" && !strings.ContainsAny(v, " '\\\t\n") {
		return v
	}
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
}
