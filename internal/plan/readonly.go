package plan

import (
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
	"github.com/pgscale/pgscale/internal/workload"
)

// checkReadOnly refuses, before anything starts, a workload that writes
// through a target that says it is read-only (a proxy definition's
// read_only:, a pgbouncer: with balance=: it balances every connection
// over a primary and its replicas), which would abort at its first write
// on a replica
// ("cannot execute UPDATE in a read-only transaction").
func checkReadOnly(specs []target.Spec, wl *workload.Loaded) error {
	for _, s := range specs {
		if !s.ReadOnly() {
			continue
		}
		if cmd, writes := wl.Writes(); writes {
			name := s.Name
			if name == "" {
				name = "the pooler"
			}
			return usage.Errorf("%s (%s:%s) is read_only: it may send any statement to a replica, and the workload writes (%s): run a read-only workload through it, or a target that sends writes to the primary", name, s.Kind, s.Arg, cmd)
		}
	}
	return nil
}
