// Package watch is what a probe may ask of the server it watches: how to
// connect, the postmaster's process, the data directory, the build's
// constants, the server under Valgrind, the servers behind a target, and
// the pooler in front of it with its admin console. A target offers it
// (target.Server.Watch); a probe asks for what it needs instead of reading
// a field the runner filled, so a new probe needs no change outside its
// own files.
package watch

import (
	"context"

	"github.com/jackc/pgx/v5/pgconn"
)

// Server is the server a probe watches: behind a pooler, the server the
// pooler fronts.
type Server interface {
	// Conn is how to connect to it; a probe copies it for each
	// connection of its own.
	Conn() *pgconn.Config
	// PID is the postmaster's pid on this host now (a server restarted
	// between steps has a new one), 0 when pgscale did not start it: a
	// probe then finds it from a backend of its own, which works when the
	// server runs on this host.
	PID() int
	// Ephemeral says pgscale started it, so that a probe may create the
	// extensions it needs (pg_stat_statements, pg_wait_sampling); on
	// other servers they are used only when already there.
	Ephemeral() bool
	// DataDir is its data directory on this host, "" when not known.
	DataDir() string
	// BuildConstant is a compile-time constant of its build (a src:
	// target's FP_LOCK_SLOTS_PER_BACKEND); ok is false when the build
	// does not say (an installed server).
	BuildConstant(name string) (v int, ok bool)
	// Callgrind reaches it when it runs under Valgrind's callgrind; nil
	// otherwise.
	Callgrind() *Callgrind
	// Upstreams are the servers behind the target when there are several
	// (a proxy's shards, a primary and its replicas); nil for one.
	Upstreams() []Upstream
	// Pooler is the pooler or proxy in front of it that pgscale started;
	// nil for none.
	Pooler() Pooler
}

// Pooler is a pooler or proxy in front of the server.
type Pooler interface {
	// Program names it: "pgbouncer".
	Program() string
	// PID is its process id on this host, 0 when it is not running.
	PID() int
	// Callgrind reaches it when it runs under Valgrind's callgrind; nil
	// otherwise.
	Callgrind() *Callgrind
	// Admin is its admin console, nil when its definition names none.
	Admin() *Admin
}

// Callgrind reaches a process tree run under Valgrind's callgrind.
type Callgrind struct {
	// Control sends callgrind monitor commands to process pid.
	Control func(ctx context.Context, pid int, commands ...string) (string, error)
	// Out is the base name of process pid's dump files (BASE.N).
	Out func(pid int) string
}

// Upstream is one server behind a target: a server a proxy fronts, or a
// streaming replica.
type Upstream struct {
	Name string
	Role string // "primary" or "replica"
	// Primary is, for a replica, the index of its primary among the
	// upstreams; -1 for a primary.
	Primary int
	Conn    *pgconn.Config
}

// Admin is a pooler's admin console: how to connect to it, and the
// commands a probe of the pooler runs there with how their columns map to
// pgscale's pool figures (PgBouncer's SHOW POOLS and SHOW STATS; PgCat's
// and PgDog's alike; pgpool-II's SHOW POOL_PROCESSES and SHOW
// POOL_NODES).
type Admin struct {
	Conn     *pgconn.Config
	Commands []AdminCommand
}

// AdminCommand is one command of an admin console and what its rows say.
type AdminCommand struct {
	// Command is what is sent, as a simple query: "SHOW POOLS".
	Command string
	// Pool are the columns that name a row's pool ("database", "user");
	// none when a row is the whole pooler's.
	Pool []string
	// Columns maps a pool figure (one of Figures) to the column that
	// holds it.
	Columns map[string]string
	// Scale multiplies a figure's column by a factor, for a pooler that
	// writes another unit than the figure's (PgDog's milliseconds: 1000
	// for wait_us_total); a figure not in it is taken as it is.
	Scale map[string]float64
	// Count maps a pool figure to the rows it counts, for a pooler that
	// lists one row per process or connection (pgpool-II's SHOW
	// POOL_PROCESSES): each row that matches adds one.
	Count map[string]RowMatch
}

// RowMatch picks the rows whose Column holds Value (or, with Not, does
// not).
type RowMatch struct {
	Column, Value string
	Not           bool
}

// Pool figures an admin command's columns map to.
const (
	ClientsActive   = "clients_active"  // clients linked to a server connection
	ClientsWaiting  = "clients_waiting" // clients waiting for one
	ServersActive   = "servers_active"  // server connections linked to a client
	ServersIdle     = "servers_idle"    // unused and ready
	ServersUsed     = "servers_used"    // idle, not yet reset for reuse
	MaxWaitSeconds  = "maxwait_s"       // the longest wait of a waiting client, whole seconds
	MaxWaitMicros   = "maxwait_us"      // and its microseconds
	Transactions    = "transactions"    // transactions the pooler counted, in total
	Queries         = "queries"         // queries it counted, in total
	WaitMicroTotals = "wait_us_total"   // time clients spent waiting for a server, in total, µs
	TransactionUS   = "xact_time_us"    // time spent in transactions, in total, µs
	QueryUS         = "query_time_us"   // time spent in queries, in total, µs
)

// Figures are the pool figures an admin command's columns may map to.
var Figures = []string{ClientsActive, ClientsWaiting, ServersActive, ServersIdle, ServersUsed, MaxWaitSeconds, MaxWaitMicros,
	Transactions, Queries, WaitMicroTotals, TransactionUS, QueryUS}
