package result

import "github.com/pgscale/pgscale/internal/probeid"

// Statements is the pg_stat_statements difference over the step.
type Statements struct {
	// ServerMs is the server time of every statement in the step
	// (execution + planning), and Calls the calls.
	ServerMs float64     `json:"server_ms"`
	Calls    int64       `json:"calls"`
	Top      []Statement `json:"top,omitempty"` // by total time, descending
	// Dealloc is true when pg_stat_statements evicted entries during the
	// step, so the difference may miss statements.
	Dealloc bool `json:"dealloc,omitempty"`
}

// Statement is one normalised statement's difference over the step.
type Statement struct {
	QueryID string  `json:"queryid"`
	Query   string  `json:"query"` // normalised text, shortened
	Calls   int64   `json:"calls"`
	TotalMs float64 `json:"total_ms"` // execution + planning
	Rows    int64   `json:"rows"`
}

func init() { registerEvidence[Statements](probeid.Statements) }

// Statements is the step's statements evidence, or nil (none recorded, or p nil).
func (p *Probes) Statements() *Statements { return getEvidence[Statements](p, probeid.Statements) }

// SetStatements records the step's statements evidence (nil removes it).
func (p *Probes) SetStatements(v *Statements) { setEvidence(p, probeid.Statements, v) }
