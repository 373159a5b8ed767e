package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pgscale/pgscale/internal/load"
	"github.com/pgscale/pgscale/internal/probeopt"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/rig"
	"github.com/pgscale/pgscale/internal/schedule/sweep"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/txnlog"
	"github.com/pgscale/pgscale/internal/workload"
)

func newPgbenchCmd(argv []string, stdout, stderr io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "pgbench [OPTION]... [DBNAME]",
		Short: "pgbench's own command line, output, logs and exit codes, plus a result file",
		Long: `Run pgbench's command line unchanged: the same options (pgbench 17's), the
same defaults (tpcb-like, 1 client, 10 transactions, -M simple), the same
report, progress lines, -l logs and exit codes, on the server libpq's options
and environment name. Every run also writes a pgscale result file (default
under results/; --pgscale-out FILE, --pgscale-no-result). pgscale pgbench
--help lists the options.`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			p := &pgbenchCmd{argv: argv, stdout: stdout, stderr: stderr, getenv: os.Getenv}
			if code := p.main(ctx, args); code != 0 {
				return &ExitError{Code: code}
			}
			return nil
		},
	}
}

// pgbenchCmd is one pgscale pgbench invocation: pgbench's options as
// pgbench's main collects them, then a run or an initialisation.
type pgbenchCmd struct {
	argv           []string
	stdout, stderr io.Writer
	getenv         func(string) string

	initMode, benchSet, initSet bool
	init                        workload.InitOptions
	partitionMethodGiven        bool
	scripts                     []workload.ScriptArg
	defines                     map[string]string
	protocol                    string
	seed                        string // resolved, as a decimal
	clients, threads            int
	transactions, duration      int
	connect, log, perCommand    bool
	latencyLimitMs, rate        float64
	noVacuum, vacuumAll         bool
	progress                    int
	scaleGiven                  bool
	samplingRate                float64
	aggregate                   int
	progressTimestamp           bool
	logPrefix                   string
	logPrefixGiven              bool
	failuresDetailed, verbose   bool
	exitOnAbort, continueOnErr  bool
	maxTries                    int
	host, port, user            string
	out                         string
	noResult, probes            bool
}

// errorf prints a pgbench error and returns pgbench's exit code for it.
func (p *pgbenchCmd) errorf(format string, args ...any) int {
	fmt.Fprintf(p.stderr, "pgbench: error: "+format+"\n", args...)
	return 1
}

// hint prints getopt's complaint and pgbench's hint.
func (p *pgbenchCmd) hint(msg string) int {
	fmt.Fprintf(p.stderr, "pgbench: %s\npgbench: hint: Try \"pgbench --help\" for more information.\n", msg)
	return 1
}

// exit is an option that ends pgbench at once (-b list, --show-script),
// or an error already printed; code is the exit code.
type exit struct{ code int }

func (e *exit) Error() string { return fmt.Sprintf("exit %d", e.code) }

func (p *pgbenchCmd) main(ctx context.Context, args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "--help", "-?":
			fmt.Fprintf(p.stdout, pgbenchUsage, "pgbench", "pgbench")
			return 0
		case "--version", "-V":
			fmt.Fprintf(p.stdout, "pgbench (PostgreSQL) 17 (pgscale %s)\n", Version)
			return 0
		}
	}
	p.clients, p.threads, p.maxTries, p.protocol, p.defines = 1, 1, 1, "simple", map[string]string{}
	p.init.Scale, p.init.Fillfactor, p.init.PartitionMethod = 1, 100, "range"
	if env := p.getenv("PGBENCH_RANDOM_SEED"); env != "" {
		if !p.setSeed(env) {
			return p.errorf("error while setting random seed from PGBENCH_RANDOM_SEED environment variable")
		}
	}
	operands, err := getopt(args, pgbenchOptions, p.option)
	var ge *getoptError
	var ex *exit
	switch {
	case errors.As(err, &ge):
		return p.hint(ge.msg)
	case errors.As(err, &ex):
		return ex.code
	case err != nil:
		return p.errorf("%v", err)
	}
	if len(p.scripts) == 0 && !p.initMode {
		p.scripts = []workload.ScriptArg{{Kind: "b", Arg: "tpcb-like"}}
		p.benchSet = true
	}
	if !p.initMode {
		// pgbench parses the scripts as it reads the options: their
		// mistakes come before the checks below.
		if _, err := workload.Load(workload.Spec{Scripts: p.scripts, Defines: p.defines, Protocol: p.protocol, Seed: p.seed}); err != nil {
			return p.errorf("%v", optionError(err))
		}
	}
	p.threads = min(p.threads, p.clients)
	db := ""
	if len(operands) > 0 {
		db, operands = operands[0], operands[1:]
	} else if db = p.getenv("PGDATABASE"); db == "" {
		if db = p.getenv("PGUSER"); db == "" {
			if u, err := user.Current(); err == nil {
				db = u.Username
			}
		}
	}
	if len(operands) > 0 {
		p.errorf("too many command-line arguments (first is \"%s\")", operands[0])
		fmt.Fprintln(p.stderr, `pgbench: hint: Try "pgbench --help" for more information.`)
		return 1
	}
	tgt := target.Existing(p.dsn(db))
	if p.initMode {
		return p.initialize(ctx, tgt)
	}
	if p.initSet {
		return p.errorf("some of the specified options cannot be used in benchmarking mode")
	}
	if code := p.check(); code != 0 {
		return code
	}
	return p.run(ctx, tgt)
}

