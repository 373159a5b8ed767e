// Package engine runs clients against a target and records what they see:
// one goroutine and one connection per client, pgbench's protocol modes,
// rate schedule, latency limit and retries, with per-client recorders merged
// by one collector per interval.
package engine

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/load"
	"github.com/pgscale/pgscale/internal/metrics"
	"github.com/pgscale/pgscale/internal/script"
)

// Protocol is pgbench's -M: how SQL commands reach the server.
type Protocol uint8

// Protocols, as pgbench names them.
const (
	Simple   Protocol = iota // simple query protocol, variables substituted into the text
	Extended                 // extended protocol, unnamed statement parsed every time
	Prepared                 // extended protocol, statements prepared once per connection
)

var protocolNames = []string{"simple", "extended", "prepared"}

func (p Protocol) String() string { return protocolNames[p] }

// ParseProtocol parses -M's argument.
func ParseProtocol(s string) (Protocol, error) {
	return parseName[Protocol]("protocol", protocolNames, s)
}

// parseName finds s among a mode's names (the mode is its index), or says
// which names there are.
func parseName[T ~uint8](what string, names []string, s string) (T, error) {
	for i, n := range names {
		if s == n {
			return T(i), nil
		}
	}
	want := strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	return 0, fmt.Errorf("unknown %s %q (want %s)", what, s, want)
}

// IOMode chooses how client connections wait for the server.
type IOMode uint8

// I/O modes. Raw system calls (poll then read, as pgbench does, invisible
// to the Go scheduler) cost about half the client CPU per round trip of Go's
// netpoller on this kind of machine (docs/engine.md); the netpoller is kept for TLS and for very many
// clients, where one busy OS thread per client stops paying.
const (
	IOAuto    IOMode = iota // raw unless TLS or more than RawMaxClients clients
	IORaw                   // raw poll(2), recv(2) and send(2) on the socket; one P per client
	IONetpoll               // Go's netpoller
)

var ioNames = []string{"auto", "raw", "netpoll"}

func (m IOMode) String() string { return ioNames[m] }

// ParseIOMode parses --io's argument.
func ParseIOMode(s string) (IOMode, error) { return parseName[IOMode]("I/O mode", ioNames, s) }

// Colocate says whether each client's OS thread follows the CPU its
// server backend last ran on (raw I/O, a server on this machine).
//
// Why: a client and its backend hand every round trip to each other, and
// the kernel sometimes runs the pair on different CPUs, where every hand-off
// is a cross-CPU wake-up. Runs then come in a fast and a slow mode (at 8
// clients on 2 cores here 90 k against 110-120 k tps, the load
// generator's CPU per transaction 8.4 against 6.0-6.4 µs), pgbench's too.
// A client that moves its thread to its backend's CPU every rawYield made
// the slow mode rare: in 8 interleaved rounds at 8 clients 101-125 k tps
// with it, 88-128 k without (four rounds under 100 k); 9.7 % more
// throughput and 11 % less CPU per transaction, paired (docs/engine.md). The
// backends are not touched: the kernel places them as it likes, and the
// clients follow. With one client the
// other CPUs are idle and the kernel's own placement did better (1.35
// against 1.10 × pgbench's throughput), so auto follows with two or more.
type Colocate uint8

// Colocation modes.
const (
	ColocateAuto Colocate = iota // follow with more than one client
	ColocateOn                   // follow with any number of clients
	ColocateOff                  // leave placement to the kernel
)

var colocateNames = []string{"auto", "on", "off"}

func (m Colocate) String() string { return colocateNames[m] }

// ParseColocate parses --colocate's argument.
func ParseColocate(s string) (Colocate, error) {
	return parseName[Colocate]("colocation", colocateNames, s)
}

// RawMaxClients is the most clients for which IOAuto picks raw I/O: beyond
// it, one OS thread per client costs more than the netpoller.
const RawMaxClients = 256

