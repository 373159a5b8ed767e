package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/plan"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
)

func newRunCmd(argv []string, stdout, stderr io.Writer) *cobra.Command {
	var f loadFlags
	var dsn, pooler, pgSrc string
	var exts []string
	var replicas int
	var rec recordFlags
	var ag agentFlags
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run a workload over a client sweep and write a result file",
		Long: `Run a pgbench-compatible workload at each client count of a sweep, print
progress each interval, each step's figures and evidence as it ends, a
summary table and a diagnosis, and write a result file. What run prints is
what pgscale report prints of that file.

With no --dsn (and no PGHOST-style environment), pgscale starts a throw-away
PostgreSQL cluster, creates the data the workload needs, runs, and removes it.

With --pooler (` + target.PoolerForms() + `) the clients connect through
a pooler that pgscale starts in front of that server, as an ab target of
that kind would be (pgscale ab --help), and stops at the end; the data, the
probes and the disturbances go to the server, and the pooler's CPU is
accounted apart.

With --pg-src the ephemeral cluster runs PostgreSQL built from source
(PATH[@REV][+PATCH...][,configure=ARGS][,ext=EXTPATH[@REV]], as an ab
target src: is), made once and kept in the build cache (--build-cache).

With --ext (repeatable) an extension is built for the ephemeral cluster's
server, the installed one (with its PGXS: its pg_config and development
headers) or --pg-src's, and installed into a copy of that server, which
the cluster runs from: EXTPATH[@REV][+PATCH...][,make=ARGS|,run=CMD], as
an ab target's ext= is (settings:,ext=...).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			spec := plan.RunSpec{Common: f.common(cmd, argv, stdout, stderr), Target: target.ForRun(dsn), Pooler: pooler, Out: f.out}
			spec.Target.Replicas = replicas
			ag.apply(cmd.Flags(), &spec)
			if pgSrc != "" {
				if dsn != "" || spec.Cluster.PGBin != "" {
					return usage.Errorf("--pg-src builds the ephemeral cluster's server: drop --dsn and --pg-bin")
				}
				var err error
				if spec.Target, err = target.FromSource(pgSrc); err != nil {
					return usage.Wrap(err)
				}
			}
			if len(exts) > 0 {
				var err error
				if spec.Target, err = target.WithExtensions(spec.Target, exts); err != nil {
					return usage.Wrap(err)
				}
			}
			if f.describe {
				return describe(spec.Workload, stdout)
			}
			if err := rec.check(nil); err != nil {
				return err
			}
			if err := f.outputs.check(); err != nil {
				return err
			}
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			file, path, err := plan.Run(ctx, spec)
			stop() // Ctrl-C from here on stops pgscale, as usual
			if file == nil || path == "" {
				return err
			}
			status := ""
			if !file.Complete {
				status = " (incomplete)"
			}
			fmt.Fprintf(stdout, "result: %s%s\n", path, status)
			if werr := f.outputs.write(report.NewDoc(compare.Analyze([]compare.Input{{Name: path, File: file}}, compare.Compared{}))); werr != nil && err == nil {
				err = werr
			}
			err = errors.Join(err, rec.record(cmd.Context(), stdout, []written{{path: path, file: file}}))
			if err == nil {
				err = expectError(file)
			}
			return err
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	f.register(fs, "result file (default results/<workload>-<UTC time>.json)")
	f.outputs.register(fs, func(rf report.Format) bool { return rf.Shows(report.KindFiles) })
	fs.StringVar(&dsn, "dsn", "", "connection string of an existing server (URI or keyword form); libpq environment variables are honoured; without it, an ephemeral cluster")
	fs.StringArrayVar(&f.c.Expect, "expect", nil, expectHelp)
	fs.StringVar(&pooler, "pooler", "", "connect the clients through a pooler started in front of the server: "+target.PoolerForms())
	fs.IntVar(&replicas, "replicas", 0, "streaming replicas of the ephemeral cluster (pg_basebackup), replaying before the run starts; a --pooler proxy: sees them as upstreams")
	registerCluster(fs, &f.c)
	fs.StringVar(&pgSrc, "pg-src", "", "the ephemeral cluster's server built from source: PATH[@REV][+PATCH...][,configure=ARGS][,ext=EXTPATH[@REV]] (as an ab target src:)")
	fs.StringArrayVar(&exts, "ext", nil, "an extension built for the ephemeral cluster's server (the installed one, or --pg-src's) and installed into a copy of it: EXTPATH[@REV][+PATCH...][,make=ARGS|,run=CMD] (repeatable)")
	registerBuildCache(fs, &f.c.Cluster.BuildCache)
	rec.register(fs, false)
	ag.register(fs, true)
	return cmd
}

// expectHelp is the --expect flag's help.
var expectHelp = "decision rule on the sweep, checked and reported, exit code 1 when it fails: QUANTITY@c=N OP VALUE, as in efficiency@c=8>=50%, waits@c=8<20% or server-cpu/txn@c=8<c=1+20% (repeatable, or comma-separated); quantities: " + compare.ExpectNames()

// expectError is the exit code's error for a file's decision rules: a
// RegressionError when one failed or could not be checked.
func expectError(f *result.File) error {
	exps, err := compare.ParseExpectations(f.Expect)
	if err != nil {
		return usage.Wrap(err)
	}
	var failed []string
	for _, o := range compare.Check(f, exps) {
		if o.Failed() {
			failed = append(failed, o.Spec)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return &RegressionError{Msg: "decision rules failed: " + strings.Join(failed, "; ")}
}