// initialize is pgbench -i.
func (p *pgbenchCmd) initialize(ctx context.Context, tgt target.Spec) int {
	if p.benchSet {
		return p.errorf("some of the specified options cannot be used in initialization (-i) mode")
	}
	if p.init.Partitions == 0 && p.partitionMethodGiven {
		return p.errorf("--partition-method requires greater than zero --partitions")
	}
	live := &report.PgbenchLive{Out: p.stdout, Err: p.stderr}
	err := initData(ctx, rig.InitSpec{Target: tgt, Init: p.init, Out: p.stderr, Observer: live, ServerNotices: true})
	if err != nil {
		return p.errorf("%v", strings.TrimPrefix(err.Error(), "init: "))
	}
	return 0
}

// run is a pgbench benchmark, through pgscale's runner.
func (p *pgbenchCmd) run(ctx context.Context, tgt target.Spec) int {
	interval := time.Second
	if p.progress > 0 {
		interval = time.Duration(p.progress) * time.Second
	}
	probes := probeopt.DefaultOptions()
	probes.None = !p.probes
	pg := &result.Pgbench{ProgressS: p.progress, ReportPerCommand: p.perCommand, FailuresDetailed: p.failuresDetailed,
		VerboseErrors: p.verbose, ExitOnAbort: p.exitOnAbort}
	g := common{
		Argv: p.argv, Version: Version,
		Workload: workload.Spec{Scripts: p.scripts, Defines: p.defines, Protocol: p.protocol, Seed: p.seed},
		Data:     dataGiven{Init: workload.InitOptions{Scale: p.init.Scale, Fillfactor: 100, PartitionMethod: "range"}, ScaleGiven: p.scaleGiven},
		Load: loadGiven{Clients: []int{p.clients}, NoVacuum: p.noVacuum, Threads: p.threads, VacuumAccounts: p.vacuumAll, VerboseErrors: p.verbose,
			Settings: load.Settings{Duration: time.Duration(p.duration) * time.Second, Transactions: p.transactions,
				Connect: p.connect, Rate: p.rate, LatencyLimit: time.Duration(p.latencyLimitMs*1000) * time.Microsecond,
				MaxTries: p.maxTries, ContinueOnError: p.continueOnErr, Interval: interval, PerCommand: p.perCommand,
				IO: "auto", ExitOnAbort: p.exitOnAbort}},
		Probes: &probes,
		Observer: &report.PgbenchLive{Out: p.stdout, Err: p.stderr, Progress: p.progress > 0, Timestamp: p.progressTimestamp,
			Vacuum: !p.noVacuum, VacuumAll: p.vacuumAll},
		ShellOut: p.stdout, ShellErr: p.stderr,
	}
	var lg *txnlog.Log
	if p.log {
		var err error
		lg, err = txnlog.Create(txnlog.Options{Prefix: p.logPrefix, Threads: p.threads,
			SamplingRate: p.samplingRate, AggregateInterval: p.aggregate, Rate: p.rate > 0, LatencyLimit: p.latencyLimitMs > 0,
			MaxTries: p.maxTries, FailuresDetailed: p.failuresDetailed})
		if err != nil {
			return p.errorf("%v", err)
		}
		g.Transactions = lg
		pg.Log = &result.PgbenchLog{Files: lg.Files(), SamplingRate: p.samplingRate, AggregateIntervalS: p.aggregate}
	}
	var file *result.File
	var path string
	spec, err := runSpec(g, runGiven{Target: tgt, Out: p.out, NoResultFile: p.noResult, Pgbench: pg})
	if err == nil {
		file, path, err = sweep.Run(ctx, spec)
	}
	if lg != nil {
		if cerr := lg.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("transaction log: %w", cerr)
		}
	}
	switch {
	case file == nil:
		return p.errorf("%v", err)
	case path != "":
		fmt.Fprintf(p.stderr, "pgscale: result file %s\n", path)
	}
	aborted := !file.Complete
	for i := range file.Steps {
		aborted = aborted || report.PgbenchAborted(&file.Steps[i])
	}
	if aborted {
		return 2
	}
	if err != nil {
		return p.errorf("%v", err) // the result file or the log could not be written
	}
	return 0
}

// dsn is the connection string of pgbench's -h, -p, -U and database:
// what they leave unset comes from libpq's environment and defaults.
func (p *pgbenchCmd) dsn(db string) string {
	var parts []string
	for _, kv := range [][2]string{{"host", p.host}, {"port", p.port}, {"user", p.user}, {"dbname", db}} {
		if kv[1] != "" {
			v := strings.ReplaceAll(strings.ReplaceAll(kv[1], `\`, `\\`), `'`, `\'`)
			parts = append(parts, kv[0]+"='"+v+"'")
		}
	}
	return strings.Join(parts, " ")
}
