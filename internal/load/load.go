// Package load is how a step's load runs, the same for every client: the
// one value the command line (and a suite file) fills, the
// engine runs and the agents' wire carries, as pgbench's options say it
// (-T -t -C -R -L --max-tries -r and pgscale's own).
package load

import (
	"fmt"
	"time"
)

// DefaultConnectConcurrency is how many clients open their connections at
// once unless Settings.ConnectConcurrency says otherwise: enough to
// connect thousands of clients in seconds, few enough not to overflow a
// server's or a pooler's listen queue (pgbouncer's listen_backlog is 128)
// or to fork backends faster than the machine can start them.
const DefaultConnectConcurrency = 32

// Settings is how a step's load runs. Its JSON is what the coordinator
// hands its agents with each step.
type Settings struct {
	Duration     time.Duration `json:"duration,omitempty"`     // -T; zero with Transactions
	Transactions int           `json:"transactions,omitempty"` // -t, per client
	// Warmup runs before the measured window, not counted.
	Warmup time.Duration `json:"warmup,omitempty"`
	// Connect (-C) opens a new connection for every transaction.
	Connect bool `json:"connect,omitempty"`
	// Rate (-R) is the target transactions per second over all clients;
	// 0 is as fast as possible. A process that runs a share of a step's
	// clients (an agent) runs its share of the rate.
	Rate float64 `json:"rate,omitempty"`
	// LatencyLimit (-L) counts transactions over it as late; with Rate,
	// those already late are skipped.
	LatencyLimit time.Duration `json:"latency_limit,omitempty"`
	// MaxTries is --max-tries: tries per transaction on a serialization
	// failure or deadlock; 0 is unlimited, as in pgbench (it needs
	// Duration or LatencyLimit).
	MaxTries int `json:"max_tries"`
	// ContinueOnError keeps a client going after an SQL error that is not
	// a serialization failure or deadlock (pgbench aborts the client).
	ContinueOnError bool `json:"continue_on_error,omitempty"`
	// Interval is the length of the per-interval series and of the
	// progress reports; 0 is 1 s.
	Interval   time.Duration `json:"interval,omitempty"`
	PerCommand bool          `json:"per_command,omitempty"` // -r: time every command
	// IO is how client connections wait for the server: auto (""), raw
	// or netpoll (engine.IOMode).
	IO string `json:"io,omitempty"`
	// Colocate is whether each client's thread follows its backend's CPU:
	// auto (""), on or off (engine.Colocate).
	Colocate string `json:"colocate,omitempty"`
	// ConnectConcurrency bounds how many clients open their connections at
	// once before each step; 0 is DefaultConnectConcurrency.
	ConnectConcurrency int `json:"connect_concurrency,omitempty"`
	// ExitOnAbort ends the step as soon as one client aborts (pgbench's
	// --exit-on-abort); the step is then incomplete.
	ExitOnAbort bool `json:"exit_on_abort,omitempty"`
}

// RawLimitError is more clients and companions (the probes, disturbance
// sessions) than raw I/O takes, Limit: the netpoller takes them. The
// command line says how to ask for it.
type RawLimitError struct{ Clients, Companions, Limit int }

// Error says why, and to use the netpoller.
func (e *RawLimitError) Error() string { return e.Use("use the netpoller") }

// Use is Error with fix, what to do, in the parentheses that end it.
func (e *RawLimitError) Use(fix string) string {
	return fmt.Sprintf("engine: raw I/O holds one OS thread per client and per companion (the probes, disturbance sessions); %d clients and %d companions are more than its limit of %d (%s)",
		e.Clients, e.Companions, e.Limit, fix)
}
