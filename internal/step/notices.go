package step

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/engine"
	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/script"
	"github.com/pgscale/pgscale/internal/secret"
)

// Notices has the engine tell events what pgbench prints beside its
// measures: the server's notices, and the clients' errors — every one
// with verbose, else those that abort a client.
func Notices(cfg *engine.Config, events observe.Observer, verbose bool) {
	cfg.OnNotice = func(n *pgconn.Notice) {
		events.Observe(observe.Notice{Text: LibpqMessage((*pgconn.PgError)(n), false), Server: true})
	}
	cfg.OnFailure = func(f engine.Failure) {
		if !f.Abort && !verbose {
			return
		}
		of := failure(f)
		events.Observe(observe.Notice{Text: failureLine(f), Failure: &of})
	}
}

// failureLine is a client error in one line, as run prints it.
func failureLine(f engine.Failure) string {
	what := "aborted"
	switch {
	case f.Retry:
		what = "repeats the transaction after the error"
	case !f.Abort:
		what = "ends the failed transaction"
	}
	return fmt.Sprintf("client %d %s: %s", f.Client, what, f.Text())
}

// failure is what a renderer needs of a client error to word it as
// pgbench does.
func failure(f engine.Failure) observe.Failure {
	o := observe.Failure{Client: f.Client, Script: f.Script, Command: f.Command, Query: f.Query, Kind: f.Kind.String(),
		Abort: f.Abort, Retry: f.Retry, Tries: f.Tries, Elapsed: f.Elapsed}
	var pgErr *pgconn.PgError
	var rt *script.RuntimeError
	var se *engine.ScriptError
	switch {
	case errors.As(f.Err, &pgErr):
		o.Source, o.Message = "sql", LibpqMessage(pgErr, true)
	case errors.As(f.Err, &rt):
		o.Source, o.Message, o.Verb, o.Failed = "meta", rt.Msg, rt.Verb, rt.Failed
		if rt.Verb == "" {
			o.Source = "gset"
		}
	case errors.As(f.Err, &se):
		o.Source, o.Message, o.Verb = "script", se.Err.Error(), se.Verb
		if se.Verb != "" {
			o.Source, o.Failed = "meta", se.Err.Error()
		}
	case f.Command < 0:
		o.Source, o.Message = "connection", f.Err.Error()
	default:
		o.Source, o.Message = f.Kind.String(), f.Err.Error()
	}
	o.Message = secret.Redact(o.Message)
	return o
}

// LibpqMessage is a server message as libpq words it by default:
// "SEVERITY:  message", then DETAIL, HINT and QUERY lines, and for errors
// CONTEXT; no trailing newline.
func LibpqMessage(e *pgconn.PgError, isError bool) string {
	var b strings.Builder
	b.WriteString(e.Severity + ":  " + e.Message)
	for _, f := range []struct{ label, text string }{{"DETAIL", e.Detail}, {"HINT", e.Hint}, {"QUERY", e.InternalQuery}} {
		if f.text != "" {
			b.WriteString("\n" + f.label + ":  " + f.text)
		}
	}
	if isError && e.Where != "" {
		b.WriteString("\nCONTEXT:  " + e.Where)
	}
	return b.String()
}
