package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/schedule/ab"
	"github.com/pgscale/pgscale/internal/schedule/bisect"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
)

func newBisectCmd(argv []string, stdout, stderr io.Writer) *cobra.Command {
	var f loadFlags
	b := bisectGiven{abGiven: abGiven{Slice: ab.Slice, Reshuffle: ab.Reshuffle}}
	var resume string
	var separateData bool
	cmd := &cobra.Command{
		Use:   "bisect --good REV --bad REV TARGETSPEC [flags]",
		Short: "Find the commit that changed a measure: build each midpoint, measure it interleaved against the ends, judge it",
		Long: `Find which commit between a good and a bad revision changed a measure.

TARGETSPEC is a target with a source written without a revision, which is
built at each commit (the build cache and ccache make a midpoint a short
build): src:PATH, settings:,ext=PATH, src:PATH@REV,ext=PATH, or a proxy:
definition whose build: has a source (fronting a server of its own).

It measures both ends first, in interleaved A/B rounds, and refuses in one
line when they do not differ by more than the smallest change of interest
(--min-change; instr/txn's own 0.1 %, else 1 %). Then it measures midpoints,
each interleaved against the two ends of the interval that holds the change
until the verdict's outcomes classify it (like the good end, like the bad
end, or unlike either: the change is split), in rounds until decided, at most
--rounds. A midpoint that cannot be classified in those rounds, or does not
build, is skipped, as git bisect skip does, and its neighbour measured
instead. It prints the first bad commit (or each part of a split change):
hash, subject, the change it carries with its interval, the counted why (the
functions, with --count instructions) and git diff --stat.

The measure: --measure (default instr/txn with --count instructions, tps
without; pooler-instr/txn or pooler-cpu/txn for a pooler). instr/txn is
counted under Valgrind and repeats to a few instructions: three rounds
decide a step.

The bisect log (bisect.json, each step's commit, measures and
classification, written after every step), bisect.txt, bisect.md (for an
issue comment) and bisect.html go to --out DIR (default
results/bisect-<UTC time>), each step's result files beside them.
--resume DIR continues an interrupted bisect from its log, with the command
line it records (or the one given): completed steps are not run again and
builds are found in the build cache.

Exit code 0 when the commit (or the commits) carrying the change were
named, 2 for bad usage or ends that do not differ, 4 when the ends could
not be told apart or the change could not be placed, 3 when the bisect was
interrupted or a step could not run (the log says what was done).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if resume != "" && len(args) == 0 {
				return resumeBisect(cmd, argv, resume, stdout, stderr)
			}
			if len(args) == 0 {
				return usage.Errorf("bisect: give the target to build at each commit: pgscale bisect --good REV --bad REV src:PATH")
			}
			fs := cmd.Flags()
			g := f.common(cmd, argv, stdout, stderr)
			t, err := bisectTarget(args[0])
			if err != nil {
				return err
			}
			b.Target, b.Given = t, args[0]
			b.Out, b.SliceGiven, b.ReshuffleGiven = f.out, fs.Changed("slice"), fs.Changed("reshuffle")
			g.Data.Separate = separateData
			if resume != "" {
				if f.out != "" && filepath.Clean(f.out) != filepath.Clean(resume) {
					return usage.Errorf("bisect: --resume %s and --out %s name two directories: the log to continue is in --resume's", resume, f.out)
				}
				b.Out, b.Resume = resume, true
			}
			if f.describe {
				return describe(g.Workload, stdout)
			}
			spec, err := bisectSpec(cmd.Context(), g, b)
			if err != nil {
				return err
			}
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			log, dir, runErr := bisect.Run(ctx, spec)
			stop()
			if log == nil {
				return runErr
			}
			return errors.Join(showBisect(log, dir, stdout), bisectError(log, runErr))
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringVar(&b.Good, "good", "", "the good end: a revision (commit, tag, branch) of the source's repository")
	fs.StringVar(&b.Bad, "bad", "", "the bad end: a revision after --good on its first-parent line")
	fs.StringVar(&b.Measure, "measure", "", "the measure judged: "+measureNames()+" (default instr/txn with --count instructions, else tps; for a pooler (pgbouncer:, proxy:) pooler-instr/txn or pooler-cpu/txn)")
	fs.Var(fraction{&b.MinChange}, "min-change", "smallest change of interest, e.g. 1% or 0.5%: the ends must differ by more (default: the measure's own, instr/txn 0.1%; else 1%)")
	fs.IntVar(&b.RoundsMax, "rounds", bisect.Rounds, "the most interleaved rounds a step takes to classify its commit (it stops once classified)")
	fs.StringVar(&resume, "resume", "", "continue the bisect whose log is in DIR (its own command line, or the one given): completed steps are not run again, builds come from the build cache")
	fs.Float64Var(&b.Confidence, "confidence", 0, "confidence level of the intervals and tests (default 0.95)")
	fs.StringVar(&b.OrderSeed, "order-seed", "time", "seed of the target order in each round: time, rand, or an integer")
	fs.Var(seconds{&b.Slice}, "slice", "interleave the commits in slices of this length inside every step (default 100ms); 0: whole-step turns")
	fs.Var(seconds{&b.Settle}, "slice-settle", "with --slice: the first part of every slice not counted (default a tenth of the slice)")
	fs.IntVar(&b.Reshuffle, "reshuffle", ab.Reshuffle, "re-create the ephemeral clusters every N rounds (with --count the default is 1)")
	fs.BoolVar(&separateData, "separate-data", false, separateDataUsage)
	f.register(fs, "directory of the bisect log, its reports and each step's result files (default results/bisect-<UTC time>)")
	registerCluster(fs, &f.c)
	registerBuildCache(fs, &f.c.Cluster.BuildCache)
	if fl := fs.Lookup("warmup"); fl != nil {
		f.c.Load.Warmup = ab.Warmup
		fl.DefValue = ab.Warmup.String()
	}
	if fl := fs.Lookup("client"); fl != nil {
		f.c.Load.Clients = []int{1}
		fl.DefValue, fl.Usage = "1", "the client count the measure is judged at (one)"
	}
	return cmd
}

// bisectGiven is what bisect gives, as given: the target parsed
// (bisectTarget), the ends, the measure, how each step's rounds run.
type bisectGiven struct {
	abGiven
	Target    target.Spec
	Given     string
	Good, Bad string
	Measure   string
	MinChange float64
	Resume    bool
}

// bisectSpec checks what bisect gives and makes its spec: how each step's
// A/B rounds run, settled and checked as ab's are (abSpec) — a step
// rounds until its commit is classified, at most --rounds —; the source
// to bisect; the commits from --good to --bad; the measure; the log to
// resume. Counting, a step leaves out the probes that would time
// Valgrind. Every mistake is a usage error, found before anything builds.
func bisectSpec(ctx context.Context, g common, b bisectGiven) (bisect.Spec, error) {
	switch {
	case b.Good == "" || b.Bad == "":
		return bisect.Spec{}, usage.Errorf("bisect: give both ends: --good REV --bad REV")
	case len(g.Load.Clients) != 1:
		first := 1
		if len(g.Load.Clients) > 0 {
			first = g.Load.Clients[0]
		}
		return bisect.Spec{}, usage.Errorf("bisect judges one step: give one client count (-c %d), not %d", first, len(g.Load.Clients))
	}
	if b.RoundsMax == 0 {
		b.RoundsMax = bisect.Rounds
	}
	b.Rounds, b.Decides = b.RoundsMax, true
	if b.Out == "" {
		b.Out = filepath.Join("results", "bisect-"+time.Now().UTC().Format("20060102T150405Z"))
	}
	t := b.Target
	// A step measures the commits' builds, two or three, of t.
	b.Targets = []target.Spec{t.Named("lo"), t.Named("mid"), t.Named("hi")}
	a, err := abSpec(g, b.abGiven)
	if err != nil {
		return bisect.Spec{}, err
	}
	a.Targets = nil // each step's
	if a.Counting() {
		// Under Valgrind, wait events, locks and statement times tell
		// Valgrind's pace, and a step judges only the counts: each of these
		// probes is one more backend started under callgrind in every step,
		// about a quarter of a step's time (53 s against 39 s here).
		for _, name := range []string{probeid.Waits.Name, probeid.Locks.Name, probeid.Statements.Name} {
			a.Probes.Set(name, false)
		}
	}
	rev, idx, err := target.BisectSource(t)
	if err != nil {
		return bisect.Spec{}, err
	}
	md, err := bisectMeasure(b.Measure, t.Fronts(), a.Counting())
	if err != nil {
		return bisect.Spec{}, err
	}
	commits, err := bisectCommits(ctx, rev.Source.Path, b.Good, b.Bad)
	if err != nil {
		return bisect.Spec{}, err
	}
	spec := bisect.Spec{AB: a, Target: t, Source: rev, Index: idx, Given: b.Given, Good: b.Good, Bad: b.Bad, Commits: commits,
		Measure: md, MinChange: b.MinChange, Out: b.Out, Continue: "pgscale bisect --resume " + b.Out}
	if spec.MinChange == 0 {
		spec.MinChange = md.MinChange
	}
	if spec.MinChange == 0 {
		spec.MinChange = bisect.MinChange
	}
	logPath := filepath.Join(b.Out, result.BisectFile)
	if b.Resume {
		if spec.Resume, err = result.ReadBisect(logPath); err != nil {
			return bisect.Spec{}, usage.Errorf("bisect --resume %s: %v", b.Out, err)
		}
		return spec, sameRange(spec.Resume, b.Out, commits, b.Good, b.Bad, md.Name)
	}
	if _, err := os.Stat(logPath); err == nil {
		return bisect.Spec{}, usage.Errorf("bisect: %s holds a bisect log already: continue it with --resume %s, or choose another --out", b.Out, b.Out)
	}
	return spec, nil
}

// sameRange checks that a log to resume is of the range and the measure
// the command names.
func sameRange(l *result.Bisect, dir string, commits []result.BisectCommit, good, bad, measure string) error {
	short := func(h string) string { return result.BisectCommit{Hash: h}.Short() }
	if len(l.Commits) != len(commits) || l.Commits[0].Hash != commits[0].Hash || l.Commits[len(l.Commits)-1].Hash != commits[len(commits)-1].Hash {
		return usage.Errorf("bisect --resume %s: its log is of %s..%s, the command names %s..%s (%s..%s): resume it with its own command (pgscale bisect --resume %s alone)",
			dir, short(l.Commits[0].Hash), short(l.Commits[len(l.Commits)-1].Hash), good, bad, short(commits[0].Hash), short(commits[len(commits)-1].Hash), dir)
	}
	if l.Measure != measure {
		return usage.Errorf("bisect --resume %s: its log judges %s, the command %s", dir, l.Measure, measure)
	}
	return nil
}

// bisectTarget reads bisect's TARGETSPEC: a target without a name, a
// pooler or proxy fronting a server of its own.
func bisectTarget(given string) (target.Spec, error) {
	if strings.TrimSpace(given) == "" {
		return target.Spec{}, usage.Errorf("bisect: give the target to build at each commit: src:PATH, settings:,ext=PATH, or proxy:FILE.yaml with a build: source")
	}
	t, err := target.ParseUnnamed(given)
	if err != nil {
		return target.Spec{}, usage.Wrap(fmt.Errorf("bisect: %w", err))
	}
	if target.HasFrontName(t) {
		return target.Spec{}, usage.Errorf("bisect: %s names another target to front (of=NAME); bisect runs one target: give it a server of its own, of='SPEC' (default of='settings:')", given)
	}
	return target.Fronted(t), nil
}

// resumeBisect runs again the command line a bisect's log records, to
// continue it.
func resumeBisect(cmd *cobra.Command, argv []string, dir string, stdout, stderr io.Writer) error {
	log, err := result.ReadBisect(filepath.Join(dir, result.BisectFile))
	if err != nil {
		return usage.Errorf("bisect --resume %s: %v", dir, err)
	}
	if len(log.Argv) < 2 || log.Argv[1] != "bisect" {
		return usage.Errorf("bisect --resume %s: its log records no bisect command line; give it: pgscale bisect --resume %s --good REV --bad REV TARGETSPEC ...", dir, dir)
	}
	args := []string{"bisect"}
	rest := log.Argv[2:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		switch {
		case a == "--resume" || a == "--out":
			i++ // its value
		case strings.HasPrefix(a, "--resume=") || strings.HasPrefix(a, "--out="):
		default:
			args = append(args, a)
		}
	}
	args = append(args, "--resume", dir)
	fmt.Fprintf(stderr, "bisect: resuming %s: pgscale %s\n", dir, strings.Join(args, " "))
	root := newRoot(argv, stdout, stderr)
	root.SetArgs(args)
	return root.ExecuteContext(cmd.Context())
}

// showBisect prints the bisect's text report, and writes it beside the
// log in every format of the registry that shows a bisect (bisect.txt,
// bisect.md, bisect.html).
func showBisect(log *result.Bisect, dir string, stdout io.Writer) error {
	fmt.Fprintln(stdout)
	d := &report.Doc{Bisect: log}
	text, _ := report.Lookup("text")
	if err := text.Write(stdout, d); err != nil {
		return err
	}
	var errs []error
	var names []string
	for _, f := range report.Formats() {
		if !f.Shows(report.KindBisect) {
			continue
		}
		name := "bisect." + f.Ext
		names = append(names, name)
		var buf bytes.Buffer
		if err := f.Write(&buf, d); err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, result.WriteFileAtomic(filepath.Join(dir, name), buf.Bytes()))
	}
	fmt.Fprintf(stdout, "\nbisect log: %s (reports %s beside it)\n", filepath.Join(dir, result.BisectFile), strings.Join(names, ", "))
	return errors.Join(errs...)
}

// bisectError is the error that sets the bisect's exit code: none when it
// named the commits, a usage error when the ends do not differ, an
// inconclusive one when they could not be told apart or the change could
// not be placed, and the run's error when it stopped early.
func bisectError(log *result.Bisect, runErr error) error {
	var ee *bisect.EndsError
	switch {
	case errors.As(runErr, &ee) && ee.Outcome == result.BisectNoChange:
		return usage.Wrap(endsError(runErr, ee, " (--min-change sets it)"))
	case errors.As(runErr, &ee):
		return &InconclusiveError{Msg: endsError(runErr, ee, "; more rounds (a larger --rounds) or a counted measure (--count instructions) would decide it").Error()}
	case runErr != nil:
		return runErr
	case log.Outcome == result.BisectUndetermined:
		return &InconclusiveError{Msg: "bisect: " + report.BisectHeadline(log)}
	}
	return nil
}

// endsError is the bisect's refusal of its ends, ee, with what would
// decide them said in the flags' words (remedy); runErr is ee, or ee
// joined with why its log could not be written after it, which stays.
func endsError(runErr error, ee *bisect.EndsError, remedy string) error {
	errs := []error{fmt.Errorf("%w%s", ee, remedy)}
	if j, ok := runErr.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if e != error(ee) {
				errs = append(errs, e)
			}
		}
	}
	return errors.Join(errs...)
}

// separateDataUsage is --separate-data's help, the same for ab and bisect.
const separateDataUsage = "with --count: every target makes its own data (init, set-up) in every cluster layout, instead of running on a byte-identical copy of the baseline's; for a change in how the data is built (an index's construction), which a copy of the baseline's data does not show"

// bisectMeasure is the measure a bisect judges: name, or by default instr/txn
// when counting instructions (pooler-instr/txn for a pooler: pgbouncer:
// or proxy:), else tps (pooler-cpu/txn for one). A measure that is not
// one, or that counting does not go with (or needs), is a usage error.
func bisectMeasure(name string, proxy, counting bool) (compare.MeasureDef, error) {
	if name == "" {
		switch {
		case counting && proxy:
			name = "pooler-instr/txn"
		case counting:
			name = "instr/txn"
		case proxy:
			name = "pooler-cpu/txn"
		default:
			name = "tps"
		}
	}
	var names []string
	for _, md := range compare.Measures() {
		names = append(names, md.Name)
		if md.Name != name {
			continue
		}
		switch {
		case md.Counted && !counting:
			return md, usage.Errorf("--measure %s is counted under Valgrind: add --count instructions", name)
		case !md.Counted && counting:
			return md, usage.Errorf("--measure %s is a time, which Valgrind slows out of all meaning: with --count instructions give a counted measure (instr/txn, pooler-instr/txn, syscalls/txn...)", name)
		}
		return md, nil
	}
	return compare.MeasureDef{}, usage.Errorf("--measure %q: no such measure (want %s)", name, strings.Join(names, ", "))
}
