package cli

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/report/remedy"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/schedule/ab"
	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
)

func newABCmd(argv []string, stdout, stderr io.Writer) *cobra.Command {
	var f loadFlags
	var rec recordFlags
	a := abGiven{Rounds: ab.Rounds, Slice: ab.Slice, Reshuffle: ab.Reshuffle}
	rounds := compare.Rounds{N: ab.Rounds}
	var inconclusive string
	var separate, separateData bool
	var ag agentFlags
	var targets targetFlags
	cmd := &cobra.Command{
		Use:   "ab --target NAME=SPEC --target NAME=SPEC [flags]",
		Short: "Interleaved A/B rounds over several targets, then change ± uncertainty, bounds and a verdict",
		Long: `Run the same workload on two or more targets in interleaved rounds and compare
every candidate with the baseline, step by step and measure by measure.

A target is one of
` + target.Help(clusterWords()) + `

The first target is the baseline unless --baseline names another.
Ephemeral targets get identical data (same init, same seed).

A settings: target whose settings, and the baseline's, can all be set per
session (pg_settings context user or superuser: work_mem, log_statement,
plan_cache_mode, jit...) runs on the baseline's cluster: its clients
connect there with its settings as connection options, so the two differ
in nothing else (--separate-clusters: a cluster of its own). Targets that
need servers of their own (bin:, settings that need a restart or reload)
get their clusters re-created every --reshuffle rounds (default 2): new
data directories, shared memory and sockets, the data made again, so that
the fixed difference between two clusters is drawn anew and the
comparison, which then rests on the layouts rather than the rounds, covers
it.

In each round every step runs all targets at once: every client holds a
connection to each target and all clients switch target together every
--slice (default 0.1 s), in cycles of one slice per target in a random order
(seeded and recorded); the first --slice-settle of every slice (default a
tenth) is not counted, nor is the --warmup (default 1 s) that starts every
step. Each target gets -T of measured time per step and round. With
--slice 0 (and by default with -t, -C or disturbances) each round instead
runs every target through the whole sweep in turn, in a random order per
round; only then do the server-side probes run, as each watches one server
for a whole step. Per measure and step the change is the
geometric mean of the per-round ratios candidate/baseline, with a 95%
interval, tested with a paired t-test on the log ratios and Holm-corrected
over all measures. Each bounded measure passes when its interval lies on
the good side of its --bound, fails when it is past the bound by both the
t-test and the signed-rank test against it after Holm's correction over
the bounded measures (6 rounds at least), and is inconclusive otherwise,
with the rounds that would decide it at the spread measured.

--rounds auto[:MAX|DURATION] (the default with --bound: auto:30) rounds
until decided: after every round it compares what it has, at a part of
alpha spent per look (docs/statistics.md), and stops once every bounded
measure passed or failed, or after MAX rounds (or what fits in DURATION).

With --agents N --coordinator DSN the clients run on pgscale agent processes
(docs/agents.md) in whole-step turns: each target's step goes to the agents
in its turn, an ephemeral target listening on 127.0.0.1 too; --slice is
refused, as every client switching target together every slice is not what
agents on other machines can do. The probes, disturbances and diagnosis stay
here.

--calibrate runs the baseline against itself instead (an A/A run; for an
ephemeral baseline on a second cluster, reshuffled, default 12 rounds; else
6) and prints the noise of each measure, the spread between cluster
layouts, and the rounds (and layouts) an A/B run needs to detect a 2% and a
5% change.

One result file per target is written to --out DIR, with the bounds; pgscale
compare and pgscale report pair them again. Exit code 0 when every bounded
measure passed (or none was bounded), 1 when one failed, 4 when one is
inconclusive (--inconclusive pass|fail maps it), 2 for bad usage, 3 when a
round could not complete (the rounds done are saved and compared, marked
incomplete).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fs := cmd.Flags()
			g := f.common(cmd, argv, stdout, stderr)
			a.Out, a.SliceGiven, a.ReshuffleGiven = f.out, fs.Changed("slice"), fs.Changed("reshuffle")
			g.Cluster.Separate = separate
			g.Data.Separate = separateData
			a.Agents = ag.agents(fs)
			// Counted and given no bounds: decide as a simulation-mode
			// CI does, on the count at one client (abSpec fills the
			// bounds in, knowing whether a pooler is counted).
			a.CountedDefaults = len(a.Bounds) == 0 && g.Probes.On(probeid.Instructions.Name) && !a.Calibrate
			switch {
			case a.Calibrate && !fs.Changed("rounds"):
				a.Rounds = 0 // the calibration's default, which depends on its clusters
			case !fs.Changed("rounds") && a.CountedDefaults:
				// Counts decide in a few layouts; more would only
				// chase the steps left to the spread.
				a.RoundsMax = compare.CountedAutoMax
			case !fs.Changed("rounds") && len(a.Bounds) > 0:
				// Bounds to decide: round until they are.
				a.RoundsMax = compare.DefaultAutoMax
			case rounds.Auto:
				a.RoundsMax, a.Budget = rounds.Max, rounds.Budget
			default:
				a.Rounds = rounds.N
			}
			if f.describe {
				return describe(g.Workload, stdout)
			}
			need := 2
			if a.Calibrate {
				need = 1
			}
			var err error
			if a.Targets, err = targets.parse(need); err != nil {
				return err
			}
			if err := rec.check(specNames(a.Targets)); err != nil {
				return err
			}
			if err := f.outputs.check(); err != nil {
				return err
			}
			spec, err := abSpec(g, a)
			if err != nil {
				return err
			}
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			files, dir, runErr := ab.Run(ctx, spec)
			stop() // Ctrl-C from here on stops pgscale, as usual
			if files == nil {
				return runErr
			}
			verdict, err := showRun(files, dir, stdout, &f.outputs, inconclusive)
			status := ""
			if runErr != nil {
				status = fmt.Sprintf(" (incomplete: %d of %d rounds done)", files[0].AB.RoundsDone, files[0].AB.Rounds)
			}
			var recErr error
			if dir != "" { // else none was written, as runErr says
				fmt.Fprintf(stdout, "\nresults: %s, one file per target%s\n", dir, status)
				var out []written
				for i, f := range files {
					out = append(out, written{path: filepath.Join(dir, f.AB.Targets[i].File), file: f})
				}
				recErr = rec.record(cmd.Context(), stdout, out)
			}
			if runErr != nil || err != nil {
				return errors.Join(err, runErr, recErr)
			}
			return errors.Join(verdict, recErr)
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	targets.register(fs, target.Forms()+" (repeat for each target)", "name of the target the others are compared with (default: the first)")
	fs.Var(roundsFlag{&rounds}, "rounds", "interleaved rounds, each running every target through the whole sweep: N, or auto[:MAX|DURATION] to round until every bounded measure is decided (default 10, or auto:30 with --bound)")
	fs.StringVar(&a.OrderSeed, "order-seed", "time", "seed of the target order in each round: time, rand, or an integer")
	fs.Var(seconds{&a.Slice}, "slice", "interleave the targets in slices of this length inside every step, all clients switching target together (default 100ms); 0: whole-step turns, each target through the whole sweep in turn")
	fs.Var(seconds{&a.Settle}, "slice-settle", "with --slice: the first part of every slice not counted, as transactions in flight at the switch finish (default a tenth of the slice)")
	fs.IntVar(&a.Reshuffle, "reshuffle", ab.Reshuffle, "re-create the ephemeral clusters every N rounds when the targets run on servers of their own (a new layout each time; the comparison rests on the layouts); 0: keep them for the whole run; with --count the default is 1, a new layout every round")
	fs.BoolVar(&separate, "separate-clusters", false, "give every settings: target a cluster of its own, even when its settings could be set per session on the baseline's")
	fs.BoolVar(&separateData, "separate-data", false, separateDataUsage)
	fs.BoolVar(&a.Calibrate, "calibrate", false, "run the baseline against itself (A/A) and print each measure's noise, the spread between cluster layouts, and the rounds needed to detect a 2% and a 5% change")
	registerBounds(fs, &a.Bounds, &a.Confidence)
	registerInconclusive(fs, &inconclusive)
	f.outputs.register(fs, func(rf report.Format) bool { return rf.Shows(report.KindComparison) })
	f.register(fs, "directory for the result files, one per target (default results/ab-<workload>-<UTC time>)")
	registerCluster(fs, &f.c)
	registerBuildCache(fs, &f.c.Cluster.BuildCache)
	rec.register(fs, true)
	if fl := fs.Lookup("warmup"); fl != nil {
		f.c.Load.Warmup = ab.Warmup
		fl.DefValue = ab.Warmup.String()
		fl.Usage = "run this long before measuring each step of each turn (not counted)"
	}
	ag.register(fs, false)
	return cmd
}

// targetFlags are --target and --baseline: the targets as given, parsed
// once (parse) into specs, the baseline first.
type targetFlags struct {
	values   []string
	baseline string
}

// register registers --target and --baseline with their help.
func (f *targetFlags) register(fs *pflag.FlagSet, targetHelp, baselineHelp string) {
	fs.StringArrayVar(&f.values, "target", nil, targetHelp)
	fs.StringVar(&f.baseline, "baseline", "", baselineHelp)
}

// parse reads the targets, the baseline first; fewer than need is a
// usage error.
func (f *targetFlags) parse(need int) ([]target.Spec, error) {
	specs, err := target.ParseSpecs(f.values, f.baseline, need)
	if err != nil {
		return nil, usage.Wrap(targetsError(err))
	}
	return specs, nil
}

// targetsError words the targets' errors in the flags that give them:
// --target's specs, how many targets, --baseline's name.
func targetsError(err error) error {
	var few *target.TooFewTargetsError
	var base *target.BaselineError
	switch {
	case errors.As(err, &few) && few.AtLeast == 1:
		return fmt.Errorf("name a target with --target %s", target.Forms())
	case errors.As(err, &few):
		return fmt.Errorf("an A/B run needs at least %d targets (--target NAME=SPEC, repeated); got %d", few.AtLeast, few.Got)
	case errors.As(err, &base):
		base.Word = "--baseline"
		return err
	}
	return specError(err, "--target")
}

// specError words a target spec's error (*target.SpecError) in word, what
// gave the spec; a named target's spec inside an unnamed one is said as
// --target gives it.
func specError(err error, word string) error {
	var se *target.SpecError
	if errors.As(err, &se) {
		se.Word = word
	}
	return err
}

// specNames returns the targets' names.
func specNames(specs []target.Spec) []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.Name
	}
	return out
}

// targetNames returns the names of NAME=... values.
func targetNames(values []string) []string {
	var out []string
	for _, s := range values {
		name, _, _ := strings.Cut(s, "=")
		out = append(out, strings.TrimSpace(name))
	}
	return out
}

// boundUsage is --bound's help.
func boundUsage() string {
	return "largest change allowed in the bad direction: MEASURE=±N% or MEASURE@c=N=±N% (tps=-3%, p99=+5%, tps@c=16=-5%), each optionally followed by \"if decidable\" (judged only where this runner's spread can decide it); measures: " +
		measureNames() + " (repeatable, or comma-separated)"
}

// registerVerdict registers the flags that judge a comparison, the bounds
// as given (history check reads micro-benchmark bounds among them).
func registerVerdict(fs *pflag.FlagSet, bounds *[]string, confidence *float64) {
	fs.StringArrayVar(bounds, "bound", nil, boundUsage())
	fs.Float64Var(confidence, "confidence", stats.DefaultConfidence, "confidence level of intervals and tests (Holm-corrected over all measures)")
}

// registerBounds registers the flags that judge a comparison, each bound
// parsed as the flag is read.
func registerBounds(fs *pflag.FlagSet, bounds *stats.Bounds, confidence *float64) {
	fs.Var(boundsFlag{bounds}, "bound", boundUsage())
	fs.Float64Var(confidence, "confidence", stats.DefaultConfidence, "confidence level of intervals and tests (Holm-corrected over all measures)")
}

func measureNames() string {
	var ns []string
	for _, m := range compare.Measures() {
		ns = append(ns, m.Name)
	}
	return strings.Join(ns, ", ")
}

// showRun prints on stdout the comparison the files of one A/B run record
// (or the noise of a calibration run), written into dir, and writes the
// reports asked for. It returns the verdict's error (a regression) apart
// from a failure to show.
func showRun(files []*result.File, dir string, stdout io.Writer, outputs *outputFlags, inconclusive string) (verdict, err error) {
	inputs := make([]compare.Input, len(files))
	for i, f := range files {
		inputs[i] = compare.Input{Name: f.Target.Name, File: f}
		if dir != "" {
			inputs[i].Path = filepath.Join(dir, f.AB.Targets[i].File)
		}
	}
	if files[0].AB.RoundsDone == 0 {
		fmt.Fprintln(stdout, "no round completed: nothing to compare")
		return nil, nil
	}
	cmp, noise, err := compare.OfRun(inputs, remedy.Say)
	if err != nil {
		return nil, usage.Wrap(err)
	}
	a := compare.Analyze(inputs, compare.Compared{Comparison: cmp, Noise: noise})
	d := &report.Doc{Analysis: a, Color: colorTerminal(stdout)}
	return verdictError(cmp, inconclusive), show(d, stdout, outputs)
}

// show prints the document as text on stdout and writes the reports asked
// for.
func show(d *report.Doc, stdout io.Writer, outputs *outputFlags) error {
	text, _ := report.Lookup("text")
	err := text.Write(stdout, d)
	d.Color = false
	return errors.Join(err, outputs.write(d))
}

// verdictError turns a comparison's outcome into the error that sets the
// exit code: a RegressionError when a measure failed, an
// InconclusiveError when one could not be decided (or, as --inconclusive
// maps it, nothing or a RegressionError).
func verdictError(c *compare.Comparison, inconclusive string) error {
	if c == nil {
		return nil
	}
	var failing, undecided []string
	for i, v := range c.Verdicts {
		switch v.Outcome {
		case stats.Fail:
			failing = append(failing, c.Candidates[i])
		case stats.Inconclusive:
			undecided = append(undecided, c.Candidates[i])
		}
	}
	return outcomeError(c.Outcome(), inconclusive,
		fmt.Sprintf("%s: measures past their bounds", strings.Join(failing, ", ")),
		fmt.Sprintf("%s: bounded measures undecided", strings.Join(undecided, ", ")))
}

// outcomeError is the error of a verdict's outcome, with its words;
// inconclusive says how to map an inconclusive one (--inconclusive).
func outcomeError(o stats.Outcome, inconclusive, failed, undecided string) error {
	switch {
	case o == stats.Fail:
		return &RegressionError{Msg: failed}
	case o != stats.Inconclusive || inconclusive == "pass":
		return nil
	case inconclusive == "fail":
		return &RegressionError{Msg: undecided + " (--inconclusive fail)"}
	}
	return &InconclusiveError{Msg: undecided}
}

// registerInconclusive registers --inconclusive.
func registerInconclusive(fs *pflag.FlagSet, mode *string) {
	*mode = "inconclusive"
	fs.Var(inconclusiveFlag{mode}, "inconclusive", "what an inconclusive verdict exits with: inconclusive (4), pass (0) or fail (1)")
}
