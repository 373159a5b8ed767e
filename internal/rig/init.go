package rig

import (
	"context"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/step"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
	"github.com/pgscale/pgscale/internal/workload"
)

// InitSpec is pgscale init: pgbench's data on a target, checked where it
// was given (an ephemeral cluster is kept).
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
// does.
func Init(ctx context.Context, spec InitSpec) error {
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
			obs.Observe(observe.Notice{Text: step.LibpqMessage((*pgconn.PgError)(n), false), Server: true})
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
