package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pgscale/pgscale/internal/disturb"
	"github.com/pgscale/pgscale/internal/load"
	"github.com/pgscale/pgscale/internal/probeopt"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
	"github.com/pgscale/pgscale/internal/workload"
)

// loadFlags are the flags run and ab share: what load runs, on what data,
// watched by what. They fill a common, the experiment as given.
type loadFlags struct {
	c        common
	progress time.Duration
	describe bool
	out      string
	outputs  outputFlags
}

const colocateHelp = "keep each client's thread on its backend's CPU (a server on this machine, raw I/O): auto (with more than one client), on or off"

// register registers the flags; outHelp says what --out names.
func (f *loadFlags) register(fs *pflag.FlagSet, outHelp string) {
	l, w, d := &f.c.Load, &f.c.Workload, &f.c.Data
	l.Clients, l.Duration, l.MaxTries = []int{1, 2, 4, 8}, 10*time.Second, 1
	w.Defines = map[string]string{}
	fs.VarP(intList{&l.Clients}, "client", "c", "client counts to sweep, e.g. 1,2,4,8")
	fs.IntVarP(&l.Threads, "jobs", "j", 0, "deal clients to N pgbench threads for pgbench's per-thread choice of scripts (default: one per client); every client still has its own goroutine")
	fs.VarP(seconds{&l.Duration}, "time", "T", "measured duration of each step (seconds, or 10s, 1m)")
	fs.IntVarP(&l.Transactions, "transactions", "t", 0, "transactions per client instead of a duration")
	fs.Var(seconds{&l.Warmup}, "warmup", "run this long before measuring each step")
	fs.VarP(scriptFlag{&w.Scripts, "b", ""}, "builtin", "b", "built-in script NAME[@WEIGHT]: tpcb-like, simple-update, select-only (default select-only)")
	fs.VarP(scriptFlag{&w.Scripts, "f", ""}, "file", "f", "script file FILE[@WEIGHT] in pgbench's language")
	fs.VarPF(scriptFlag{&w.Scripts, "b", "select-only"}, "select-only", "S", "same as -b select-only").NoOptDefVal = "true"
	fs.VarPF(scriptFlag{&w.Scripts, "b", "simple-update"}, "skip-some-updates", "N", "same as -b simple-update").NoOptDefVal = "true"
	fs.VarP(defines{w.Defines}, "define", "D", "script variable NAME=VALUE (repeatable)")
	fs.StringVarP(&w.Protocol, "protocol", "M", "", "how SQL is sent: simple, extended or prepared (default prepared, except a statement the server cannot prepare for its parameters' types, which runs simple, as pgbench's default; -M prepared keeps pgbench's -M prepared)")
	fs.StringVar(&w.Seed, "random-seed", "time", "seed of the scripts' random functions: time, rand, or an integer")
	fs.BoolVarP(&l.Connect, "connect", "C", false, "open a new connection for every transaction")
	fs.Float64VarP(&l.Rate, "rate", "R", 0, "target rate in transactions per second over all clients (Poisson schedule)")
	fs.VarP(millis{&l.LatencyLimit}, "latency-limit", "L", "count transactions over this latency as late (ms); with --rate, skip those already late")
	fs.IntVar(&l.MaxTries, "max-tries", 1, "tries per transaction on serialization failure or deadlock (0: unlimited, needs -T or -L)")
	fs.BoolVar(&l.ContinueOnError, "continue-on-error", false, "keep a client going after other SQL errors (pgbench aborts it)")
	fs.VarP(seconds{&f.progress}, "progress", "P", "print progress every interval (default 1 s on a terminal)")
	fs.BoolVarP(&l.PerCommand, "report-per-command", "r", false, "report each command's latency")
	fs.BoolVarP(&l.NoVacuum, "no-vacuum", "n", false, "do not vacuum pgbench's tables and truncate its history before each step")
	fs.StringVar(&f.out, "out", "", outHelp)
	fs.StringVar(&l.IO, "io", "auto", "client socket I/O: auto, raw or netpoll")
	fs.StringVar(&l.Colocate, "colocate", "auto", colocateHelp)
	l.ConnectConcurrency = load.DefaultConnectConcurrency
	fs.Var(positive{&l.ConnectConcurrency}, "connect-concurrency", "clients that open their connections at once before each step (refusals of a busy server or pooler are retried)")
	fs.BoolVar(&f.describe, "describe", false, "print the scripts as understood and run nothing")
	fs.BoolVar(&d.Create, "init", false, "(re)create pgbench's data on a --dsn target before running")
	fs.StringVar(&d.Setup, "setup", "", "SQL file run once on the target before the sweep (custom tables)")
	registerInit(fs, &d.Init, false)
	f.c.Probes = probeopt.RegisterFlags(fs)
	var names []string
	for _, b := range disturb.Builtins() {
		names = append(names, b.Name)
	}
	fs.StringArrayVar(&f.c.Disturb.Builtins, "disturb", nil, "in every step, run built-in disturbance NAME[=ARG]@START[-END][:SESSIONS] ("+
		strings.Join(names, ", ")+"); times count from the start of measuring (repeatable)")
	fs.StringArrayVar(&f.c.Disturb.Files, "disturb-file", nil, "in every step, run script FILE@START[-END][:SESSIONS] in a loop on sessions of its own (repeatable)")
}

