package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/disturb"
	"github.com/pgscale/pgscale/internal/experiment"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/schedule/sweep"
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
			g := f.common(cmd, argv, stdout, stderr)
			tgt := target.ForRun(dsn)
			tgt.Replicas = replicas
			agents := ag.apply(cmd.Flags(), &g)
			if pgSrc != "" {
				if dsn != "" || g.Cluster.PGBin != "" {
					return usage.Errorf("--pg-src builds the ephemeral cluster's server: drop --dsn and --pg-bin")
				}
				var err error
				if tgt, err = target.FromSource(pgSrc); err != nil {
					return usage.Wrap(specError(err, "--pg-src"))
				}
			}
			if len(exts) > 0 {
				var err error
				if tgt, err = target.WithExtensions(tgt, exts); err != nil {
					return extError(err)
				}
			}
			if f.describe {
				return describe(g.Workload, stdout)
			}
			if err := rec.check(nil); err != nil {
				return err
			}
			if err := f.outputs.check(); err != nil {
				return err
			}
			spec, err := runSpec(g, runGiven{Target: tgt, Pooler: pooler, Agents: agents, Out: f.out})
			if err != nil {
				return err
			}
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			file, path, err := sweep.Run(ctx, spec)
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

// runSpec checks what run's flags give (and pgscale pgbench's) and makes
// the sweep's spec: the experiment read (scripts, set-up, disturbances,
// decision rules), the target behind --pooler's pooler, in the flags'
// words, before anything starts.
func runSpec(g common, r runGiven) (sweep.Spec, error) {
	t, pooler, agents := r.Target, r.Pooler, r.Agents
	c, err := g.check()
	if err != nil {
		return sweep.Spec{}, err
	}
	if t.Replicas > 0 && !t.Ephemeral() {
		return sweep.Spec{}, usage.Errorf("--replicas applies to an ephemeral cluster, not to --dsn or a PGHOST-style environment")
	}
	if pooler != "" {
		if t, err = target.WithPooler(t, pooler); err != nil {
			return sweep.Spec{}, usage.Wrap(poolerError(err))
		}
	}
	if err := checkOpenFiles(c.Load.MaxClients(), 1, disturb.Sessions(c.Disturbances)); err != nil {
		return sweep.Spec{}, err
	}
	if agents != nil && pooler != "" {
		if err := checkAgents(agents, c, nil); err != nil {
			return sweep.Spec{}, err
		}
		return sweep.Spec{}, usage.Errorf("--agents and --pooler: the agents cannot reach a pooler pgscale starts on its own socket; run the pooler yourself and give --dsn")
	}
	if err := checkAgents(agents, c, []target.Spec{t}); err != nil {
		return sweep.Spec{}, err
	}
	if err := checkCluster(c.Cluster, []target.Spec{t}); err != nil {
		return sweep.Spec{}, err
	}
	if c.Data.Create && t.Ephemeral() {
		return sweep.Spec{}, usage.Errorf("--init applies to --dsn targets; an ephemeral cluster gets pgbench's data whenever the workload uses pgbench's tables")
	}
	if !r.NoResultFile {
		var err error
		if r.Out != "" {
			err = checkOut(r.Out, false)
		} else {
			err = checkOut("results", true)
		}
		if err != nil {
			return sweep.Spec{}, err
		}
	}
	if err := g.workload(c); err != nil {
		return sweep.Spec{}, err
	}
	if err := checkTopology([]target.Spec{t}, c.Workload); err != nil {
		return sweep.Spec{}, err
	}
	return sweep.Spec{Common: *c, Target: t, Agents: agents, Out: r.Out, NoResultFile: r.NoResultFile, Pgbench: r.Pgbench}, nil
}

// runGiven is what run (or pgscale pgbench) gives of its sweep besides
// the experiment: the target, --pooler, the agents, where the result
// file goes, and what pgbench asked to report.
type runGiven struct {
	Target       target.Spec
	Pooler       string
	Agents       *experiment.Agents
	Out          string
	NoResultFile bool
	Pgbench      *result.Pgbench
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

// extError words run's --ext values' errors (target.WithExtensions') in
// the flag. They are usage errors.
func extError(err error) error {
	var ee *target.ExtensionError
	switch {
	case errors.As(err, &ee) && ee.Item != "":
		return usage.Errorf("--ext %q: %q: %v (one extension per --ext)", ee.Value, ee.Item, ee.Err)
	case errors.As(err, &ee):
		return usage.Errorf("--ext %q: %v", ee.Value, ee.Err)
	case errors.Is(err, target.ErrNoExtensionServer):
		return usage.Errorf("--ext builds an extension for the ephemeral cluster's server (the installed one, or --pg-src): not with --dsn")
	}
	return usage.Wrap(err)
}

// poolerError words --pooler's error (target.WithPooler's).
func poolerError(err error) error {
	var se *target.SpecError
	if errors.As(err, &se) && errors.Is(se.Err, target.ErrPoolerOf) {
		se.Err = errors.New("of= names an ab target; run's pooler fronts the ephemeral cluster or --dsn")
	}
	return specError(err, "--pooler")
}
