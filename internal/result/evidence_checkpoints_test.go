package result_test

import "github.com/pgscale/pgscale/internal/result"

// The checkpoints probe's evidence, as the schema tests check it; breaking
// it gives a negative count of WAL bytes.
func init() {
	registerEvidenceCase("checkpoints", evidenceCase{
		set: func(p *result.Probes) {
			req, n := int64(1), int64(8192)
			p.SetCheckpoints(&result.Checkpoints{WindowS: 1, LoadTransactions: 10, Requested: &req, InsertedBytes: &n,
				WAL: &result.WALStats{Records: 10, Bytes: n}})
		},
		breaks: func(e map[string]any) { e["wal"].(map[string]any)["bytes"] = -1 },
	})
}
