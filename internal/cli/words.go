package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pgscale/pgscale/internal/agent"
	"github.com/pgscale/pgscale/internal/connerr"
	"github.com/pgscale/pgscale/internal/disturb"
	"github.com/pgscale/pgscale/internal/load"
	"github.com/pgscale/pgscale/internal/proc"
	"github.com/pgscale/pgscale/internal/target"
)

// worded is err's message with the typed errors of the layers below, which
// speak of no flag, worded in the flags of cmd that give what they refuse
// (issue 45): an agent's option, a disturbance, raw I/O's limit, and the
// fix of a failed connection in the flag its connection string came from.
// Each is found wherever it is wrapped, and its own text replaced where
// its wrapper says it.
func worded(cmd *cobra.Command, err error) string { return wordTree(cmd, err, dsnPlace(cmd)) }

// wordTree is e's message with the typed errors in it, and in what it
// wraps, worded; a connection string came from place unless a wrapper says
// otherwise (the coordination database's, a named target's).
func wordTree(cmd *cobra.Command, e error, place string) string {
	msg, ok := word(e, place)
	if !ok {
		msg = e.Error()
	}
	switch x := e.(type) {
	case *agent.CoordinationError:
		place = "--coordinator"
	case *target.NamedError:
		place = targetPlace(cmd, x.Name)
	}
	var children []error
	switch u := e.(type) {
	case interface{ Unwrap() error }:
		children = []error{u.Unwrap()}
	case interface{ Unwrap() []error }:
		children = u.Unwrap()
	}
	at := 0 // the children's texts come in order: a joined error's may be alike
	for _, c := range children {
		if c == nil {
			continue
		}
		was, now := c.Error(), wordTree(cmd, c, place)
		i := strings.Index(msg[at:], was)
		if i < 0 {
			continue
		}
		i += at
		msg = msg[:i] + now + msg[i+len(was):]
		at = i + len(now)
	}
	return msg
}

// word words e, when it is one of the typed errors below the edge, for a
// connection string that came from place.
func word(e error, place string) (string, bool) {
	switch x := e.(type) {
	case *connerr.Error:
		return x.In(place), x.Remedy != connerr.NoRemedy
	case *agent.OptionError:
		return agentOption(x), true
	case *agent.NoRunError:
		return x.With("start pgscale run, ab or suite with --agents N --coordinator DSN and the same --agents-job as this agent's --job"), true
	case *disturb.SpecError:
		flag := "--disturb-file"
		if x.Builtin {
			flag = "--disturb"
		}
		if x.Spec == "" && errors.Is(x.Err, disturb.ErrUntimed) {
			return flag + " needs -T: windows are placed in time, and -t runs for an unknown time", true
		}
		return fmt.Sprintf("%s %q: %v", flag, x.Spec, x.Err), true
	case *proc.NoUserError:
		return x.With("create it or pass --os-user"), true
	case *load.RawLimitError:
		return x.Use("use the netpoller: --io netpoll or auto"), true
	}
	return "", false
}

// agentOption words an option of agents in the flag that gives it.
func agentOption(e *agent.OptionError) string {
	switch {
	case e.Field == "Agents":
		return "--agents " + e.Err.Error()
	case e.Field == "DSN" && e.Missing:
		return "--agents needs --coordinator DSN: " + e.Err.Error()
	case e.Field == "Coordinator" && e.Missing:
		return "an agent needs --coordinator DSN (or " + agent.EnvCoordinator + "): " + e.Err.Error()
	case e.Field == "DSN" || e.Field == "Coordinator":
		return "--coordinator: " + e.Err.Error()
	case e.Value != "":
		return fmt.Sprintf("--%s %q: %v", strings.ToLower(e.Field), e.Value, e.Err)
	}
	return "--" + strings.ToLower(e.Field) + ": " + e.Err.Error()
}

// dsnPlace is where cmd's connection string came from: --dsn when given,
// else it is "the connection string".
func dsnPlace(cmd *cobra.Command) string {
	if cmd != nil {
		if f := cmd.Flags().Lookup("dsn"); f != nil && f.Changed {
			return "--dsn"
		}
	}
	return "the connection string"
}

// targetPlace is where target name's connection string came from: its
// --target, or the suite file.
func targetPlace(cmd *cobra.Command, name string) string {
	if cmd != nil {
		if f := cmd.Flags().Lookup("target"); f != nil && f.Changed {
			return "--target " + name
		}
		if cmd.Name() == "suite" {
			return "the suite file's target " + name
		}
	}
	return "target " + name + "'s connection string"
}
