// Package experiment is the typed experiment: what every schedule runs —
// the workload and its data, how the load runs, what watches each step,
// where its events go. It is made once where the user gives it (the
// command line, a suite file), checked there in the user's words, and
// handed down as a value that nothing below parses again or changes, as
// pgx hands down a pgconn.Config parsed from a connection string.
package experiment

import (
	"io"
	"net"
	"time"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/disturb"
	"github.com/pgscale/pgscale/internal/engine"
	"github.com/pgscale/pgscale/internal/load"
	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/probeopt"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/workload"
)

// Common is what every schedule takes: the workload, its data, how the
// load runs, what watches each step, and where events go.
type Common struct {
	// Argv is the command line, passwords redacted where it was read
	// (secret.RedactAll), recorded in every result file; Version is
	// pgscale's.
	Argv    []string
	Version string
	// Cluster shapes the ephemeral clusters the run starts (under
	// Valgrind when counting).
	Cluster target.ClusterOptions
	// Workload is the workload, its scripts read and parsed.
	Workload *workload.Loaded
	Data     Data
	Load     Load
	// Probes choose the server-side probes, their defaults filled in.
	Probes probeopt.Options
	// Disturbances run in every step, their windows checked against the
	// step's duration.
	Disturbances []disturb.Disturbance
	// Observer receives the run's events (nil: none).
	Observer observe.Observer
	// Expect are decision rules on a sweep, recorded in the result file;
	// the edge checks them (compare.Check).
	Expect []compare.Expectation
	// Transactions, when set, receives every transaction as it ends
	// (pgbench -l); unset, the engine's hook costs a nil check.
	Transactions observe.TxnSink
	// ShellOut and ShellErr receive what the scripts' \shell commands
	// write, as pgbench passes its own stdout and stderr to them (nil:
	// discarded); many clients write at once, so each is safe for that.
	ShellOut, ShellErr io.Writer
}

// Data is the data the workload runs on.
type Data struct {
	// Init are pgbench -i's options for the data a target gets.
	Init workload.InitOptions
	// Pgbench says an ephemeral target gets pgbench's data: the
	// workload, the set-up or a disturbance uses its tables (and a suite
	// did not leave it out).
	Pgbench bool
	// Create (re)creates pgbench's data on dsn targets too; Recreate
	// says how the user asks for that, in the words they give it with
	// ("pass --init"), for the refusal of targets that hold different
	// data to offer (empty: it offers only pgscale init).
	Create   bool
	Recreate string
	// MakeTables says how the user makes pgbench's tables on a dsn
	// target that has none, in the words they do it with ("run `pgscale
	// init --dsn ...` first, or pass --init to create them"), for the
	// refusal of a workload that needs them to offer (empty: nothing).
	MakeTables string
	// ScaleGiven says a scale was given: a scale the data contradicts is
	// warned about (pgbench reads the scale from the data).
	ScaleGiven bool
	// Setup is SQL run once on every target before measuring; SetupName
	// names it in errors, as the user gave it ("--setup FILE", "the
	// suite's setup").
	Setup, SetupName string
	// Separate has every ephemeral target of a counted A/B run make its
	// own data in every layout, instead of running on a byte-identical
	// copy of the baseline's: for a change in how the data is built (an
	// index's construction), which runs on a copy do not see.
	Separate bool
}

// Load is how the load runs, the same on every target: the clients of
// the sweep and how each step's load runs (load.Settings, handed to the
// engine and to agents whole), and what pgscale does around the steps.
type Load struct {
	load.Settings
	Clients  []int
	NoVacuum bool // -n
	// Threads is pgbench's -j: clients are dealt to this many threads for
	// pgbench's per-thread random streams (the choice of scripts, log
	// sampling); 0 is a thread per client. It changes no OS thread.
	Threads int
	// VacuumAccounts is pgbench's -v: pgbench_accounts is vacuumed too.
	VacuumAccounts bool
	// VerboseErrors reports every client error (retried and failed
	// transactions too), not only aborts.
	VerboseErrors bool
	// SourceAddress, when set, is the local address the clients bind
	// when they connect over TCP.
	SourceAddress net.IP
}

// MaxClients is the largest client count of the sweep.
func (l Load) MaxClients() int {
	m := 0
	for _, c := range l.Clients {
		m = max(m, c)
	}
	return m
}

// Agents spreads a run's clients over agents, pgscale agent processes on
// other machines (or on this one, from loopback addresses of their own),
// through a coordination database. The probes, disturbances and
// diagnosis stay with the run.
type Agents struct {
	Count int
	// Coordinator is the coordination database's connection string.
	Coordinator string
	// Job names the run for the agents.
	Job string
	// JoinTimeout bounds the wait for the agents to join and, in each
	// step, to connect their clients; LostAfter is how long an agent may
	// be silent before the step fails.
	JoinTimeout, LostAfter time.Duration
	// TargetDSN is the target's connection string as the agents reach it
	// (no password); default the run's own, password removed.
	TargetDSN string
}

// Counting reports whether the run counts instructions under Valgrind.
func (c *Common) Counting() bool { return c.Probes.On(probeid.Instructions.Name) }

// Events is where the run's events go: the Observer, or nowhere.
func (c *Common) Events() observe.Observer {
	if c.Observer == nil {
		return observe.Discard
	}
	return c.Observer
}

// Notice tells the observer a line of what the run does.
func (c *Common) Notice(s string) { c.Events().Observe(observe.Notice{Text: s}) }

// Needs is what the run asks of the servers it opens.
func (c *Common) Needs() target.Needs {
	return target.Needs{DataBytes: workload.DataBytes(c.Data.Init.Scale), Connections: c.Load.MaxClients() + disturb.Sessions(c.Disturbances),
		Clients: c.Load.MaxClients(), Prepared: c.Workload.Protocol == engine.Prepared}
}

// CheckModes says whether the engine knows the load's I/O mode and its
// colocation, which the load keeps as their names (they travel to agents
// as written; empty is auto): what names an unknown one ("io" or
// "colocate") and why.
func (l Load) CheckModes() (what string, err error) {
	if _, err := engine.ParseIOMode(orAuto(l.IO)); err != nil {
		return "io", err
	}
	if _, err := engine.ParseColocate(orAuto(l.Colocate)); err != nil {
		return "colocate", err
	}
	return "", nil
}

// orAuto is a mode's name, "auto" when unset.
func orAuto(name string) string {
	if name == "" {
		return "auto"
	}
	return name
}
