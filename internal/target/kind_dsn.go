package target

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/secret"
	"github.com/pgscale/pgscale/internal/usage"
)

// DSN is an existing server, pooler or proxy: NAME=dsn:CONNSTRING.
const DSN Kind = "dsn"

var dsnKind = kind{
	name: DSN, form: "dsn:CONNSTRING",
	help: func(Words) string {
		return "an existing server, pooler or proxy (a URI or keyword/value connection string; libpq environment variables fill in the rest)"
	},
	parse: func(arg string) (Arg, error) {
		dsn := strings.TrimSpace(arg)
		if dsn == "" {
			return nil, fmt.Errorf("dsn: needs a connection string (URI or keyword form)")
		}
		return DSNArg{DSN: dsn}, nil
	},
}

// DSNArg is a dsn target's connection string (empty: the libpq
// environment's). It may hold a password: print String(), never DSN.
type DSNArg struct{ DSN string }

// String returns the connection string with any password redacted.
func (a DSNArg) String() string { return secret.Redact(a.DSN) }

func (a DSNArg) plan(_ context.Context, spec Spec, _ *opening) (starter, error) {
	cfg, err := ParseDSN(a.DSN)
	if err != nil {
		return nil, usage.Wrap(named(spec, err))
	}
	return dsnStart{spec: spec, cfg: cfg}, nil
}

// dsnStart opens a dsn target: nothing starts, nothing is connected yet.
type dsnStart struct {
	spec Spec
	cfg  *pgconn.Config
}

func (dsnStart) frontConnections() int { return 0 }

func (d dsnStart) start(_ context.Context, _ []*Server, _ Needs, log func(string)) (*Server, error) {
	return &Server{Config: d.cfg, log: log, Info: result.Target{Kind: "dsn", Name: d.spec.Name, Description: Describe(d.cfg)}}, nil
}
