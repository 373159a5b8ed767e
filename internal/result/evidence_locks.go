package result

import "github.com/pgscale/pgscale/internal/probeid"

// Locks summarises the pg_locks snapshots taken during the step.
type Locks struct {
	Snapshots int `json:"snapshots"`
	// Backends is the most client backends seen holding locks in one
	// snapshot.
	Backends int `json:"backends"`
	// MaxSlowWeak is the most weak (AccessShare, RowShare, RowExclusive)
	// relation locks one backend held outside the fast path; MeanSlowWeak
	// averages it over backends holding locks, over snapshots.
	MaxSlowWeak  int     `json:"max_slow_weak_relation_locks"`
	MeanSlowWeak float64 `json:"mean_slow_weak_relation_locks"`
	MaxFastPath  int     `json:"max_fast_path_locks"`
	// FastPathSlots is the number of fast-path slots per backend, and
	// FastPathSlotsFrom where that figure came from: "build" (the build's
	// FP_LOCK_SLOTS_PER_BACKEND, a src: target), "version" (PostgreSQL's
	// own for that version: 16 before 18, then from
	// max_locks_per_transaction), or "observed" (more fast-path locks were
	// seen held by one backend than the version allows: a patched build,
	// and the figure is the most seen, a lower bound). Absent in files
	// written before it was recorded, where the figure is the version's.
	FastPathSlots     int    `json:"fast_path_slots"`
	FastPathSlotsFrom string `json:"fast_path_slots_from,omitempty"`
	// Exhausted counts backend snapshots whose fast-path slots were full
	// and that held weak relation locks in the main lock table.
	Exhausted int `json:"fast_path_exhausted"`
	// Waiting are the ungranted locks seen, by lock type and mode, summed
	// over snapshots.
	Waiting []LockWait `json:"waiting,omitempty"`
}

// LockWait is the number of ungranted locks of one type and mode.
type LockWait struct {
	LockType string `json:"locktype"`
	Mode     string `json:"mode"`
	Count    int    `json:"count"`
}

func init() { registerEvidence[Locks](probeid.Locks) }

// Locks is the step's locks evidence, or nil (none recorded, or p nil).
func (p *Probes) Locks() *Locks { return getEvidence[Locks](p, probeid.Locks) }

// SetLocks records the step's locks evidence (nil removes it).
func (p *Probes) SetLocks(v *Locks) { setEvidence(p, probeid.Locks, v) }
