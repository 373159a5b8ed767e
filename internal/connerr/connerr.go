// Package connerr says why a connection to a server failed and what to do
// about it, in one line without the password: the classification every
// layer that connects (the engine, the targets, the agents) shares.
package connerr

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/secret"
)

// Describe names a target for humans: host, port, user and database, no password.
func Describe(cfg *pgconn.Config) string {
	return fmt.Sprintf("host=%s port=%d user=%s dbname=%s", cfg.Host, cfg.Port, cfg.User, cfg.Database)
}

// Remedy is a fix made in the connection string: it is worded with
// where that string came from, which the layer that classifies the
// error does not know (the command line does: --dsn, --target NAME...).
type Remedy int

// The remedies.
const (
	NoRemedy         Remedy = iota
	CheckCredentials        // a password or a user refused
	NameDatabase            // no such database
	FixAddress              // no server listening at the host and port
	FixHost                 // no such host
)

// In words r for a connection string that came from place ("--dsn").
func (r Remedy) In(place string) string {
	switch r {
	case CheckCredentials:
		return "check the user and password in " + place + ", PGPASSWORD or ~/.pgpass"
	case NameDatabase:
		return "create the database or name another in " + place
	case FixAddress:
		return "start the server or fix host/port in " + place
	case FixHost:
		return "fix the host in " + place
	}
	return ""
}

// Error classifies a failed connection attempt.
type Error struct {
	Target string // Describe() of the target
	Reason string // one line, no password
	Fix    string // what to do, when it is not a Remedy
	Remedy Remedy // what to do in the connection string
	Usage  bool   // the user's input is wrong (bad password, no such database): exit 2, not 3
	Err    error
}

// Error says why and what to do, in "the connection string".
func (e *Error) Error() string { return e.In("the connection string") }

// In is Error with the remedy worded for a connection string that came
// from place ("--dsn"): the command line, which knows, words it so.
func (e *Error) In(place string) string {
	msg := fmt.Sprintf("cannot connect to %s: %s", e.Target, e.Reason)
	fix := e.Fix
	if e.Remedy != NoRemedy {
		fix = e.Remedy.In(place)
	}
	if fix != "" {
		msg += " (" + fix + ")"
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Classify turns a pgconn connection error into an Error
// with a reason and a fix.
func Classify(cfg *pgconn.Config, err error) error {
	if err == nil {
		return nil
	}
	ce := &Error{Target: Describe(cfg), Err: err}
	var pgErr *pgconn.PgError
	var netErr net.Error
	switch {
	case errors.As(err, &pgErr):
		ce.Reason = pgErr.Message
		switch pgErr.Code {
		case "28P01", "28000":
			ce.Usage = true
			ce.Remedy = CheckCredentials
		case "3D000":
			ce.Usage = true
			ce.Remedy = NameDatabase
		case "53300":
			ce.Fix = "raise max_connections or use fewer clients"
		case "57P03":
			ce.Fix = "the server is starting up or shutting down; retry"
		}
	case errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT):
		ce.Reason = "no server is listening there"
		ce.Remedy = FixAddress
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()):
		ce.Reason = "timed out"
		ce.Fix = "check the host is reachable"
	default:
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) {
			ce.Reason = "unknown host " + dnsErr.Name
			ce.Usage = true
			ce.Remedy = FixHost
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
