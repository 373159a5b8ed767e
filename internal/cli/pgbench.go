package cli

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pgscale/pgscale/internal/plan"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/target"
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

// pgbenchOptions is the getopt_long table of pgbench 17, and pgscale's own
// --pgscale-* options.
var pgbenchOptions = []option{
	{'b', "builtin", true, false}, {'c', "client", true, false}, {'C', "connect", false, false}, {'d', "debug", false, false},
	{'D', "define", true, false}, {'f', "file", true, false}, {'F', "fillfactor", true, false}, {'h', "host", true, false},
	{'i', "initialize", false, false}, {'I', "init-steps", true, false}, {'j', "jobs", true, false}, {'l', "log", false, false},
	{'L', "latency-limit", true, false}, {'M', "protocol", true, false}, {'n', "no-vacuum", false, false}, {'N', "skip-some-updates", false, false},
	{'p', "port", true, false}, {'P', "progress", true, false}, {'q', "quiet", false, false}, {'r', "report-per-command", false, false},
	{'R', "rate", true, false}, {'s', "scale", true, false}, {'S', "select-only", false, false}, {'t', "transactions", true, false},
	{'T', "time", true, false}, {'U', "username", true, false}, {'v', "vacuum-all", false, false},
	{0, "unlogged-tables", false, false}, {0, "tablespace", true, false}, {0, "index-tablespace", true, false},
	{0, "sampling-rate", true, false}, {0, "aggregate-interval", true, false}, {0, "progress-timestamp", false, false},
	{0, "log-prefix", true, false}, {0, "foreign-keys", false, false}, {0, "random-seed", true, false}, {0, "show-script", true, false},
	{0, "partitions", true, false}, {0, "partition-method", true, false}, {0, "failures-detailed", false, false},
	{0, "max-tries", true, false}, {0, "verbose-errors", false, false}, {0, "exit-on-abort", false, false},
	// pgbench 18's; pgscale has it for run already.
	{0, "continue-on-error", false, true},
	// pgscale's own.
	{0, "pgscale-out", true, true}, {0, "pgscale-no-result", false, true}, {0, "pgscale-probes", false, true},
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
			return p.errorf("%v", err)
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

// option is pgbench's handling of one option, in command-line order.
func (p *pgbenchCmd) option(name, arg string) error {
	fail := func(format string, args ...any) error { return &exit{p.errorf(format, args...)} }
	intOpt := func(dst *int, label string, lo int) error {
		v, msg := parseIntOption(arg, label, lo)
		if msg != "" {
			return fail("%s", msg)
		}
		*dst = v
		return nil
	}
	bench := map[string]bool{"builtin": true, "client": true, "connect": true, "define": true, "file": true, "jobs": true,
		"log": true, "latency-limit": true, "protocol": true, "skip-some-updates": true, "progress": true,
		"report-per-command": true, "rate": true, "select-only": true, "transactions": true, "time": true,
		"vacuum-all": true, "sampling-rate": true, "aggregate-interval": true, "progress-timestamp": true,
		"log-prefix": true, "random-seed": true, "failures-detailed": true, "max-tries": true, "verbose-errors": true,
		"exit-on-abort": true, "continue-on-error": true}
	initOpt := map[string]bool{"fillfactor": true, "init-steps": true, "quiet": true, "unlogged-tables": true,
		"tablespace": true, "index-tablespace": true, "foreign-keys": true, "partitions": true, "partition-method": true}
	p.benchSet = p.benchSet || bench[name]
	p.initSet = p.initSet || initOpt[name]
	switch name {
	case "builtin", "skip-some-updates", "select-only":
		if name == "builtin" && arg == "list" {
			listBuiltins(p.stderr)
			return &exit{0}
		}
		if name != "builtin" {
			arg = map[string]string{"skip-some-updates": "simple-update", "select-only": "select-only"}[name]
		}
		script, _, err := parseWeight(arg)
		if err != nil {
			return fail("%v", err)
		}
		if _, err := workload.FindBuiltin(script); err != nil {
			p.errorf("%s", builtinError(script))
			listBuiltins(p.stderr)
			return &exit{1}
		}
		p.scripts = append(p.scripts, workload.ScriptArg{Kind: "b", Arg: arg})
	case "file":
		file, _, err := parseWeight(arg)
		if err != nil {
			return fail("%v", err)
		}
		if file != "-" {
			if f, err := os.Open(file); err != nil {
				return fail("could not open file \"%s\": %s", file, strerror(err))
			} else {
				f.Close()
			}
		}
		p.scripts = append(p.scripts, workload.ScriptArg{Kind: "f", Arg: arg})
	case "client":
		return intOpt(&p.clients, "-c/--clients", 1)
	case "connect":
		p.connect = true
	case "debug":
		return fail("-d/--debug is not supported by pgscale pgbench: pgscale does not print pgbench's internal debugging output")
	case "define":
		i := strings.IndexByte(arg, '=')
		if i <= 0 || i == len(arg)-1 {
			return fail("invalid variable definition: \"%s\"", arg)
		}
		p.defines[arg[:i]] = arg[i+1:]
	case "fillfactor":
		return intOpt(&p.init.Fillfactor, "-F/--fillfactor", 10)
	case "host":
		p.host = arg
	case "initialize":
		p.initMode = true
	case "init-steps":
		if err := workload.CheckSteps(arg); err != nil {
			p.errorf("%v", err)
			if arg != "" {
				fmt.Fprintf(p.stderr, "pgbench: detail: Allowed step characters are: \"%s\".\n", workload.AllSteps)
			}
			return &exit{1}
		}
		p.init.Steps = arg
	case "jobs":
		return intOpt(&p.threads, "-j/--jobs", 1)
	case "log":
		p.log = true
	case "latency-limit":
		if p.latencyLimitMs = atof(arg); p.latencyLimitMs <= 0 {
			return fail("invalid latency limit: \"%s\"", arg)
		}
	case "protocol":
		if arg != "simple" && arg != "extended" && arg != "prepared" {
			return fail("invalid query mode (-M): \"%s\"", arg)
		}
		p.protocol = arg
	case "no-vacuum":
		p.noVacuum, p.init.NoVacuum = true, true
	case "port":
		p.port = arg
	case "progress":
		return intOpt(&p.progress, "-P/--progress", 1)
	case "quiet":
		p.init.Quiet = true
	case "report-per-command":
		p.perCommand = true
	case "rate":
		if p.rate = atof(arg); p.rate <= 0 {
			return fail("invalid rate limit: \"%s\"", arg)
		}
	case "scale":
		p.scaleGiven = true
		return intOpt(&p.init.Scale, "-s/--scale", 1)
	case "transactions":
		return intOpt(&p.transactions, "-t/--transactions", 1)
	case "time":
		return intOpt(&p.duration, "-T/--time", 1)
	case "username":
		p.user = arg
	case "vacuum-all":
		p.vacuumAll = true
	case "unlogged-tables":
		p.init.Unlogged = true
	case "tablespace":
		p.init.Tablespace = arg
	case "index-tablespace":
		p.init.IndexTablespace = arg
	case "sampling-rate":
		if p.samplingRate = atof(arg); p.samplingRate <= 0 || p.samplingRate > 1 {
			return fail("invalid sampling rate: \"%s\"", arg)
		}
	case "aggregate-interval":
		return intOpt(&p.aggregate, "--aggregate-interval", 1)
	case "progress-timestamp":
		p.progressTimestamp = true
	case "log-prefix":
		p.logPrefix, p.logPrefixGiven = arg, true
	case "foreign-keys":
		p.init.ForeignKeys = true
	case "random-seed":
		if !p.setSeed(arg) {
			return fail("error while setting random seed from --random-seed option")
		}
	case "show-script":
		script, _, _ := strings.Cut(arg, "@")
		b, err := workload.FindBuiltin(script)
		if err != nil {
			p.errorf("%s", builtinError(script))
			listBuiltins(p.stderr)
			return &exit{1}
		}
		fmt.Fprintf(p.stderr, "-- %s: %s\n%s\n", b.Name, b.Description, b.Script)
		return &exit{0}
	case "partitions":
		return intOpt(&p.init.Partitions, "--partitions", 0)
	case "partition-method":
		switch strings.ToLower(arg) {
		case "range", "hash":
			p.init.PartitionMethod, p.partitionMethodGiven = strings.ToLower(arg), true
		default:
			return fail("invalid partition method, expecting \"range\" or \"hash\", got: \"%s\"", arg)
		}
	case "failures-detailed":
		p.failuresDetailed = true
	case "max-tries":
		if p.maxTries = int(int32(atoi(arg))); p.maxTries < 0 {
			return fail("invalid number of maximum tries: \"%s\"", arg)
		}
	case "verbose-errors":
		p.verbose = true
	case "exit-on-abort":
		p.exitOnAbort = true
	case "continue-on-error":
		p.continueOnErr = true
	case "pgscale-out":
		p.out = arg
	case "pgscale-no-result":
		p.noResult = true
	case "pgscale-probes":
		p.probes = true
	}
	return nil
}

// check is pgbench's checks of a benchmark's options once all are read.
func (p *pgbenchCmd) check() int {
	switch {
	case p.transactions > 0 && p.duration > 0:
		return p.errorf("specify either a number of transactions (-t) or a duration (-T), not both")
	case p.samplingRate > 0 && !p.log:
		return p.errorf("log sampling (--sampling-rate) is allowed only when logging transactions (-l)")
	case p.samplingRate > 0 && p.aggregate > 0:
		return p.errorf("log sampling (--sampling-rate) and aggregation (--aggregate-interval) cannot be used at the same time")
	case p.aggregate > 0 && !p.log:
		return p.errorf("log aggregation is allowed only when actually logging transactions")
	case !p.log && p.logPrefixGiven:
		return p.errorf("log file prefix (--log-prefix) is allowed only when logging transactions (-l)")
	case p.duration > 0 && p.aggregate > p.duration:
		return p.errorf("number of seconds for aggregation (%d) must not be higher than test duration (%d)", p.aggregate, p.duration)
	case p.duration > 0 && p.aggregate > 0 && p.duration%p.aggregate != 0:
		return p.errorf("duration (%d) must be a multiple of aggregation interval (%d)", p.duration, p.aggregate)
	case p.progressTimestamp && p.progress == 0:
		return p.errorf("--progress-timestamp is allowed only under --progress")
	case p.maxTries == 0 && p.latencyLimitMs == 0 && p.duration <= 0:
		return p.errorf("an unlimited number of transaction tries can only be used with --latency-limit or a duration (-T)")
	}
	if p.transactions <= 0 && p.duration <= 0 {
		p.transactions = 10
	}
	return 0
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
	err := plan.Init(ctx, plan.InitSpec{Target: tgt, Init: p.init, Out: p.stderr, Observer: live, ServerNotices: true})
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
	probes := plan.DefaultProbeOptions()
	probes.None = !p.probes
	pg := &result.Pgbench{ProgressS: p.progress, ReportPerCommand: p.perCommand, FailuresDetailed: p.failuresDetailed,
		VerboseErrors: p.verbose, ExitOnAbort: p.exitOnAbort}
	spec := plan.RunSpec{
		Common: plan.Common{
			Argv: p.argv, Version: Version,
			Workload: workload.Spec{Scripts: p.scripts, Defines: p.defines, Protocol: p.protocol, Seed: p.seed},
			Data:     plan.Data{Init: workload.InitOptions{Scale: p.init.Scale, Fillfactor: 100, PartitionMethod: "range"}, ScaleGiven: p.scaleGiven},
			Load: plan.Load{Clients: []int{p.clients}, Duration: time.Duration(p.duration) * time.Second, Transactions: p.transactions,
				Connect: p.connect, Rate: p.rate, LatencyLimit: time.Duration(p.latencyLimitMs*1000) * time.Microsecond,
				MaxTries: p.maxTries, ContinueOnError: p.continueOnErr, Interval: interval, PerCommand: p.perCommand,
				NoVacuum: p.noVacuum, IO: "auto", Threads: p.threads, VacuumAccounts: p.vacuumAll,
				ExitOnAbort: p.exitOnAbort, VerboseErrors: p.verbose},
			Probes: &probes,
			Observer: &report.PgbenchLive{Out: p.stdout, Err: p.stderr, Progress: p.progress > 0, Timestamp: p.progressTimestamp,
				Vacuum: !p.noVacuum, VacuumAll: p.vacuumAll},
			ShellOut: p.stdout, ShellErr: p.stderr,
		},
		Target: tgt, Out: p.out, NoResultFile: p.noResult, Pgbench: pg,
	}
	var lg *report.PgbenchLog
	if p.log {
		var err error
		lg, err = report.CreatePgbenchLog(report.PgbenchLogOptions{Prefix: p.logPrefix, Threads: p.threads,
			SamplingRate: p.samplingRate, AggregateInterval: p.aggregate, Rate: p.rate > 0, LatencyLimit: p.latencyLimitMs > 0,
			MaxTries: p.maxTries, FailuresDetailed: p.failuresDetailed})
		if err != nil {
			return p.errorf("%v", err)
		}
		spec.Transactions = lg
		pg.Log = &result.PgbenchLog{Files: lg.Files(), SamplingRate: p.samplingRate, AggregateIntervalS: p.aggregate}
	}
	file, path, err := plan.Run(ctx, spec)
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

// setSeed is pgbench's set_random_seed: "time", "rand" or an unsigned
// integer; it says which seed it set, as pgbench does.
func (p *pgbenchCmd) setSeed(s string) bool {
	var seed uint64
	switch s {
	case "time":
		seed = uint64(time.Now().UnixMicro())
	case "rand":
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			p.errorf("could not generate random seed")
			return false
		}
		seed = binary.LittleEndian.Uint64(b[:])
	default:
		v, ok := scanUint64(s)
		if !ok {
			p.errorf("unrecognized random seed option \"%s\"", s)
			fmt.Fprintln(p.stderr, `pgbench: detail: Expecting an unsigned integer, "time" or "rand".`)
			return false
		}
		seed = v
	}
	fmt.Fprintf(p.stderr, "pgbench: setting random seed to %d\n", seed)
	p.seed = strconv.FormatUint(seed, 10)
	return true
}

// scanUint64 is sscanf("%lu%c") accepting exactly one unsigned number:
// leading space, a sign (a minus wraps around, as strtoul does), digits.
func scanUint64(s string) (uint64, bool) {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// parseIntOption is PostgreSQL's option_parse_int: strtol, trailing
// spaces allowed, then a range check; msg is its error.
func parseIntOption(arg, label string, lo int) (int, string) {
	s := strings.TrimLeft(arg, " \t\n\v\f\r")
	end := 0
	if end < len(s) && (s[end] == '+' || s[end] == '-') {
		end++
	}
	digits := end
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	if end == digits {
		end = 0 // no number: strtol leaves endptr at the start
	}
	if strings.TrimRight(s[end:], " \t\n\v\f\r") != "" || (end == 0 && s != "") {
		return 0, fmt.Sprintf("invalid value \"%s\" for option %s", arg, label)
	}
	v, err := strconv.ParseInt(s[:end], 10, 64)
	if end == 0 {
		v, err = 0, nil
	}
	if err != nil || v < int64(lo) || v > 2147483647 {
		return 0, fmt.Sprintf("%s must be in range %d..%d", label, lo, 2147483647)
	}
	return int(v), ""
}

// atof is C's atof: the longest prefix that is a number, 0 if none.
func atof(s string) float64 {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	for end := len(s); end > 0; end-- {
		if v, err := strconv.ParseFloat(s[:end], 64); err == nil || errors.Is(err, strconv.ErrRange) {
			return v
		}
	}
	return 0
}

// atoi is C's atoi (as glibc's strtol, truncated to int).
func atoi(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	end := 0
	if end < len(s) && (s[end] == '+' || s[end] == '-') {
		end++
	}
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	v, _ := strconv.ParseInt(s[:end], 10, 64)
	return v
}

// parseWeight is pgbench's parseScriptWeight: NAME[@W].
func parseWeight(arg string) (string, int, error) {
	i := strings.LastIndexByte(arg, '@')
	if i < 0 {
		return arg, 1, nil
	}
	v, err := strconv.ParseInt(strings.TrimLeft(arg[i+1:], " \t\n\v\f\r"), 10, 64)
	if err != nil {
		return "", 0, fmt.Errorf("invalid weight specification: %s", arg[i:])
	}
	if v < 0 || v > 2147483647 {
		return "", 0, fmt.Errorf("weight specification out of range (0 .. 2147483647): %d", v)
	}
	return arg[:i], int(v), nil
}

// builtinError is pgbench's message for a -b name that is no built-in's
// unique prefix.
func builtinError(name string) string {
	n := 0
	for _, b := range workload.Builtins() {
		if strings.HasPrefix(b.Name, name) {
			n++
		}
	}
	if n > 1 {
		return fmt.Sprintf("ambiguous builtin name: %d builtin scripts found for prefix \"%s\"", n, name)
	}
	return fmt.Sprintf("no builtin script found for name \"%s\"", name)
}

// listBuiltins is pgbench's listAvailableScripts.
func listBuiltins(w io.Writer) {
	fmt.Fprintln(w, "Available builtin scripts:")
	for _, b := range workload.Builtins() {
		fmt.Fprintf(w, "  %13s: %s\n", b.Name, b.Description)
	}
	fmt.Fprintln(w)
}

// strerror is an OS error as C's strerror words it ("No such file or
// directory"), without Go's path prefix.
func strerror(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	s := err.Error()
	if s != "" {
		s = strings.ToUpper(s[:1]) + s[1:]
	}
	return s
}

// pgbenchUsage is pgbench 17's --help, with pgscale's options.
const pgbenchUsage = `%s is a benchmarking tool for PostgreSQL.

Usage:
  %s [OPTION]... [DBNAME]

Initialization options:
  -i, --initialize         invokes initialization mode
  -I, --init-steps=[dtgGvpf]+ (default "dtgvp")
                           run selected initialization steps, in the specified order
                           d: drop any existing pgbench tables
                           t: create the tables used by the standard pgbench scenario
                           g: generate data, client-side
                           G: generate data, server-side
                           v: invoke VACUUM on the standard tables
                           p: create primary key indexes on the standard tables
                           f: create foreign keys between the standard tables
  -F, --fillfactor=NUM     set fill factor
  -n, --no-vacuum          do not run VACUUM during initialization
  -q, --quiet              quiet logging (one message each 5 seconds)
  -s, --scale=NUM          scaling factor
  --foreign-keys           create foreign key constraints between tables
  --index-tablespace=TABLESPACE
                           create indexes in the specified tablespace
  --partition-method=(range|hash)
                           partition pgbench_accounts with this method (default: range)
  --partitions=NUM         partition pgbench_accounts into NUM parts (default: 0)
  --tablespace=TABLESPACE  create tables in the specified tablespace
  --unlogged-tables        create tables as unlogged tables

Options to select what to run:
  -b, --builtin=NAME[@W]   add builtin script NAME weighted at W (default: 1)
                           (use "-b list" to list available scripts)
  -f, --file=FILENAME[@W]  add script FILENAME weighted at W (default: 1)
  -N, --skip-some-updates  skip updates of pgbench_tellers and pgbench_branches
                           (same as "-b simple-update")
  -S, --select-only        perform SELECT-only transactions
                           (same as "-b select-only")

Benchmarking options:
  -c, --client=NUM         number of concurrent database clients (default: 1)
  -C, --connect            establish new connection for each transaction
  -D, --define=VARNAME=VALUE
                           define variable for use by custom script
  -j, --jobs=NUM           number of threads (default: 1)
  -l, --log                write transaction times to log file
  -L, --latency-limit=NUM  count transactions lasting more than NUM ms as late
  -M, --protocol=simple|extended|prepared
                           protocol for submitting queries (default: simple)
  -n, --no-vacuum          do not run VACUUM before tests
  -P, --progress=NUM       show thread progress report every NUM seconds
  -r, --report-per-command report latencies, failures, and retries per command
  -R, --rate=NUM           target rate in transactions per second
  -s, --scale=NUM          report this scale factor in output
  -t, --transactions=NUM   number of transactions each client runs (default: 10)
  -T, --time=NUM           duration of benchmark test in seconds
  -v, --vacuum-all         vacuum all four standard tables before tests
  --aggregate-interval=NUM aggregate data over NUM seconds
  --exit-on-abort          exit when any client is aborted
  --failures-detailed      report the failures grouped by basic types
  --log-prefix=PREFIX      prefix for transaction time log file
                           (default: "pgbench_log")
  --max-tries=NUM          max number of tries to run transaction (default: 1)
  --progress-timestamp     use Unix epoch timestamps for progress
  --random-seed=SEED       set random seed ("time", "rand", integer)
  --sampling-rate=NUM      fraction of transactions to log (e.g., 0.01 for 1%%)
  --show-script=NAME       show builtin script code, then exit
  --verbose-errors         print messages of all errors
  --continue-on-error      count other SQL errors as failed transactions and go on (pgbench 18)

Common options:
  -d, --debug              print debugging output (not supported by pgscale: refused)
  -h, --host=HOSTNAME      database server host or socket directory
  -p, --port=PORT          database server port number
  -U, --username=USERNAME  connect as specified database user
  -V, --version            output version information, then exit
  -?, --help               show this help, then exit

pgscale's options:
  --pgscale-out=FILE       write the result file to FILE (default results/<workload>-<UTC time>.json)
  --pgscale-no-result      write no result file
  --pgscale-probes         run pgscale's server-side probes beside the load (default: none)
`
