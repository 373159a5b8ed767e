package cli

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/micro"
	"github.com/pgscale/pgscale/internal/probeopt"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/schedule/microbench"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
)

func newMicroCmd(stdout, stderr io.Writer) *cobra.Command {
	var targets, bounds, groups []string
	var command, format, output, out, inconclusive, groupUnit string
	var confidence float64
	var timeout time.Duration
	var keep bool
	rounds := compare.Rounds{N: 10}
	var outputs outputFlags
	var rec recordFlags
	var count probeopt.Count
	cmd := &cobra.Command{
		Use:   "micro --target NAME=PATH[@REV] --target NAME=PATH[@REV] --cmd COMMAND [flags] | micro RUN.json",
		Short: "Run a project's own micro-benchmarks in each target's tree, interleaved, and judge every benchmark",
		Long: `Run a benchmark command in each target's tree in interleaved rounds (A B,
then B A, ...), read its output in a known format (--format), and judge each
benchmark's measures as the macro measures are judged: the change ± its
uncertainty paired by round, Holm's correction over all the benchmarks, and
against a bound pass, fail or inconclusive.

A target is NAME=PATH (a directory as it is) or NAME=PATH@REV[+PATCH...] (a
git repository's tree at a revision, exported to a temporary directory); the
first is the baseline. The command runs there under sh -c, with
$PGSCALE_MICRO_TARGET set to the target's name.

Bounds name a benchmark or a pattern (* any characters): --bound
'micro:BenchmarkSum/*=+5%' bounds the time per iteration of every matched
benchmark, 'micro:BenchmarkSum@B/op=+0%' another of its measures. Groups
(--group, a name prefix or a pattern; by default each benchmark family) are
summed up: "BenchmarkSum: 3 of 3 slower, median +9.8% ± 1.2%".

The rounds are written to a run file (--out); pgscale micro RUN.json judges
one again.

With --count instructions each benchmark is counted instead of timed: run
alone under Valgrind's callgrind for N and for 2N iterations (N from a native
calibration run), its instr/op is the difference of the two counts divided
by N, what one more iteration executes, whatever the machine's load. The
command runs its benchmark program through $` + microbench.ExecVar + ` (empty when not
counting): go test -exec "$` + microbench.ExecVar + `" ..., or $` + microbench.ExecVar + ` ./bench ...
Formats go and gbench; Google Benchmark before 1.8, which chooses its
iterations by time, runs for a time and its loop alone is counted, divided
by the iterations it reports. Exit code 0 when every bounded benchmark passed (or none was
bounded), 1 when one failed, 4 when one is inconclusive, 2 for bad usage, 3
when a command failed or printed nothing the format reads (the rounds before
it are judged and written).

With --store (or $PGSCALE_STORE) the run file is recorded in the history
store, each target's measures as series of their own ("micro:PROJECT", the
tree's directory name; each benchmark's measure "micro:NAME" or
"micro:NAME@UNIT"), under --label NAME=LABEL (default the target's name)
and the commit its tree was at: pgscale history check finds their change
points.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := outputs.check(); err != nil {
				return err
			}
			mb, err := micro.ParseBounds(bounds)
			if err != nil {
				return usage.Wrap(err)
			}
			opt := micro.Options{Bounds: mb, Groups: groups, GroupUnit: groupUnit, Confidence: confidence}
			var run *micro.Run
			if len(args) == 1 {
				if run, err = micro.ReadRun(args[0]); err != nil {
					return usage.Wrap(err)
				}
				var names []string
				for _, t := range run.Targets {
					names = append(names, t.Name)
				}
				if err := rec.check(names); err != nil {
					return err
				}
				out = args[0]
			} else {
				if err := rec.check(targetNames(targets)); err != nil {
					return err
				}
				spec, err := microSpec(microFlags{targets: targets, command: command, format: format, output: output, count: count})
				if err != nil {
					return err
				}
				spec.Rounds, spec.Options, spec.Timeout, spec.Keep = rounds, opt, timeout, keep
				spec.Notices = stderr
				if !cmd.Flags().Changed("rounds") && len(mb) > 0 {
					spec.Rounds = compare.Rounds{Auto: true, Max: compare.DefaultAutoMax}
				}
				ctx, stop := interruptible(cmd.Context())
				defer stop()
				if run, err = microbench.Run(ctx, spec); err != nil {
					return err
				}
				if out == "" {
					out = filepath.Join("results", "micro-"+run.Started.Format("20060102T150405Z")+".json")
				}
				if err := run.Write(out); err != nil {
					return err
				}
				fmt.Fprintf(stderr, "micro-benchmark run: %s\n", out)
			}
			a, err := micro.Analyze(run, opt)
			if err != nil {
				return usage.Wrap(err)
			}
			d := report.NewDoc(&compare.Analysis{Micro: []*micro.Analysis{a}})
			d.Color = isTerminal(stdout)
			text, _ := report.Lookup("text")
			werr := text.Write(stdout, d)
			d.Color = false
			werr = errors.Join(werr, outputs.write(d))
			recErr := rec.record(cmd.Context(), stdout, []written{{path: out, micro: true}})
			if werr != nil {
				return errors.Join(werr, recErr)
			}
			if !a.Complete() {
				return errors.Join(fmt.Errorf("micro-benchmarks incomplete: %s", strings.Join(a.Problems, "; ")), recErr)
			}
			return errors.Join(outcomeError(a.Outcome(), inconclusive, "micro-benchmarks past their bounds", "micro-benchmarks undecided"), recErr)
		},
	}
	fs := cmd.Flags()
	fs.StringArrayVar(&targets, "target", nil, "a tree to run the command in, NAME=PATH or NAME=PATH@REV[+PATCH...], the baseline first (repeatable)")
	fs.StringVar(&command, "cmd", "", "the benchmark command, run with sh -c in each tree")
	fs.StringVar(&format, "format", "go", "the command's output format: "+microFormatNames())
	fs.StringVar(&output, "output", "", "the file the command writes its results to, or the directory for criterion (target/criterion), relative to its tree (default: its standard output)")
	fs.Var(roundsFlag{&rounds}, "rounds", "rounds: a number, or auto[:MAX|DURATION] to round until every bounded benchmark is decided (default 10, auto:30 with --bound)")
	fs.StringArrayVar(&bounds, "bound", nil, "largest change allowed in the bad direction: micro:NAME=±N%, micro:PATTERN=±N% (* any characters), micro:NAME@UNIT=±N% (repeatable, or comma-separated)")
	fs.StringArrayVar(&groups, "group", nil, "a group of benchmarks to sum up, by name prefix or pattern (repeatable; default: each benchmark family)")
	fs.StringVar(&groupUnit, "group-unit", "", "the measure the groups sum up (default: each benchmark's time)")
	fs.Float64Var(&confidence, "confidence", 0.95, "confidence level of intervals and tests (Holm-corrected over all measures)")
	fs.DurationVar(&timeout, "timeout", 0, "end a run of the command that takes longer (0: none)")
	fs.BoolVar(&keep, "keep", false, "keep the trees exported for revisions")
	fs.Var(probeopt.CountInto(&count), "count", "instructions[,cache]: count each benchmark's instructions per iteration (instr/op) under Valgrind's callgrind instead of timing it, with cache also the simulated caches' misses and estimated cycles; the command runs its benchmark program through $"+microbench.ExecVar+" (go test -exec \"$"+microbench.ExecVar+"\")")
	fs.StringVar(&out, "out", "", "the run file (default results/micro-TIME.json)")
	registerInconclusive(fs, &inconclusive)
	rec.register(fs, true)
	fs.Lookup("commit").Usage = "commit [NAME=]SHA target NAME measured, or every target without one (default: the commit the target's tree was at, PATH@REV; else the CI environment's commit; repeatable)"
	outputs.register(fs, func(f report.Format) bool { return f.Shows(report.KindMicro) })
	return cmd
}

// microFormatNames lists the micro-benchmark formats for the help text.
func microFormatNames() string {
	var ns []string
	for _, f := range micro.Formats() {
		ns = append(ns, f.Name+" ("+f.Help("--output")+")")
	}
	return strings.Join(ns, ", ")
}

// microFlags are what micro's flags give of the run, as given.
type microFlags struct {
	targets                 []string
	command, format, output string
	count                   probeopt.Count
}

// microSpec checks what micro's flags give and makes the run's spec:
// the format looked up, the trees read, Valgrind found when counting.
func microSpec(f microFlags) (microbench.Spec, error) {
	format, err := micro.LookupFormat(f.format)
	if err != nil {
		return microbench.Spec{}, usage.Wrap(err)
	}
	switch {
	case len(f.targets) < 2:
		return microbench.Spec{}, usage.Errorf("micro needs two targets or more, the baseline first (--target base=PATH@REV --target cand=PATH@REV)")
	case strings.TrimSpace(f.command) == "":
		return microbench.Spec{}, usage.Errorf("micro needs the benchmark command (--cmd 'go test -run ^$ -bench .')")
	case format.Tree != nil && f.output == "":
		return microbench.Spec{}, usage.Errorf("the %s format reads the files the command writes under a directory: name it with --output (%s)", format.Name, format.Help("--output"))
	}
	spec := microbench.Spec{Command: f.command, Format: format, Output: f.output, Count: f.count}
	if f.count.Instructions {
		if err := microbench.Countable(f.command, format); err != nil {
			return microbench.Spec{}, usage.Errorf("--count: %v", err)
		}
		if spec.Valgrind, err = findValgrind(); err != nil {
			return microbench.Spec{}, err
		}
	}
	for _, t := range f.targets {
		name, path, ok := strings.Cut(t, "=")
		if !ok || name == "" || path == "" {
			return microbench.Spec{}, usage.Errorf("--target %q: want NAME=PATH or NAME=PATH@REV", t)
		}
		src, err := target.Tree(path)
		if err != nil {
			return microbench.Spec{}, usage.Errorf("target %s: %v", name, err)
		}
		spec.Targets = append(spec.Targets, microbench.Target{Name: name, Spec: path, Source: src})
	}
	return spec, nil
}
