package target

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/connerr"
	"github.com/pgscale/pgscale/internal/secret"
)

// EnvPointsAtServer reports whether libpq environment variables name a
// server (PGHOST, PGHOSTADDR, PGPORT, PGDATABASE, PGSERVICE), in which case
// pgscale uses it instead of starting an ephemeral cluster. A variable set
// but empty counts as unset, as pgx and libpq read it.
func EnvPointsAtServer() bool {
	for _, v := range []string{"PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE", "PGSERVICE"} {
		if os.Getenv(v) != "" {
			return true
		}
	}
	return false
}

// ParseDSN parses a connection string in URI or keyword/value form; libpq
// environment variables fill in what it leaves out. The error never contains
// the password.
func ParseDSN(dsn string) (*pgconn.Config, error) {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("bad connection string %q: %s", secret.Redact(dsn), parseErrorReason(err))
	}
	return cfg, nil
}

func parseErrorReason(err error) string {
	var pe *pgconn.ParseConfigError
	if errors.As(err, &pe) {
		// ParseConfigError.Error() prints the connection string; give only the reason.
		msg := pe.Error()
		if i := strings.LastIndex(msg, ": "); i >= 0 {
			msg = msg[i+2:]
		}
		return secret.Redact(msg)
	}
	return secret.Redact(err.Error())
}

// Describe names a target for humans: host, port, user and database, no
// password (internal/connerr's).
func Describe(cfg *pgconn.Config) string { return connerr.Describe(cfg) }

// ConnectError classifies a failed connection attempt (internal/connerr's).
type ConnectError = connerr.Error

// ClassifyConnectError turns a pgconn connection error into a ConnectError
// with a reason and a fix (internal/connerr's).
func ClassifyConnectError(cfg *pgconn.Config, err error) error { return connerr.Classify(cfg, err) }
