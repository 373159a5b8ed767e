package report_test

import (
	"testing"

	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/result"
)

// The checkpoints line says what the server has and leaves out what it
// does not: before PostgreSQL 14 no pg_stat_wal, from 17 no backends'
// writes; never a zero for a figure it lacks.
func TestCheckpointsLine(t *testing.T) {
	i := func(n int64) *int64 { return &n }
	f := func(x float64) *float64 { return &x }
	pg15 := &result.Checkpoints{WindowS: 5, LoadTransactions: 3000, Requested: i(1), Timed: i(0), WriteMs: f(120), SyncMs: f(3),
		BuffersCheckpoint: i(812), BuffersClean: i(0), BuffersBackend: i(0), BuffersBackendFsync: i(0), BuffersAlloc: i(90),
		InsertedBytes: i(1_236_000), BytesPerTxn: f(412),
		WAL: &result.WALStats{Records: 3456, FPI: 795, Bytes: 1_230_000, FPIPerTxn: f(0.265), Writes: i(10), Syncs: i(10)}}
	for _, c := range []struct {
		name string
		ev   *result.Checkpoints
		want string
	}{
		{"15", pg15, "1 requested, 0 timed (write 120 ms, sync 3.0 ms, 812 buffers); WAL 1236 kB (412 B/txn), 3456 records reported, 23% full-page images (0.27/txn); buffers written by backends 0, by the background writer 0"},
		{"13", &result.Checkpoints{Requested: i(0), Timed: i(0), WriteMs: f(0), SyncMs: f(0), BuffersCheckpoint: i(0), BuffersClean: i(4),
			BuffersBackend: i(17), BuffersBackendFsync: i(2), InsertedBytes: i(5000)},
			"0 requested, 0 timed; WAL 5000 B; buffers written by backends 17 (2 fsyncs of their own), by the background writer 4"},
		{"17", &result.Checkpoints{Requested: i(0), Timed: i(1), WriteMs: f(2), SyncMs: f(0), BuffersClean: i(0),
			WAL: &result.WALStats{Records: 0, Bytes: 0, BuffersFull: 3}},
			"0 requested, 1 timed (write 2.0 ms, sync 0.000 ms); WAL 0 B, WAL buffers full 3 times; buffers written by the background writer 0"},
		{"in recovery, no WAL", &result.Checkpoints{}, "no figures"},
	} {
		if got := report.CheckpointsLine(c.ev); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
	if got := report.CheckpointsLine(nil); got != "" {
		t.Errorf("no evidence: %q", got)
	}
}