// RawLimit is the most clients (and companions) IORaw accepts: raw I/O
// holds a P, and so an OS thread, per client; the netpoller's threads do
// not grow with the client count.
const RawLimit = 1024

// DefaultConnectConcurrency is how many connections a step opens at once
// unless Config.ConnectConcurrency says otherwise (load's).
const DefaultConnectConcurrency = load.DefaultConnectConcurrency

// Config is one step: a fixed number of clients running a program.
type Config struct {
	// Settings are how the load runs (-T -t -C -R -L --max-tries -r --io
	// --colocate...): the value the runner and the agents' wire hand
	// over whole. A refused connection that may succeed later (a full
	// listen queue, too many clients for the server or pooler just now)
	// is retried with back-off until the connection's ConnectTimeout
	// (30 s when unset).
	load.Settings
	Conn     *pgconn.Config  // where to connect (from pgconn.ParseConfig); copied per connection
	Program  *script.Program // the weighted scripts
	Clients  int
	Protocol Protocol
	// Companions counts the goroutines that run beside the clients during
	// the step and must not wait for a client's yield to run (disturbance
	// sessions, the probes' sampling: observe.CompanionWatcher): with raw
	// I/O each gets a P of its own, as each client does.
	Companions       int
	Seed             uint64        // seeds the rate schedule
	ReconnectTimeout time.Duration // a client gives up after failing to reconnect this long; default 10 s
	// ConnectProgress, when set, is called while the clients connect,
	// every ConnectProgressEvery and once when the phase ends, with how many
	// clients have connected. It is called from one goroutine.
	ConnectProgress func(connected, total int)
	// Progress, when set, is called by the collector after every interval.
	Progress func(Progress)
	// Events, when set, receives one-line notices (a client reconnected, aborted).
	Events func(string)
	// Targets, with more than one entry, replaces Conn for an A/B
	// comparison in slices: every client keeps one connection to each
	// target, and all clients switch target together every Slice (aligned
	// to the start of the step, warm-up included); SliceTarget(i) is the
	// target of slice i. The first Settle of every slice is not counted,
	// so transactions in flight at a switch do not blur the two targets.
	// A slice edge the collector comes to late (a starved machine) moves
	// the slices after it, the window's end included: every slice keeps
	// its settle time and its counted length from the real switch, and the
	// step runs longer by as much. Result.Slices holds each measured slice.
	Targets     []*pgconn.Config
	Slice       time.Duration
	Settle      time.Duration
	SliceTarget func(i int) int
	// SliceMeter, when set with several targets, reads cumulative counters
	// of what target t costs outside this process (its server's CPU,
	// context switches): the engine reads it as each slice's counted part
	// begins and ends, and keeps the differences in Slice.Costs. It is
	// called from the collector, so it must be quick.
	SliceMeter func(t int) map[string]float64
	// OnStart, when set, is called once every client is connected, just
	// before they start: start is when transactions begin, window when the
	// measured window begins (start + Warmup). It must return quickly.
	OnStart func(start, window time.Time)
	// Quiesce, when set, is called at the two edges of the measured window
	// with every client connected and between transactions, and may block
	// meanwhile: before the window's first transaction (WindowStart; a
	// warm-up then runs first as a phase of its own, and the clients wait
	// for each other at its end) and after its last (WindowEnd, before any
	// client disconnects). The window's clock starts after the first call
	// and stops before the second, and with Transactions every client
	// runs that many in the window. It is what counting the server's
	// instructions exactly needs; an error from the first call ends the
	// step, and it is not called again.
	Quiesce func(Edge) error
	// AtEnd, when set, is called once every client has run its last
	// transaction of the step, before any disconnects (after
	// Quiesce(WindowEnd) when both are set); the clients wait meanwhile.
	// A step whose end is not planned (Transactions) has its last
	// snapshots taken there, while the clients' backends are still
	// there. It is not called on an interrupt.
	AtEnd func()
	// WarmupTransactions, with Quiesce, makes the warm-up that many
	// transactions per client instead of Warmup's duration: the window
	// then starts from the same state (the scripts' random draws, the
	// pages the warm-up read) in every step that repeats it.
	WarmupTransactions int
	// SimpleCommands, when set, marks the SQL commands sent with the
	// simple protocol whatever Protocol says: SimpleCommands[si][pc] for
	// command pc of script si (statements the server would not prepare
	// for their parameters' types: workload.CheckPrepare).
	SimpleCommands [][]bool
	// OnTxn, when set, is called with every transaction counted (and every
	// one skipped under -R -L) as it ends, from the client's own goroutine:
	// it must be safe for concurrent use, and it delays the client while it
	// runs. Unset, it costs one nil check per transaction.
	OnTxn func(Txn)
	// OnFailure, when set, receives every client error as it happens, with
	// where in the script it happened and what the client does next, from
	// the client's goroutine; aborts then go here instead of to Events.
	OnFailure func(Failure)
	// OnNotice, when set, receives the server's notices and warnings
	// (NOTICE, WARNING, INFO...) on the clients' connections, from the
	// client's goroutine.
	OnNotice func(*pgconn.Notice)
	// FirstClient is the id of this process's first client when a step's
	// clients are shared among several processes (internal/agent): the
	// clients are FirstClient to FirstClient+Clients-1, each with the
	// client_id, random state and rate schedule it has in a single process
	// running them all. Program must then be built for all of the step's
	// clients, and Rate is this process's share of the step's rate.
	FirstClient int
	// SourceAddr, when set, is the local address client connections bind
	// to when they connect over TCP (a machine with several addresses, or
	// agents on one machine that stand for several).
	SourceAddr net.IP
	// Barrier, when set, is called once every client is connected, before
	// OnStart, and returns the instant the clients start, once that instant
	// has come: the processes that share a step's clients start together
	// this way, each waiting in Barrier. The collector's intervals are
	// aligned on the instant returned. An error ends the step before
	// anything is measured. It is not used with Quiesce.
	Barrier func(ctx context.Context) (time.Time, error)
}

