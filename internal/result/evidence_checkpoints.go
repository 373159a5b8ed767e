package result

import "github.com/pgscale/pgscale/internal/probeid"

// Checkpoints is what the checkpointer, the background writer and the
// backends wrote during a step, and the WAL the server made: the
// differences of pg_stat_bgwriter (pg_stat_checkpointer from PostgreSQL
// 17), pg_stat_wal (PostgreSQL 14 on) and the WAL insert position between
// the window's edges (internal/probe/checkpoints.go). They explain a dip
// in throughput: a checkpoint, the full-page images after it, backends
// writing buffers themselves. A figure the server does not have is
// absent, never zero.
type Checkpoints struct {
	// WindowS is the time between the two readings; LoadTransactions the
	// transactions the load generator counted in it (its throughput over
	// WindowS), which the per-transaction figures divide by.
	WindowS          float64 `json:"window_s"`
	LoadTransactions int64   `json:"load_transactions"`
	// Timed and Requested are the checkpoints begun because
	// checkpoint_timeout passed (before PostgreSQL 17 skipped ones too)
	// and those asked for (CHECKPOINT, max_wal_size reached, a base
	// backup); WriteMs and SyncMs the time checkpoints spent writing and
	// syncing files; BuffersCheckpoint the buffers they wrote.
	Timed             *int64   `json:"checkpoints_timed,omitempty"`
	Requested         *int64   `json:"checkpoints_req,omitempty"`
	WriteMs           *float64 `json:"checkpoint_write_ms,omitempty"`
	SyncMs            *float64 `json:"checkpoint_sync_ms,omitempty"`
	BuffersCheckpoint *int64   `json:"buffers_checkpoint,omitempty"`
	// BuffersClean are the buffers the background writer wrote;
	// BuffersBackend those backends wrote themselves and
	// BuffersBackendFsync the fsyncs they had to do themselves (absent
	// from PostgreSQL 17, which counts them in pg_stat_io); BuffersAlloc
	// the buffers allocated.
	BuffersClean        *int64 `json:"buffers_clean,omitempty"`
	BuffersBackend      *int64 `json:"buffers_backend,omitempty"`
	BuffersBackendFsync *int64 `json:"buffers_backend_fsync,omitempty"`
	BuffersAlloc        *int64 `json:"buffers_alloc,omitempty"`
	// InsertedBytes is the WAL inserted between the readings, from
	// pg_current_wal_insert_lsn(): exact at the window's edges, where
	// pg_stat_wal has what the backends reported (each at most once a
	// second). Absent on a server in recovery. BytesPerTxn is it per
	// transaction of the load.
	InsertedBytes *int64   `json:"inserted_bytes,omitempty"`
	BytesPerTxn   *float64 `json:"bytes_per_txn,omitempty"`
	// WAL is pg_stat_wal's difference, absent before PostgreSQL 14.
	WAL *WALStats `json:"wal,omitempty"`
}

// WALStats is pg_stat_wal's difference over a step: every process's WAL,
// as each reported it (a backend about once a second, so up to a second's
// worth may be late at each edge).
type WALStats struct {
	// Records are the WAL records, FPI the full-page images among them
	// (the first change of a page after a checkpoint), Bytes their size;
	// BuffersFull the times a WAL buffer had to be written because the
	// buffers were full.
	Records     int64 `json:"records"`
	FPI         int64 `json:"fpi"`
	Bytes       int64 `json:"bytes"`
	BuffersFull int64 `json:"buffers_full"`
	// Writes and Syncs are the WAL writes and syncs (absent from
	// PostgreSQL 18, which counts them in pg_stat_io).
	Writes *int64 `json:"write,omitempty"`
	Syncs  *int64 `json:"sync,omitempty"`
	// FPIPerTxn is FPI per transaction of the load.
	FPIPerTxn *float64 `json:"fpi_per_txn,omitempty"`
}

func init() { registerEvidence[Checkpoints](probeid.Checkpoints) }

// Checkpoints is the step's checkpoints evidence, or nil (none recorded, or p nil).
func (p *Probes) Checkpoints() *Checkpoints { return getEvidence[Checkpoints](p, probeid.Checkpoints) }

// SetCheckpoints records the step's checkpoints evidence (nil removes it).
func (p *Probes) SetCheckpoints(v *Checkpoints) { setEvidence(p, probeid.Checkpoints, v) }