// registerCluster registers the flags that shape ephemeral clusters.
func registerCluster(fs *pflag.FlagSet, o *common) {
	c := &o.Cluster
	c.Words = clusterWords()
	fs.StringVar(&c.PGBin, "pg-bin", "", "server binaries for the ephemeral cluster (default: $PGSCALE_PG_BIN, pg_config --bindir, newest /usr/lib/postgresql/*/bin, PATH)")
	fs.BoolVar(&c.Tmpfs, "tmpfs", false, "ephemeral cluster: data directory under /dev/shm")
	fs.BoolVar(&c.TCP, "tcp", false, "ephemeral cluster: also listen on 127.0.0.1 (free port), and connect clients over TCP")
	fs.BoolVar(&c.Keep, "keep", false, "ephemeral cluster: keep it running at the end and print how to connect")
	fs.StringVar(&c.OSUser, "os-user", "postgres", "ephemeral cluster: OS user that runs the server when pgscale runs as root")
	fs.StringArrayVar(&c.Settings, "set", nil, "ephemeral cluster: server setting name=value (repeatable)")
}

// clusterWords are the flags of the cluster options, for what the target
// layer says of them.
func clusterWords() target.Words {
	return target.Words{PGBin: "--pg-bin", TCP: "--tcp", Separate: "--separate-clusters", BuildCache: "--build-cache"}
}

// checkCluster finds, before anything starts, what the cluster flags
// cannot do with specs: an ephemeral cluster's flag with no ephemeral
// target, a malformed --set, --count instructions with a target whose
// server pgscale does not start. Its errors are usage errors.
func checkCluster(o target.ClusterOptions, specs []target.Spec) error {
	ephemeral := false
	for _, s := range specs {
		ephemeral = ephemeral || s.Ephemeral()
	}
	if !ephemeral && (o.PGBin != "" || o.Tmpfs || o.TCP || o.Keep || len(o.Settings) > 0) {
		if len(specs) == 1 && specs[0].Name == "" {
			return usage.Errorf("--pg-bin, --tmpfs, --tcp, --keep and --set apply to an ephemeral cluster, not to --dsn or a PGHOST-style environment")
		}
		return usage.Errorf("--pg-bin, --tmpfs, --tcp, --keep and --set apply to ephemeral targets (%s), and no target is one", target.EphemeralKinds())
	}
	for _, s := range o.Settings {
		if _, err := target.ParseSetting(s); err != nil {
			return usage.Errorf("--set: %v", err)
		}
	}
	if o.Valgrind != nil {
		for _, s := range specs {
			if !s.Counts() {
				return usage.Errorf("--count instructions runs the server under Valgrind, so it needs targets whose server pgscale starts (%s, or a pooler in front of one), not %s",
					target.CountingKinds(), s)
			}
		}
	}
	return nil
}

// findValgrind finds Valgrind for --count instructions, and says in its
// words when it cannot.
func findValgrind() (*target.Valgrind, error) {
	v, err := target.FindValgrind()
	var nv *target.NoValgrindError
	if errors.As(err, &nv) {
		return nil, usage.Errorf("--count instructions needs Valgrind (valgrind and vgdb): %s", nv.Why)
	}
	return v, err
}

// registerBuildCache registers --build-cache, where src: targets' builds
// are kept.
func registerBuildCache(fs *pflag.FlagSet, dir *string) {
	fs.StringVar(dir, "build-cache", "", "directory of the builds of src: targets and of extensions (ext=) (default: $PGSCALE_BUILD_CACHE, /var/cache/pgscale/builds for root, else ~/.cache/pgscale/builds)")
}

// registerInit registers pgbench -i's options; run takes them too, for the
// data it creates.
func registerInit(fs *pflag.FlagSet, o *workload.InitOptions, standalone bool) {
	fs.IntVarP(&o.Scale, "scale", "s", 1, "scale factor: 100000 accounts per unit")
	fs.IntVar(&o.Partitions, "partitions", 0, "partition pgbench_accounts into N partitions")
	fs.StringVar(&o.PartitionMethod, "partition-method", "range", "partition method: range or hash")
	fs.IntVarP(&o.Fillfactor, "fillfactor", "F", 100, "fillfactor of pgbench's tables")
	fs.BoolVar(&o.Unlogged, "unlogged-tables", false, "create unlogged tables")
	if standalone {
		fs.BoolVarP(&o.NoVacuum, "no-vacuum", "n", false, "skip the vacuum after loading")
		fs.BoolVar(&o.ForeignKeys, "foreign-keys", false, "create foreign keys between the tables")
	}
}

