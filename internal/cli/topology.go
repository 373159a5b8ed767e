package cli

import (
	"strings"

	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
	"github.com/pgscale/pgscale/internal/workload"
)

// checkTopology refuses, before anything starts, a workload that cannot
// run on where its targets send it: writes through a definition that may
// send them to a replica (checkReadOnly), and a transaction whose writes a
// sharding definition would spread over more than one of its servers
// (checkShards). run, ab and every suite cell (on its own targets) call it.
func checkTopology(specs []target.Spec, wl *workload.Loaded) error {
	if err := checkReadOnly(specs, wl); err != nil {
		return err
	}
	return checkShards(specs, wl)
}

// checkShards refuses a workload through a proxy whose definition says
// how it shards (shards:) over two servers or more, when a transaction of
// the workload writes rows it would route to different shards (or to
// every shard beside another write): without transactions across shards
// the pooler cannot run it as one, so it would fail or measure something
// else than the workload says.
func checkShards(specs []target.Spec, wl *workload.Loaded) error {
	for _, s := range specs {
		a, ok := s.Arg.(target.ProxyArg)
		if !ok || len(a.Def.Shards) == 0 || max(len(s.Of), len(s.Front)) < 2 {
			continue
		}
		var shards []workload.Shard
		var by []string
		for _, sh := range a.Def.Shards {
			shards = append(shards, workload.Shard{Table: sh.Table, Column: sh.Column})
			by = append(by, sh.Table+" by "+sh.Column)
		}
		if txn, crosses := wl.CrossShard(shards); crosses {
			name := s.Name
			if name == "" {
				name = "the pooler"
			}
			list := strings.Join(by, ", ")
			if i := strings.LastIndex(list, ", "); i >= 0 {
				list = list[:i] + " and " + list[i+2:]
			}
			return usage.Errorf("%s (proxy:%s) shards %s over %d servers, and a transaction of the workload writes beyond one shard (%s): run a workload whose transactions write one shard's rows (one value of the key), or say how it shards the tables written (shards:)",
				name, a, list, max(len(s.Of), len(s.Front)), txn)
		}
	}
	return nil
}

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
