package cli

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/pgscale/pgscale/internal/plan"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/workload"
)

func newInitCmd(stdout, stderr io.Writer) *cobra.Command {
	var opts workload.InitOptions
	var dsn string
	var c plan.Common
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create pgbench's tables and data (same schema and rows as pgbench -i)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			return plan.Init(ctx, plan.InitSpec{Target: target.ForRun(dsn), Cluster: c.Cluster, Init: opts, Out: stdout,
				Observer: &report.Live{Out: stdout, Err: stderr}})
		},
	}
	fs := cmd.Flags()
	registerInit(fs, &opts, true)
	fs.StringVar(&dsn, "dsn", "", "connection string of an existing server (URI or keyword form); libpq environment variables are honoured; without it, an ephemeral cluster")
	registerCluster(fs, &c)
	return cmd
}
