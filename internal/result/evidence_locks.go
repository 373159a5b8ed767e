package result

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
	// FastPathSlots is the number of fast-path slots per backend for this
	// server version (16 before PostgreSQL 18).
	FastPathSlots int `json:"fast_path_slots"`
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
