package result

import "github.com/pgscale/pgscale/internal/probeid"

// Pools is what a pooler's admin console said during a step, sampled
// about once a second beside the load (internal/probe/pooler.go): its
// clients and server connections, how long clients waited for one, and
// the transactions and queries it counted, for the whole pooler (Total),
// per pool (a database and user in PgBouncer, PgCat and PgDog; a backend
// node in pgpool-II's SHOW POOL_NODES, when a mapping reads it) and per sample (Series). A figure
// the definition's mapping does not name is absent, never zero.
type Pools struct {
	// Program names the pooler ("pgbouncer"), Commands the admin commands
	// each sample ran.
	Program  string   `json:"program"`
	Commands []string `json:"commands"`
	// Samples is how many times the console was read; WindowS the time
	// from the first sample to the last.
	Samples int     `json:"samples"`
	WindowS float64 `json:"window_s"`
	// LoadTransactions are the transactions the load generator counted
	// in the same window (its throughput over WindowS), beside the
	// pooler's own count (Total.Transactions): the cross-check.
	LoadTransactions int64 `json:"load_transactions"`
	// OwnConnection says the console is one of the pooler's client
	// sessions (pgpool-II answers its SHOW commands on any session): one
	// active client and one active server connection, the probe's own,
	// are taken off every sample.
	OwnConnection bool          `json:"own_connection,omitempty"`
	Total         PoolFigures   `json:"total"`
	Pools         []PoolFigures `json:"pools,omitempty"`
	Series        []PoolSample  `json:"series,omitempty"`
}

// PoolFigures are one pool's figures over a step (or the whole pooler's,
// with Pool empty): the clients and server connections averaged over the
// samples with their largest value, the longest wait any sample saw, and
// what the pooler counted between the first sample and the last.
type PoolFigures struct {
	Pool           string `json:"pool,omitempty"` // its columns' values: "pgbench/postgres"
	ClientsActive  *Gauge `json:"clients_active,omitempty"`
	ClientsWaiting *Gauge `json:"clients_waiting,omitempty"`
	ServersActive  *Gauge `json:"servers_active,omitempty"`
	ServersIdle    *Gauge `json:"servers_idle,omitempty"`
	ServersUsed    *Gauge `json:"servers_used,omitempty"`
	// MaxWaitMs is the longest wait of a waiting client any sample saw.
	MaxWaitMs *float64 `json:"maxwait_ms,omitempty"`
	// Transactions and Queries are what the pooler counted.
	Transactions *int64 `json:"transactions,omitempty"`
	Queries      *int64 `json:"queries,omitempty"`
	// WaitUS is the time clients spent waiting for a server connection,
	// in all; XactUS and QueryUS the time spent in transactions and in
	// queries (µs).
	WaitUS  *float64 `json:"wait_us,omitempty"`
	XactUS  *float64 `json:"xact_us,omitempty"`
	QueryUS *float64 `json:"query_us,omitempty"`
	// WaitPerTxnUS is WaitUS per transaction the pooler counted: how long
	// a transaction waited for a server connection on average.
	WaitPerTxnUS *float64 `json:"wait_per_txn_us,omitempty"`
}

// Gauge is a figure sampled over a step: its mean over the samples and
// its largest value.
type Gauge struct {
	Mean float64 `json:"mean"`
	Max  float64 `json:"max"`
}

// PoolSample is the whole pooler at one sample: its clients and server
// connections then, the longest wait then, and what it counted since the
// previous sample (absent at the first).
type PoolSample struct {
	// TS is the time since the step's measured window began.
	TS             float64  `json:"t_s"`
	ClientsActive  *float64 `json:"clients_active,omitempty"`
	ClientsWaiting *float64 `json:"clients_waiting,omitempty"`
	ServersActive  *float64 `json:"servers_active,omitempty"`
	ServersIdle    *float64 `json:"servers_idle,omitempty"`
	ServersUsed    *float64 `json:"servers_used,omitempty"`
	MaxWaitMs      *float64 `json:"maxwait_ms,omitempty"`
	Transactions   *int64   `json:"transactions,omitempty"`
	Queries        *int64   `json:"queries,omitempty"`
	WaitUS         *float64 `json:"wait_us,omitempty"`
}

func init() { registerEvidence[Pools](probeid.Pooler) }

// Pooler is the step's pooler evidence, or nil (none recorded, or p nil).
func (p *Probes) Pooler() *Pools { return getEvidence[Pools](p, probeid.Pooler) }

// SetPooler records the step's pooler evidence (nil removes it).
func (p *Probes) SetPooler(v *Pools) { setEvidence(p, probeid.Pooler, v) }
