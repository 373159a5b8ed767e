package cli

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pgscale/pgscale/internal/workload"
)

// initFlags are pgbench -i's options; run takes them too, for the data it creates.
type initFlags struct {
	opts workload.InitOptions
}

func (f *initFlags) register(fs *pflag.FlagSet, standalone bool) {
	fs.IntVarP(&f.opts.Scale, "scale", "s", 1, "scale factor: 100000 accounts per unit")
	fs.IntVar(&f.opts.Partitions, "partitions", 0, "partition pgbench_accounts into N partitions")
	fs.StringVar(&f.opts.PartitionMethod, "partition-method", "range", "partition method: range or hash")
	fs.IntVarP(&f.opts.Fillfactor, "fillfactor", "F", 100, "fillfactor of pgbench's tables")
	fs.BoolVar(&f.opts.Unlogged, "unlogged-tables", false, "create unlogged tables")
	if standalone {
		fs.BoolVarP(&f.opts.NoVacuum, "no-vacuum", "n", false, "skip the vacuum after loading")
		fs.BoolVar(&f.opts.ForeignKeys, "foreign-keys", false, "create foreign keys between the tables")
	}
}

func (f *initFlags) validate() error {
	o := f.opts
	switch {
	case o.Scale < 1:
		return Usagef("--scale must be at least 1")
	case o.Fillfactor < 10 || o.Fillfactor > 100:
		return Usagef("--fillfactor must be between 10 and 100")
	case o.Partitions < 0:
		return Usagef("--partitions must be at least 0")
	case o.PartitionMethod != "range" && o.PartitionMethod != "hash":
		return Usagef("--partition-method must be range or hash")
	}
	return nil
}

func newInitCmd(stdout, stderr io.Writer) *cobra.Command {
	var f initFlags
	var t targetFlags
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create pgbench's tables and data (same schema and rows as pgbench -i)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.validate(); err != nil {
				return err
			}
			if err := t.validate(); err != nil {
				return err
			}
			if t.ephemeral() && !t.keep {
				return Usagef("init on an ephemeral cluster would be thrown away at once: name a server with --dsn, or pass --keep")
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			tgt, err := t.open(ctx, workload.DataBytes(f.opts.Scale), 10, stderr)
			if err != nil {
				return err
			}
			defer tgt.Close()
			if _, err := workload.Init(ctx, tgt.Connect, f.opts, stdout); err != nil {
				if ctx.Err() != nil {
					return &IncompleteError{Err: fmt.Errorf("init interrupted")}
				}
				if _, ok := err.(*UsageError); ok {
					return err
				}
				return &IncompleteError{Err: fmt.Errorf("init: %w", err)}
			}
			return nil
		},
	}
	f.register(cmd.Flags(), true)
	t.register(cmd.Flags())
	return cmd
}
