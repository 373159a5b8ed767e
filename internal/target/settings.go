package target

import (
	"fmt"
	"strings"
)

// DefaultSettings are pgscale's benchmark defaults for an ephemeral cluster
// (documented in docs/targets.md). dataBytes sizes shared_buffers so the data set
// fits; maxClients sizes max_connections with room for probes.
func DefaultSettings(dataBytes int64, maxClients int, preload []string) []Setting {
	const mb = 1 << 20
	sb := int64(128 * mb)
	if want := dataBytes*5/4 + 64*mb; want > sb {
		sb = want
	}
	if limit := totalMemory() / 4; limit > 0 && sb > limit {
		sb = limit
	}
	conns := 100
	if maxClients+20 > conns {
		conns = maxClients + 20
	}
	s := []Setting{
		{"shared_buffers", fmt.Sprintf("%dMB", sb/mb)},
		{"max_connections", fmt.Sprint(conns)},
		// Short runs must not be disturbed by a checkpoint the workload did not cause.
		{"max_wal_size", "8GB"},
		{"checkpoint_timeout", "30min"},
		{"track_io_timing", "on"},
	}
	if len(preload) > 0 {
		s = append(s, Setting{"shared_preload_libraries", strings.Join(preload, ",")})
	}
	return s
}
