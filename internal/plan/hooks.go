package plan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/engine"
	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/script"
	"github.com/pgscale/pgscale/internal/secret"
	"github.com/pgscale/pgscale/internal/syncio"
	"github.com/pgscale/pgscale/internal/workload"
)

// extend gives a sweep what pgbench does beside measuring: the server's
// notices and the clients' errors as events, --exit-on-abort, -v's vacuum
// of pgbench_accounts, and the transaction log.
func (c *Common) extend(sw *Sweep, p *prepared) {
	obs := c.observer()
	cfg := &sw.Engine
	cfg.OnNotice = func(n *pgconn.Notice) {
		obs.Observe(observe.Notice{Text: libpqMessage((*pgconn.PgError)(n), false), Server: true})
	}
	verbose := c.Load.VerboseErrors
	cfg.OnFailure = func(f engine.Failure) {
		if !f.Abort && !verbose {
			return
		}
		of := failure(f)
		obs.Observe(observe.Notice{Text: failureLine(f), Failure: &of})
	}
	cfg.ExitOnAbort = c.Load.ExitOnAbort
	if c.Load.VacuumAccounts && !c.Load.NoVacuum && p.data.Tables {
		before := sw.BeforeStep
		sw.BeforeStep = func(ctx context.Context, i, clients int) error {
			if before != nil {
				if err := before(ctx, i, clients); err != nil {
					return err
				}
			}
			return named(p.name, workload.VacuumAccounts(ctx, p.srv.Connect))
		}
	}
	sw.Transactions = c.Transactions
}

// shellWriters are the writers \shell commands get: the spec's, behind a
// lock each, as many clients write at once.
func (c *Common) shellWriters() (out, errw io.Writer) {
	if c.ShellOut != nil {
		out = syncio.NewWriter(c.ShellOut)
	}
	if c.ShellErr != nil {
		errw = syncio.NewWriter(c.ShellErr)
	}
	return out, errw
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
		o.Source, o.Message = "sql", libpqMessage(pgErr, true)
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

// libpqMessage is a server message as libpq words it by default:
// "SEVERITY:  message", then DETAIL, HINT and QUERY lines, and for errors
// CONTEXT; no trailing newline.
func libpqMessage(e *pgconn.PgError, isError bool) string {
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
