package plan

import (
	"context"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
	"github.com/pgscale/pgscale/internal/workload"
)

// InitSpec is pgscale init: pgbench's data on a target.
type InitSpec struct {
	Target  target.Spec
	Cluster target.ClusterOptions
	Init    workload.InitOptions
	// Out receives init's own account of its steps, as pgbench -i prints
	// it.
	Out      io.Writer
	Observer observe.Observer
	// ServerNotices passes the server's notices on to the observer (as
	// pgbench -i prints "NOTICE:  table ... does not exist, skipping").
	ServerNotices bool
}

// Init creates pgbench's tables and data on the target, as pgbench -i
// does. An ephemeral cluster would be thrown away at once: it is a usage
// error unless the cluster is kept.
func Init(ctx context.Context, spec InitSpec) error {
	if err := spec.Init.Check(); err != nil {
		return err
	}
	if err := spec.Cluster.Check([]target.Spec{spec.Target}); err != nil {
		return err
	}
	if spec.Target.Ephemeral() && !spec.Cluster.Keep {
		return usage.Errorf("init on an ephemeral cluster would be thrown away at once: name a server with --dsn, or pass --keep")
	}
	obs := spec.Observer
	if obs == nil {
		obs = observe.Discard
	}
	notice := func(s string) { obs.Observe(observe.Notice{Text: s}) }
	srv, err := target.Open(ctx, spec.Target, spec.Cluster, target.Needs{DataBytes: workload.DataBytes(spec.Init.Scale)}, notice)
	if err != nil {
		return err
	}
	defer srv.Close()
	out := spec.Out
	if out == nil {
		out = io.Discard
	}
	connect := srv.Connect
	if spec.ServerNotices {
		cfg := srv.Config.Copy()
		cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
			obs.Observe(observe.Notice{Text: libpqMessage((*pgconn.PgError)(n), false), Server: true})
		}
		connect = func(ctx context.Context) (*pgconn.PgConn, error) { return pgconn.ConnectConfig(ctx, cfg) }
	}
	if _, err := workload.Init(ctx, connect, spec.Init, out); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("init interrupted")
		}
		return usage.Prefix("init: ", err)
	}
	return nil
}
