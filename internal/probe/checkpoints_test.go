package probe_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// A step of inserts with a CHECKPOINT issued while it runs: the
// checkpoints probe records the WAL the inserts made, per transaction, and
// the requested checkpoint, and the text report says so.
func TestCheckpointsProbeSeesWALAndACheckpoint(t *testing.T) {
	exec(t, `DROP TABLE IF EXISTS walprobe; CREATE TABLE walprobe (id int, pad text)`)
	// Dropped, its buffers are let go unwritten: the package's later
	// tests see no writes of this one's.
	t.Cleanup(func() { exec(t, `DROP TABLE walprobe`) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- checkpointWhenLoaded(ctx, t) }()
	f, out := run(t, 2, 3*time.Second, "INSERT INTO walprobe SELECT g, repeat('x', 100) FROM generate_series(1, 5) g;\n", nil)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	s := f.Steps[0]
	for _, u := range s.Probes.Unavailable {
		t.Errorf("%s unavailable: %s", u.Probe, u.Reason)
	}
	c := s.Probes.Checkpoints()
	if c == nil {
		t.Fatalf("no checkpoints evidence: %+v", s.Probes)
	}
	if c.Requested == nil || *c.Requested < 1 || c.Timed == nil || c.BuffersCheckpoint == nil || *c.BuffersCheckpoint < 1 {
		t.Errorf("a CHECKPOINT during the step: requested %v, timed %v, buffers %v", c.Requested, c.Timed, c.BuffersCheckpoint)
	}
	// PostgreSQL 15: pg_stat_wal and the backends' own writes are there.
	if c.InsertedBytes == nil || *c.InsertedBytes <= 0 || c.BytesPerTxn == nil || *c.BytesPerTxn < 5*100 ||
		c.WAL == nil || c.WAL.Bytes <= 0 || c.WAL.Records <= 0 || c.WAL.FPIPerTxn == nil || c.BuffersBackend == nil {
		t.Errorf("WAL of 5 rows of 100 bytes a transaction: %+v, %+v", c, c.WAL)
	}
	if c.LoadTransactions <= 0 || c.WindowS <= 0 {
		t.Errorf("%d transactions over %.2f s", c.LoadTransactions, c.WindowS)
	}
	if !strings.Contains(out, "checkpoints: ") || !strings.Contains(out, " requested, ") || !strings.Contains(out, " B/txn)") {
		t.Errorf("the text report lacks the checkpoints line:\n%s", out)
	}
}

// checkpointWhenLoaded issues a CHECKPOINT once the clients' inserts run
// (the step's window has begun), and a little after.
func checkpointWhenLoaded(ctx context.Context, t *testing.T) error {
	conn, err := pgconn.ConnectConfig(ctx, connConfig(t))
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	for {
		res := conn.ExecParams(ctx, `SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'INSERT INTO walprobe%'`, nil, nil, nil, nil).Read()
		if res.Err != nil {
			return res.Err
		}
		if string(res.Rows[0][0]) != "0" {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	time.Sleep(500 * time.Millisecond)
	_, err = conn.Exec(ctx, "CHECKPOINT").ReadAll()
	return err
}