// optionError words an option of the workload or of its data that
// pgbench would refuse (workload.OptionError) in the flag that gives it,
// as pgbench names it; any other error is returned as it is.
func optionError(err error) error {
	var oe *workload.OptionError
	if !errors.As(err, &oe) {
		return err
	}
	switch oe.Field {
	case "Scale":
		return usage.Errorf("--scale %v", oe.Err)
	case "Fillfactor":
		return usage.Errorf("--fillfactor %v", oe.Err)
	case "Partitions":
		return usage.Errorf("--partitions %v", oe.Err)
	case "PartitionMethod":
		return usage.Errorf("--partition-method %v", oe.Err)
	case "Steps":
		return usage.Errorf("-I: %v", oe.Err)
	case "Protocol":
		return usage.Errorf("-M: %v", oe.Err)
	case "Seed":
		return usage.Errorf("--random-seed: %v", oe.Err)
	}
	return err
}

// common returns what the flags say, once parsed: defaults that depend on
// which flags were given are settled here. Events go to the live output.
func (f *loadFlags) common(cmd *cobra.Command, argv []string, stdout, stderr io.Writer) common {
	fs := cmd.Flags()
	c := f.c
	c.Argv, c.Version = argv, Version
	if !fs.Changed("progress") && isTerminal(stderr) {
		f.progress = time.Second
	}
	c.Load.Interval = f.progress
	if fs.Changed("transactions") && !fs.Changed("time") {
		c.Load.Duration = 0
	}
	c.Data.ScaleGiven = fs.Changed("scale")
	c.Observer = &report.Live{Out: stdout, Err: stderr, Progress: f.progress > 0}
	c.ShellOut, c.ShellErr = stdout, stderr // \shell's output is the tool's own, as in pgbench
	return c
}

// describe prints the workload's scripts as understood, and runs nothing.
func describe(w workload.Spec, stdout io.Writer) error {
	wl, err := workload.Load(w)
	if err != nil {
		return optionError(err)
	}
	for _, s := range wl.Scripts {
		s.Describe(stdout)
	}
	return nil
}

// outputFlags are the flags that also write a report to a file, one per
// format of the registry that the command can show (--markdown FILE...):
// a new format gets its flag from the registry.
type outputFlags struct {
	formats []report.Format
	paths   []string
}

func (o *outputFlags) register(fs *pflag.FlagSet, keep func(report.Format) bool) {
	for _, f := range report.Formats() {
		if f.Name == "text" || !keep(f) {
			continue
		}
		o.formats = append(o.formats, f)
		o.paths = append(o.paths, "")
	}
	for i, f := range o.formats {
		fs.StringVar(&o.paths[i], f.Name, "", "also write the report to FILE: "+f.Usage)
	}
}

// check refuses, before anything runs, a report destination that cannot
// be written: found at the end, the run's time would be lost with it.
func (o *outputFlags) check() error {
	for i, f := range o.formats {
		if o.paths[i] == "" {
			continue
		}
		if err := result.CheckWritable(o.paths[i]); err != nil {
			return usage.Errorf("--%s %s: %v; nothing was run (choose another file)", f.Name, o.paths[i], err)
		}
	}
	return nil
}

// write writes every report asked for; a failure leaves the others written.
func (o *outputFlags) write(d *report.Doc) error {
	var errs []error
	// Every format may link to what another writes beside it (the
	// comment to the HTML report's flame graphs).
	if d.Outputs == nil {
		d.Outputs = map[string]string{}
	}
	for i, f := range o.formats {
		if o.paths[i] != "" {
			d.Outputs[f.Name] = o.paths[i]
		}
	}
	for i, f := range o.formats {
		if o.paths[i] == "" {
			continue
		}
		var buf bytes.Buffer
		if err := f.Write(&buf, d); err != nil {
			errs = append(errs, fmt.Errorf("--%s: %w", f.Name, err))
			continue
		}
		if err := result.WriteFileAtomic(o.paths[i], buf.Bytes()); err != nil {
			errs = append(errs, fmt.Errorf("--%s: %w", f.Name, err))
		}
	}
	return errors.Join(errs...)
}

// scriptFlag appends to one list shared by -b, -f, -S and -N, so the scripts
// keep the order they were given in (pgbench's script numbers and the order
// its weighted choice walks). With fixed set, it is a boolean alias of
// "-b fixed".
type scriptFlag struct {
	list  *[]workload.ScriptArg
	kind  string
	fixed string
}

func (f scriptFlag) Set(v string) error {
	if f.fixed != "" {
		on, err := strconv.ParseBool(v)
		if err != nil {
			return err
		}
		if on {
			*f.list = append(*f.list, workload.ScriptArg{Kind: f.kind, Arg: f.fixed})
		}
		return nil
	}
	*f.list = append(*f.list, workload.ScriptArg{Kind: f.kind, Arg: v})
	return nil
}

func (f scriptFlag) String() string { return "" }

func (f scriptFlag) Type() string {
	if f.fixed != "" {
		return "bool"
	}
	return "string"
}