// Txn is one transaction as it ended: what pgbench -l logs.
type Txn struct {
	Client int
	// Number is the client's count of transactions so far, this one
	// included (skipped and failed ones count, as in pgbench).
	Number int
	Script int       // index of the script in the program
	End    time.Time // when it ended, or was skipped
	// Latency is from the scheduled start (the actual start without -R)
	// to the end; Lag, under -R, from the scheduled to the actual start.
	// Both are 0 for a skipped or failed transaction.
	Latency, Lag time.Duration
	Tries        int // 0 when skipped
	Skipped      bool
	Failed       bool
	Kind         metrics.FailKind // when Failed
}

// Failure is one client error: who, where in the script, and what the
// client does next (pgbench's abort, retry and failure messages).
type Failure struct {
	Client int
	Script int // index of the script in the program; -1 outside a transaction
	// Command is the index of the failing command in the script (-1 when
	// the client failed outside its script: connecting); Query the 0-based
	// statement of a compound SQL command.
	Command, Query int
	Err            error
	// Message is Err's message, redacted, with its place in the script
	// when it has one: `div.sql:3: ERROR: division by zero (SQLSTATE
	// 22012), running "SELECT 1/0"`. Empty outside a script.
	Message string
	Kind    metrics.FailKind
	Abort   bool // the client stops
	Retry   bool // the transaction is tried again
	Tries   int  // tries of the transaction so far, this one included
	// Elapsed is the time since the transaction's scheduled start.
	Elapsed time.Duration
}

// Edge is an edge of a step's measured window (Config.Quiesce).
type Edge int

// The edges of a measured window.
const (
	WindowStart Edge = iota
	WindowEnd
)

// Progress is one interval as it ends, for pgbench-style progress lines.
type Progress struct {
	Clients int
	Elapsed time.Duration // since the clients started (warm-up included)
	Warmup  bool
	Point
}

