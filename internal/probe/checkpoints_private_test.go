package probe

import (
	"strings"
	"testing"
)

// columns are a server's statistics views' columns, as the probe finds
// them when it opens.
func columns(views map[string]string) map[[2]string]bool {
	has := map[[2]string]bool{}
	for v, cols := range views {
		for _, c := range strings.Fields(cols) {
			has[[2]string{v, c}] = true
		}
	}
	return has
}

const (
	bgwriter16 = "checkpoints_timed checkpoints_req checkpoint_write_time checkpoint_sync_time buffers_checkpoint buffers_clean maxwritten_clean buffers_backend buffers_backend_fsync buffers_alloc stats_reset"
	wal17      = "wal_records wal_fpi wal_bytes wal_buffers_full wal_write wal_sync wal_write_time wal_sync_time stats_reset"
)

// The probe reads each figure where the server's version keeps it: before
// 14 there is no pg_stat_wal, from 17 the checkpointer's figures are in
// pg_stat_checkpointer and the backends' writes are gone, from 18
// pg_stat_wal has no writes or syncs. What a server lacks is absent from
// the evidence, never zero.
func TestCheckpointQueryByVersion(t *testing.T) {
	for _, c := range []struct {
		name    string
		views   map[string]string
		figures string
		resets  int
	}{
		{"13", map[string]string{"pg_stat_bgwriter": bgwriter16},
			"checkpoints_timed checkpoints_req checkpoint_write_ms checkpoint_sync_ms buffers_checkpoint buffers_clean buffers_backend buffers_backend_fsync buffers_alloc", 1},
		{"15", map[string]string{"pg_stat_bgwriter": bgwriter16, "pg_stat_wal": wal17},
			"checkpoints_timed checkpoints_req checkpoint_write_ms checkpoint_sync_ms buffers_checkpoint buffers_clean buffers_backend buffers_backend_fsync buffers_alloc wal_records wal_fpi wal_bytes wal_buffers_full wal_write wal_sync", 2},
		{"18", map[string]string{"pg_stat_bgwriter": "buffers_clean maxwritten_clean buffers_alloc stats_reset",
			"pg_stat_checkpointer": "num_timed num_requested num_done restartpoints_timed restartpoints_req restartpoints_done write_time sync_time buffers_written slru_written stats_reset",
			"pg_stat_wal":          "wal_records wal_fpi wal_bytes wal_buffers_full stats_reset"},
			"checkpoints_timed checkpoints_req checkpoint_write_ms checkpoint_sync_ms buffers_checkpoint buffers_clean buffers_alloc wal_records wal_fpi wal_bytes wal_buffers_full", 3},
	} {
		p, err := checkpointQuery(columns(c.views))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var names []string
		for _, f := range p.figures {
			names = append(names, f.name)
		}
		if got := strings.Join(names, " "); got != c.figures || len(p.resets) != c.resets {
			t.Errorf("%s: figures %s, %d resets; want %s, %d", c.name, got, len(p.resets), c.figures, c.resets)
		}
	}
	if _, err := checkpointQuery(columns(map[string]string{"pg_stat_wal": wal17})); err == nil {
		t.Error("no pg_stat_bgwriter: no error")
	}
}

// The evidence is each figure's difference, per transaction of the load
// where that is counted so; a reset or a restart between the readings is
// no difference, and the step says why instead of writing zeros or
// negative counts.
func TestCheckpointDifference(t *testing.T) {
	p, err := checkpointQuery(columns(map[string]string{"pg_stat_bgwriter": bgwriter16, "pg_stat_wal": wal17}))
	if err != nil {
		t.Fatal(err)
	}
	reading := func(vals ...string) [][]byte {
		out := make([][]byte, len(vals))
		for i, v := range vals {
			if v != "NULL" {
				out[i] = []byte(v)
			}
		}
		return out
	}
	// 15 figures, 2 resets, the insert position.
	a := reading("5", "2", "100.5", "3", "80", "0", "7", "0", "1000", "10", "1", "1000", "0", "4", "4", "t1", "t2", "16777216")
	b := reading("5", "3", "220.5", "6", "892", "0", "7", "0", "1100", "3466", "796", "1231000", "0", "40", "40", "t1", "t2", "17993216")
	ev, err := p.difference(a, b, 5, 3000)
	if err != nil {
		t.Fatal(err)
	}
	if *ev.Requested != 1 || *ev.Timed != 0 || *ev.WriteMs != 120 || *ev.SyncMs != 3 || *ev.BuffersCheckpoint != 812 || *ev.BuffersBackend != 0 {
		t.Errorf("checkpoints: %+v", ev)
	}
	if w := ev.WAL; w == nil || w.Records != 3456 || w.FPI != 795 || w.Bytes != 1230000 || *w.Writes != 36 || *w.FPIPerTxn != 0.265 {
		t.Errorf("WAL: %+v", ev.WAL)
	}
	if *ev.InsertedBytes != 1216000 || *ev.BytesPerTxn != 1216000.0/3000 {
		t.Errorf("inserted %d bytes, %v per transaction", *ev.InsertedBytes, *ev.BytesPerTxn)
	}
	// No transactions: no figure per transaction. In recovery: no insert
	// position.
	b[len(b)-1] = nil
	ev, err = p.difference(a, b, 5, 0)
	if err != nil || ev.BytesPerTxn != nil || ev.WAL.FPIPerTxn != nil || ev.InsertedBytes != nil {
		t.Errorf("no load, in recovery: %+v, %v", ev, err)
	}
	reset := append([][]byte(nil), b...)
	reset[16] = []byte("t3")
	if _, err := p.difference(a, reset, 5, 1); err == nil || !strings.Contains(err.Error(), "pg_stat_wal was reset during the step") {
		t.Errorf("a reset: %v", err)
	}
	back := append([][]byte(nil), b...)
	back[9] = []byte("1")
	if _, err := p.difference(a, back, 5, 1); err == nil || !strings.Contains(err.Error(), "wal_records went back") {
		t.Errorf("a restart: %v", err)
	}
}
