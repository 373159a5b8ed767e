package report

import (
	"fmt"
	"strings"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/result"
)

func init() { registerWriter(probeid.Checkpoints, writeCheckpoints) }

// writeCheckpoints writes the checkpoints, the WAL and the buffers written
// during the step.
func writeCheckpoints(pg page, s result.Step, _ diagnose.Figures) {
	if line := CheckpointsLine(s.Probes.Checkpoints()); line != "" {
		pg.item("checkpoints", line)
	}
}

// CheckpointsLine says in a line what the checkpointer, the WAL and the
// backends did during a step: "1 requested, 0 timed (write 120 ms, sync
// 3.0 ms, 812 buffers); WAL 1236 kB (412 B/txn), 3456 records reported,
// 23% full-page images (0.27/txn); buffers written by backends 0, by the
// background writer 0". A figure the server does not have is left out.
func CheckpointsLine(c *result.Checkpoints) string {
	if c == nil {
		return ""
	}
	var parts []string
	if c.Requested != nil && c.Timed != nil {
		p := fmt.Sprintf("%d requested, %d timed", *c.Requested, *c.Timed)
		var in []string
		if c.WriteMs != nil && c.SyncMs != nil && (*c.WriteMs > 0 || *c.SyncMs > 0) {
			in = append(in, "write "+msText(*c.WriteMs), "sync "+msText(*c.SyncMs))
		}
		if c.BuffersCheckpoint != nil && *c.BuffersCheckpoint > 0 {
			in = append(in, prose.Count(int(*c.BuffersCheckpoint), "buffer"))
		}
		if len(in) > 0 {
			p += " (" + strings.Join(in, ", ") + ")"
		}
		parts = append(parts, p)
	}
	var wal []string
	switch {
	case c.InsertedBytes != nil:
		w := "WAL " + bytesText(*c.InsertedBytes)
		if c.BytesPerTxn != nil {
			w += fmt.Sprintf(" (%.0f B/txn)", *c.BytesPerTxn)
		}
		wal = append(wal, w)
	case c.WAL != nil:
		wal = append(wal, "WAL "+bytesText(c.WAL.Bytes))
	}
	if w := c.WAL; w != nil {
		if w.Records > 0 {
			// pg_stat_wal's, as the backends reported them.
			f := fmt.Sprintf("%s reported, %s full-page images", prose.Count(int(w.Records), "record"), prose.Share(float64(w.FPI)/float64(w.Records)))
			if w.FPIPerTxn != nil {
				f += fmt.Sprintf(" (%.2g/txn)", *w.FPIPerTxn)
			}
			wal = append(wal, f)
		}
		if w.BuffersFull > 0 {
			wal = append(wal, fmt.Sprintf("WAL buffers full %d times", w.BuffersFull))
		}
	}
	if len(wal) > 0 {
		parts = append(parts, strings.Join(wal, ", "))
	}
	var bufs []string
	if c.BuffersBackend != nil {
		b := fmt.Sprintf("by backends %d", *c.BuffersBackend)
		if c.BuffersBackendFsync != nil && *c.BuffersBackendFsync > 0 {
			b += fmt.Sprintf(" (%d fsyncs of their own)", *c.BuffersBackendFsync)
		}
		bufs = append(bufs, b)
	}
	if c.BuffersClean != nil {
		bufs = append(bufs, fmt.Sprintf("by the background writer %d", *c.BuffersClean))
	}
	if len(bufs) > 0 {
		parts = append(parts, "buffers written "+strings.Join(bufs, ", "))
	}
	if len(parts) == 0 {
		return "no figures"
	}
	return strings.Join(parts, "; ")
}