// targets returns the connection configs, one per target.
func (c *Config) targets() []*pgconn.Config {
	if len(c.Targets) > 0 {
		return c.Targets
	}
	return []*pgconn.Config{c.Conn}
}

// io is Settings.IO as a mode (auto when it does not parse: validate
// says so).
func (c *Config) io() IOMode {
	m, _ := ParseIOMode(orAuto(c.IO))
	return m
}

// colocate is Settings.Colocate as a mode.
func (c *Config) colocate() Colocate {
	m, _ := ParseColocate(orAuto(c.Colocate))
	return m
}

// ioErr says what in Settings.IO or Settings.Colocate does not parse.
func (c *Config) ioErr() error {
	if _, err := ParseIOMode(orAuto(c.IO)); err != nil {
		return err
	}
	_, err := ParseColocate(orAuto(c.Colocate))
	return err
}

// orAuto is "auto" for a mode left empty.
func orAuto(s string) string {
	if s == "" {
		return "auto"
	}
	return s
}

func (c *Config) validate() error {
	switch {
	case c.Conn == nil && len(c.Targets) == 0:
		return fmt.Errorf("engine: no connection config")
	case len(c.Targets) > 1 && (c.Slice <= 0 || c.SliceTarget == nil):
		return fmt.Errorf("engine: several targets need a slice length and SliceTarget")
	case len(c.Targets) > 1 && c.Settle >= c.Slice:
		return fmt.Errorf("engine: slice settle time %v must be shorter than the slice %v", c.Settle, c.Slice)
	case c.Program == nil:
		return fmt.Errorf("engine: no program")
	case c.Clients < 1:
		return fmt.Errorf("engine: clients must be at least 1, got %d", c.Clients)
	case c.Duration <= 0 && c.Transactions <= 0:
		return fmt.Errorf("engine: need a duration or a transaction count")
	case c.Duration > 0 && c.Transactions > 0:
		return fmt.Errorf("engine: a duration and a transaction count are exclusive")
	case c.MaxTries < 0:
		return fmt.Errorf("engine: tries per transaction must be at least 0 (unlimited), got %d", c.MaxTries)
	case c.MaxTries == 0 && c.Duration <= 0 && c.LatencyLimit <= 0:
		return fmt.Errorf("engine: unlimited tries (max tries 0) need a duration or a latency limit")
	case c.ioErr() != nil:
		return fmt.Errorf("engine: %w", c.ioErr())
	case c.io() == IORaw && c.Clients+c.Companions > RawLimit:
		return &load.RawLimitError{Clients: c.Clients, Companions: c.Companions, Limit: RawLimit}
	case c.FirstClient < 0:
		return fmt.Errorf("engine: first client must be at least 0, got %d", c.FirstClient)
	case c.Barrier != nil && c.Quiesce != nil:
		return fmt.Errorf("engine: a barrier and quiesced window edges are exclusive")
	case c.ConnectConcurrency < 0:
		return fmt.Errorf("engine: connect concurrency must be positive, got %d", c.ConnectConcurrency)
	case c.Protocol == Simple && c.usesPipeline():
		return fmt.Errorf("engine: pipelines need the extended or prepared protocol (-M extended|prepared)")
	case !c.simpleShaped():
		return fmt.Errorf("engine: SimpleCommands does not have the program's scripts and commands")
	}
	return nil
}

// simpleShaped says whether SimpleCommands, when set, has an entry for
// every command of every script.
func (c *Config) simpleShaped() bool {
	if c.SimpleCommands == nil {
		return true
	}
	scripts := c.Program.Scripts()
	if len(c.SimpleCommands) != len(scripts) {
		return false
	}
	for i, s := range scripts {
		if len(c.SimpleCommands[i]) != len(s.Commands) {
			return false
		}
	}
	return true
}

func (c *Config) usesPipeline() bool {
	for _, s := range c.Program.Scripts() {
		for _, cmd := range s.Commands {
			if cmd.Kind == script.KindStartPipeline {
				return true
			}
		}
	}
	return false
}
