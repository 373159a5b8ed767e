package target

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

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

// Describe names a target for humans: host, port, user and database, no password.
func Describe(cfg *pgconn.Config) string {
	return fmt.Sprintf("host=%s port=%d user=%s dbname=%s", cfg.Host, cfg.Port, cfg.User, cfg.Database)
}

// ConnectError classifies a failed connection attempt.
type ConnectError struct {
	Target string // Describe() of the target
	Reason string // one line, no password
	Fix    string // what to do
	Usage  bool   // the user's input is wrong (bad password, no such database): exit 2, not 3
	Err    error
}

func (e *ConnectError) Error() string {
	msg := fmt.Sprintf("cannot connect to %s: %s", e.Target, e.Reason)
	if e.Fix != "" {
		msg += " (" + e.Fix + ")"
	}
	return msg
}

func (e *ConnectError) Unwrap() error { return e.Err }

// ClassifyConnectError turns a pgconn connection error into a ConnectError
// with a reason and a fix.
func ClassifyConnectError(cfg *pgconn.Config, err error) error {
	if err == nil {
		return nil
	}
	ce := &ConnectError{Target: Describe(cfg), Err: err}
	var pgErr *pgconn.PgError
	var netErr net.Error
	switch {
	case errors.As(err, &pgErr):
		ce.Reason = pgErr.Message
		switch pgErr.Code {
		case "28P01", "28000":
			ce.Usage = true
			ce.Fix = "check the user and password in --dsn, PGPASSWORD or ~/.pgpass"
		case "3D000":
			ce.Usage = true
			ce.Fix = "create the database or name another in --dsn"
		case "53300":
			ce.Fix = "raise max_connections or use fewer clients"
		case "57P03":
			ce.Fix = "the server is starting up or shutting down; retry"
		}
	case errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT):
		ce.Reason = "no server is listening there"
		ce.Fix = "start the server or fix host/port in --dsn"
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()):
		ce.Reason = "timed out"
		ce.Fix = "check the host is reachable"
	default:
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) {
			ce.Reason = "unknown host " + dnsErr.Name
			ce.Usage = true
			ce.Fix = "fix the host in --dsn"
		} else {
			ce.Reason = secret.Redact(innermost(err).Error())
		}
	}
	return ce
}

func innermost(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}
