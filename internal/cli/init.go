package cli

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/rig"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
	"github.com/pgscale/pgscale/internal/workload"
)

func newInitCmd(stdout, stderr io.Writer) *cobra.Command {
	var opts workload.InitOptions
	var dsn string
	var c common
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create pgbench's tables and data (same schema and rows as pgbench -i)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			return initData(ctx, rig.InitSpec{Target: target.ForRun(dsn), Cluster: c.Cluster, Init: opts, Out: stdout,
				Observer: &report.Live{Out: stdout, Err: stderr}})
		},
	}
	fs := cmd.Flags()
	registerInit(fs, &opts, true)
	fs.StringVar(&dsn, "dsn", "", "connection string of an existing server (URI or keyword form); libpq environment variables are honoured; without it, an ephemeral cluster")
	registerCluster(fs, &c)
	return cmd
}

// initData checks init's spec and makes the data: an ephemeral cluster
// would be thrown away at once, so it is a usage error unless the cluster
// is kept.
func initData(ctx context.Context, spec rig.InitSpec) error {
	if err := spec.Init.Check(); err != nil {
		return optionError(err)
	}
	if err := checkCluster(spec.Cluster, []target.Spec{spec.Target}); err != nil {
		return err
	}
	if spec.Target.Ephemeral() && !spec.Cluster.Keep {
		return usage.Errorf("init on an ephemeral cluster would be thrown away at once: name a server with --dsn, or pass --keep")
	}
	return rig.Init(ctx, spec)
}
