package plan

import (
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
	"github.com/pgscale/pgscale/internal/workload"
)

// checkReadOnly refuses, before anything starts, a workload that writes
// through a target whose proxy definition says read_only: (it balances
// every connection over a primary and its replicas, as a pgbouncer with a
// host list does), which would abort at its first write on a replica
// ("cannot execute UPDATE in a read-only transaction").
func checkReadOnly(specs []target.Spec, wl *workload.Loaded) error {
	for _, s := range specs {
		a, ok := s.Arg.(target.ProxyArg)
		if !ok || !a.Def.ReadOnly {
			continue
		}
		if cmd, writes := wl.Writes(); writes {
			name := s.Name
			if name == "" {
				name = "the pooler"
			}
			return usage.Errorf("%s (proxy:%s) is read_only: it may send any statement to a replica, and the workload writes (%s): run a read-only workload through it, or a definition that sends writes to the primary", name, a, cmd)
		}
	}
	return nil
}
