package cli

import (
	"errors"
	"fmt"
	"testing"

	"github.com/spf13/cobra"

	"github.com/pgscale/pgscale/internal/agent"
	"github.com/pgscale/pgscale/internal/connerr"
	"github.com/pgscale/pgscale/internal/disturb"
	"github.com/pgscale/pgscale/internal/load"
	"github.com/pgscale/pgscale/internal/proc"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
)

// The typed errors of the layers below are worded in the flags that give
// what they refuse, wherever they are wrapped; a failed connection's fix
// names where its connection string came from.
func TestWorded(t *testing.T) {
	cmd := func(name string, flags ...string) *cobra.Command {
		c := &cobra.Command{Use: name}
		for _, f := range flags {
			c.Flags().String(f, "", "")
			if err := c.Flags().Set(f, "x"); err != nil {
				t.Fatal(err)
			}
		}
		c.Flags().String("unset", "", "")
		return c
	}
	refused := &connerr.Error{Target: "host=h port=1 user=u dbname=d", Reason: "no server is listening there", Remedy: connerr.FixAddress}
	full := &connerr.Error{Target: "host=h port=1 user=u dbname=d", Reason: "too many clients already", Fix: "raise max_connections or use fewer clients"}
	for _, c := range []struct {
		cmd  *cobra.Command
		err  error
		want string
	}{
		{cmd("run", "dsn"), refused, "cannot connect to host=h port=1 user=u dbname=d: no server is listening there (start the server or fix host/port in --dsn)"},
		{cmd("run"), refused, "cannot connect to host=h port=1 user=u dbname=d: no server is listening there (start the server or fix host/port in the connection string)"},
		{cmd("run", "dsn"), full, full.Error()},
		{cmd("run", "dsn"), &agent.CoordinationError{Err: refused},
			"coordination database: cannot connect to host=h port=1 user=u dbname=d: no server is listening there (start the server or fix host/port in --coordinator)"},
		{cmd("ab", "target"), fmt.Errorf("round 1: %w", target.Named("a", usage.Wrap(refused))),
			"round 1: target a: cannot connect to host=h port=1 user=u dbname=d: no server is listening there (start the server or fix host/port in --target a)"},
		{cmd("suite"), errors.Join(target.Named("a", refused), target.Named("b", refused)),
			"target a: cannot connect to host=h port=1 user=u dbname=d: no server is listening there (start the server or fix host/port in the suite file's target a)\n" +
				"target b: cannot connect to host=h port=1 user=u dbname=d: no server is listening there (start the server or fix host/port in the suite file's target b)"},
		{cmd("run"), usage.Wrap(&agent.OptionError{Field: "Agents", Err: errors.New("must be at least 1, got 0")}), "--agents must be at least 1, got 0"},
		{cmd("run"), &agent.OptionError{Field: "DSN", Missing: true, Err: errors.New("why")}, "--agents needs --coordinator DSN: why"},
		{cmd("agent"), &agent.OptionError{Field: "Coordinator", Missing: true, Err: errors.New("why")}, "an agent needs --coordinator DSN (or PGSCALE_COORDINATOR): why"},
		{cmd("agent"), &agent.OptionError{Field: "Coordinator", Err: errors.New("bad")}, "--coordinator: bad"},
		{cmd("agent"), &agent.OptionError{Field: "Image", Missing: true, Err: errors.New("name it")}, "--image: name it"},
		{cmd("agent"), &agent.OptionError{Field: "CPU", Value: "lots", Err: errors.New("bad")}, `--cpu "lots": bad`},
		{cmd("agent"), &agent.NoRunError{Job: "j", Where: "w", Wait: 0},
			`no open run of job "j" on w within 0s (start pgscale run, ab or suite with --agents N --coordinator DSN and the same --agents-job as this agent's --job)`},
		{cmd("run"), target.Named("a", &disturb.SpecError{Builtin: true, Spec: "vacuum@1", Err: errors.New("no table")}), `target a: --disturb "vacuum@1": no table`},
		{cmd("run"), &disturb.SpecError{Spec: "f.sql@1", Err: errors.New("bad")}, `--disturb-file "f.sql@1": bad`},
		{cmd("run"), &disturb.SpecError{Err: disturb.ErrUntimed}, "--disturb-file needs -T: windows are placed in time, and -t runs for an unknown time"},
		{cmd("run"), fmt.Errorf("step 1: %w", &load.RawLimitError{Clients: 2000, Companions: 3, Limit: 1024}),
			"step 1: engine: raw I/O holds one OS thread per client and per companion (the probes, disturbance sessions); 2000 clients and 3 companions are more than its limit of 1024 (use the netpoller: --io netpoll or auto)"},
		{cmd("ab"), fmt.Errorf("pgbouncer runs as pg: %w", &proc.NoUserError{Name: "pg"}),
			`pgbouncer runs as pg: PostgreSQL refuses to run as root and OS user "pg" does not exist: create it or pass --os-user`},
		{nil, errors.New("plain"), "plain"},
	} {
		if got := worded(c.cmd, c.err); got != c.want {
			t.Errorf("worded(%v):\n%s\nwant\n%s", c.err, got, c.want)
		}
	}
}
