package workload

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/script"
)

// Fallback is an SQL command that runs with the simple protocol although
// the protocol is prepared: with the default protocol, the server refused
// to prepare it for its parameters' types (SELECT :five + :six: "operator
// is not unique: unknown + unknown"), and pgbench's default, the simple
// protocol, runs it with the values written into its text.
type Fallback struct {
	Script, Command int // script index and command index in it
	result.PrepareFallback
}

// paramTypeStates are the SQLSTATEs of a prepare that fails for its
// parameters' types, which the simple protocol's literals settle:
// ambiguous function or operator, ambiguous or indeterminate parameter,
// datatype mismatch, undefined function (for unknown argument types),
// cannot coerce.
var paramTypeStates = map[string]bool{"42725": true, "42P08": true, "42P18": true, "42804": true, "42883": true, "42846": true}

// CheckPrepare prepares, once and on a connection of its own, every SQL
// command of the scripts that the prepared protocol would prepare (one
// statement with parameters, outside a pipeline), and returns those the
// server refuses for a reason of their parameters' types. Other refusals
// (a table the script creates itself) are left for the run to meet. Only
// a connection that fails is an error.
func CheckPrepare(ctx context.Context, connect Connector, scripts []*script.Script) ([]Fallback, error) {
	conn, err := connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var out []Fallback
	for si, s := range scripts {
		inPipeline := false
		for pc, c := range s.Commands {
			switch c.Kind {
			case script.KindStartPipeline:
				inPipeline = true
			case script.KindEndPipeline:
				inPipeline = false
			}
			q := c.SQL
			if c.Kind != script.KindSQL || inPipeline || q.Statements > 1 || q.NParams == 0 {
				continue
			}
			_, err := conn.Prepare(ctx, "", q.Prepared, nil)
			var pe *pgconn.PgError
			switch {
			case err == nil:
			case errors.As(err, &pe):
				if paramTypeStates[pe.Code] {
					out = append(out, Fallback{Script: si, Command: pc,
						PrepareFallback: result.PrepareFallback{Line: c.Line, SQLState: pe.Code, Message: pe.Message}})
				}
			default:
				return out, fmt.Errorf("prepare the scripts' statements: %w", err)
			}
		}
	}
	return out, nil
}

// SimpleCommands turns fallbacks into the engine's
// Config.SimpleCommands for the scripts; nil when there are none.
func SimpleCommands(scripts []*script.Script, fbs []Fallback) [][]bool {
	if len(fbs) == 0 {
		return nil
	}
	out := make([][]bool, len(scripts))
	for i, s := range scripts {
		out[i] = make([]bool, len(s.Commands))
	}
	for _, f := range fbs {
		out[f.Script][f.Command] = true
	}
	return out
}

// FallbackNotice says what a fallback does, once, for the run's notices.
func FallbackNotice(s *script.Script, f Fallback) string {
	return fmt.Sprintf("%s:%d: the server cannot prepare this statement (%s, SQLSTATE %s): it runs with the simple protocol, as pgbench's default does; -M prepared to fail instead",
		s.Name, f.Line, f.Message, f.SQLState)
}

// RecordFallbacks adds the fallbacks to the result file's scripts (in the
// workload's order).
func RecordFallbacks(rs []result.Script, fbs []Fallback) {
	for _, f := range fbs {
		if f.Script < len(rs) {
			rs[f.Script].PrepareFallbacks = append(rs[f.Script].PrepareFallbacks, f.PrepareFallback)
		}
	}
}
