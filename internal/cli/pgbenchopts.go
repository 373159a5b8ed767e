package cli

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/pgscale/pgscale/internal/workload"
)

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

// option is pgbench's handling of one option, in command-line order.
func (p *pgbenchCmd) option(name, arg string) error {
	bench, init := optionMode(name)
	p.benchSet = p.benchSet || bench
	p.initSet = p.initSet || init
	switch name {
	case "builtin", "skip-some-updates", "select-only":
		return p.builtinScript(name, arg)
	case "file":
		return p.scriptFile(arg)
	case "client":
		return p.intOption(&p.clients, arg, "-c/--client", 1)
	case "connect":
		p.connect = true
	case "debug":
		return p.fail("-d/--debug is not supported by pgscale pgbench: pgscale does not print pgbench's internal debugging output")
	case "define":
		i := strings.IndexByte(arg, '=')
		if i <= 0 || i == len(arg)-1 {
			return p.fail("invalid variable definition: \"%s\"", arg)
		}
		p.defines[arg[:i]] = arg[i+1:]
	case "fillfactor":
		return p.intOption(&p.init.Fillfactor, arg, "-F/--fillfactor", 10)
	case "host":
		p.host = arg
	case "initialize":
		p.initMode = true
	case "init-steps":
		return p.initSteps(arg)
	case "jobs":
		return p.intOption(&p.threads, arg, "-j/--jobs", 1)
	case "log":
		p.log = true
	case "latency-limit":
		if p.latencyLimitMs = atof(arg); p.latencyLimitMs <= 0 {
			return p.fail("invalid latency limit: \"%s\"", arg)
		}
	case "protocol":
		if arg != "simple" && arg != "extended" && arg != "prepared" {
			return p.fail("invalid query mode (-M): \"%s\"", arg)
		}
		p.protocol = arg
	case "no-vacuum":
		p.noVacuum, p.init.NoVacuum = true, true
	case "port":
		p.port = arg
	case "progress":
		return p.intOption(&p.progress, arg, "-P/--progress", 1)
	case "quiet":
		p.init.Quiet = true
	case "report-per-command":
		p.perCommand = true
	case "rate":
		if p.rate = atof(arg); p.rate <= 0 {
			return p.fail("invalid rate limit: \"%s\"", arg)
		}
	case "scale":
		p.scaleGiven = true
		return p.intOption(&p.init.Scale, arg, "-s/--scale", 1)
	case "transactions":
		return p.intOption(&p.transactions, arg, "-t/--transactions", 1)
	case "time":
		return p.intOption(&p.duration, arg, "-T/--time", 1)
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
			return p.fail("invalid sampling rate: \"%s\"", arg)
		}
	case "aggregate-interval":
		return p.intOption(&p.aggregate, arg, "--aggregate-interval", 1)
	case "progress-timestamp":
		p.progressTimestamp = true
	case "log-prefix":
		p.logPrefix, p.logPrefixGiven = arg, true
	case "foreign-keys":
		p.init.ForeignKeys = true
	case "random-seed":
		if !p.setSeed(arg) {
			return p.fail("error while setting random seed from --random-seed option")
		}
	case "show-script":
		return p.showScript(arg)
	case "partitions":
		return p.intOption(&p.init.Partitions, arg, "--partitions", 0)
	case "partition-method":
		switch strings.ToLower(arg) {
		case "range", "hash":
			p.init.PartitionMethod, p.partitionMethodGiven = strings.ToLower(arg), true
		default:
			return p.fail("invalid partition method, expecting \"range\" or \"hash\", got: \"%s\"", arg)
		}
	case "failures-detailed":
		p.failuresDetailed = true
	case "max-tries":
		if p.maxTries = int(int32(atoi(arg))); p.maxTries < 0 {
			return p.fail("invalid number of maximum tries: \"%s\"", arg)
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

// optionMode says whether an option is one of benchmarking's or one of
// initialisation's, as pgbench's benchmarking_option_set and
// initialization_option_set track them; options of both modes are
// neither.
func optionMode(name string) (bench, init bool) {
	switch name {
	case "builtin", "client", "connect", "define", "file", "jobs", "log", "latency-limit", "protocol",
		"skip-some-updates", "progress", "report-per-command", "rate", "select-only", "transactions", "time",
		"vacuum-all", "sampling-rate", "aggregate-interval", "progress-timestamp", "log-prefix", "random-seed",
		"failures-detailed", "max-tries", "verbose-errors", "exit-on-abort", "continue-on-error":
		return true, false
	case "fillfactor", "init-steps", "quiet", "unlogged-tables", "tablespace", "index-tablespace",
		"foreign-keys", "partitions", "partition-method":
		return false, true
	}
	return false, false
}

// fail prints a pgbench error and ends the option parsing with its exit
// code.
func (p *pgbenchCmd) fail(format string, args ...any) error {
	return &exit{p.errorf(format, args...)}
}

// intOption sets *dst to arg, an integer option of at least lo, as
// PostgreSQL's option_parse_int reads it.
func (p *pgbenchCmd) intOption(dst *int, arg, label string, lo int) error {
	v, msg := parseIntOption(arg, label, lo)
	if msg != "" {
		return p.fail("%s", msg)
	}
	*dst = v
	return nil
}

// builtinScript is -b NAME[@W] (-b list lists them), -N and -S.
func (p *pgbenchCmd) builtinScript(name, arg string) error {
	if name == "builtin" && arg == "list" {
		listBuiltins(p.stderr)
		return &exit{0}
	}
	if name != "builtin" {
		arg = map[string]string{"skip-some-updates": "simple-update", "select-only": "select-only"}[name]
	}
	script, _, err := parseWeight(arg)
	if err != nil {
		return p.fail("%v", err)
	}
	if _, err := workload.FindBuiltin(script); err != nil {
		return p.noBuiltin(script)
	}
	p.scripts = append(p.scripts, workload.ScriptArg{Kind: "b", Arg: arg})
	return nil
}

// scriptFile is -f FILE[@W]: the file must open now, as pgbench reads it
// here.
func (p *pgbenchCmd) scriptFile(arg string) error {
	file, _, err := parseWeight(arg)
	if err != nil {
		return p.fail("%v", err)
	}
	if file != "-" {
		if f, err := os.Open(file); err != nil {
			return p.fail("could not open file \"%s\": %s", file, strerror(err))
		} else {
			f.Close()
		}
	}
	p.scripts = append(p.scripts, workload.ScriptArg{Kind: "f", Arg: arg})
	return nil
}

// initSteps is -I STEPS.
func (p *pgbenchCmd) initSteps(arg string) error {
	if err := workload.CheckSteps(arg); err != nil {
		p.errorf("%v", err)
		if arg != "" {
			fmt.Fprintf(p.stderr, "pgbench: detail: Allowed step characters are: \"%s\".\n", workload.AllSteps)
		}
		return &exit{1}
	}
	p.init.Steps = arg
	return nil
}

// showScript is --show-script NAME: it prints the built-in script and
// ends pgbench.
func (p *pgbenchCmd) showScript(arg string) error {
	script, _, _ := strings.Cut(arg, "@")
	b, err := workload.FindBuiltin(script)
	if err != nil {
		return p.noBuiltin(script)
	}
	fmt.Fprintf(p.stderr, "-- %s: %s\n%s\n", b.Name, b.Description, b.Script)
	return &exit{0}
}

// noBuiltin is pgbench's complaint about a name that is no built-in
// script's, with the list of them; it ends pgbench.
func (p *pgbenchCmd) noBuiltin(script string) error {
	p.errorf("%s", builtinError(script))
	listBuiltins(p.stderr)
	return &exit{1}
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
