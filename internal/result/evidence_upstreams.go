package result

import "github.com/pgscale/pgscale/internal/probeid"

// Upstreams is what each server behind a target did during a step, when
// there are several: the servers a proxy fronts (shards; a primary and its
// streaming replicas), or a primary's replicas. It shows how the work
// split between them and how far each replica lagged.
type Upstreams struct {
	Servers []UpstreamStat `json:"servers"`
}

// UpstreamStat is one server behind a target over a step.
type UpstreamStat struct {
	Name string `json:"name"`           // the target's name, or its replica's ("a-replica1")
	Role string `json:"role"`           // "primary" or "replica"
	Host string `json:"host,omitempty"` // host and port, never a password
	// Transactions are its databases' committed and rolled-back
	// transactions over the step (pg_stat_database; its backends flush
	// them about once a second, so up to a second's worth may be missing),
	// the probes' own left out.
	Transactions int64 `json:"transactions"`
	// Statements are the statements it ran over the step
	// (pg_stat_statements' calls, exact, without the probes'); absent
	// where pg_stat_statements is not there.
	Statements *int64 `json:"statements,omitempty"`
	// Share is its part of all the upstreams' statements, or of their
	// transactions without pg_stat_statements.
	Share float64 `json:"share"`
	// LagBytes is, for a replica, how far its replay was behind its
	// primary's WAL at most, at the step's start and end.
	LagBytes *int64 `json:"lag_bytes,omitempty"`
	// ReplayLagMs is, for a primary with replicas, pg_stat_replication's
	// replay_lag at the step's end, the largest over its replicas.
	ReplayLagMs *float64 `json:"replay_lag_ms,omitempty"`
}

func init() { registerEvidence[Upstreams](probeid.Upstreams) }

// Upstreams is the step's upstreams evidence, or nil (none recorded, or p nil).
func (p *Probes) Upstreams() *Upstreams { return getEvidence[Upstreams](p, probeid.Upstreams) }

// SetUpstreams records the step's upstreams evidence (nil removes it).
func (p *Probes) SetUpstreams(v *Upstreams) { setEvidence(p, probeid.Upstreams, v) }
