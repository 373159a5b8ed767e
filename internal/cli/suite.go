package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/micro"
	"github.com/pgscale/pgscale/internal/probeopt"
	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/report/remedy"
	"github.com/pgscale/pgscale/internal/schedule/cells"
	"github.com/pgscale/pgscale/internal/secret"
	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/suite"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
)

func newSuiteCmd(argv []string, stdout, stderr io.Writer) *cobra.Command {
	var (
		preset, only, resume    string
		count                   probeopt.Count
		transactions            int
		quick, showOnly, dryRun bool
		profile                 bool
		params, axes            []string
		outputs                 outputFlags
		c                       common
		rec                     recordFlags
		ag                      agentFlags
		rounds                  compare.Rounds
		inconclusive            string
		targets                 targetFlags
	)
	var g suiteGiven
	cmd := &cobra.Command{
		Use:   "suite FILE | --preset NAME",
		Short: "Run a suite: a matrix of cells, each an interleaved A/B over the same targets; one bundle, one verdict",
		Long: `Run a suite file (YAML) or a preset: every cell of its matrix — its named
parameters crossed — as an interleaved A/B over the targets (with one target, a
sweep), the setup SQL and scripts templated by the cell's parameters ({{name}};
each parameter is also a script variable :name). The result files go to one
bundle directory with an index; an interrupted suite keeps every finished cell,
and --resume DIR runs only what is missing. The verdict judges every measure of
every cell together (one Holm correction), against the suite's bounds.

Presets: ` + strings.Join(suite.Presets(), ", ") + ` (--show prints one, --quick runs its
quick variant). Exit codes as ab's: 0 every bounded measure passed (or none was
bounded), 1 one failed (or a decision rule did), 4 one is inconclusive
(--inconclusive pass|fail maps it), 2 bad usage or a bad suite file
(file:line), 3 a cell could not complete.`,
		Args: func(_ *cobra.Command, args []string) error {
			if (len(args) == 1) == (preset != "") || len(args) > 1 {
				return usage.Errorf("suite needs a suite file or --preset NAME (one of them)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if showOnly {
				return showSuite(args, preset, stdout)
			}
			s, err := readSuite(args, preset, quick)
			if err != nil {
				return err
			}
			var given []string
			for _, p := range params {
				name, value, ok := strings.Cut(p, "=")
				if !ok {
					return usage.Errorf("--param %q is not NAME=VALUE", p)
				}
				if err := s.SetParam(name, value); err != nil {
					return err
				}
				given = append(given, name)
			}
			if cmd.Flags().Changed("count") {
				s.Count = count
			}
			if profile {
				if err := s.SetProfile(); err != nil {
					return err
				}
			}
			if transactions > 0 {
				s.Transactions, s.Duration = transactions, 0
			}
			if cmd.Flags().Changed("rounds") {
				s.SetRounds(rounds)
			}
			for _, m := range axes {
				name, values, ok := strings.Cut(m, "=")
				if !ok {
					return usage.Errorf("--matrix %q is not NAME=V1,V2,...", m)
				}
				if err := s.SetAxis(strings.TrimSpace(name), splitList(values)); err != nil {
					return err
				}
			}
			for _, n := range s.Unmatched(axes) {
				g.Notes = append(g.Notes, "pgscale: note: "+n)
			}
			if only != "" {
				if g.Only, err = suite.ParseOnly(only); err != nil {
					return usage.Errorf("--only: %v", err)
				}
			}
			if resume != "" {
				if g.Out != "" && g.Out != resume {
					return usage.Errorf("--resume DIR is the bundle to complete: drop --out")
				}
				g.Out, g.Resume = resume, true
			}
			g.Argv, g.Cluster = secret.RedactAll(argv), c.Cluster
			g.Agents = ag.agents(cmd.Flags())
			if g.Targets, err = s.Resolve(targets.values, targets.baseline); err != nil {
				return err
			}
			if !g.Targets.Replaced {
				// Before the run: a build given for one side of a pair
				// and not the other would read as the build's verdict.
				for _, n := range s.Apart(given) {
					g.Notes = append(g.Notes, "pgscale: note: "+n)
				}
			}
			if dryRun {
				return dryRunSuite(cmd.Context(), s, g, stdout)
			}
			if err := rec.check(specNames(g.Targets.Specs)); err != nil {
				return err
			}
			if err := outputs.check(); err != nil {
				return err
			}
			g.Observer = &report.Live{Out: stdout, Err: stderr}
			spec, err := suiteSpec(s, g)
			if err != nil {
				return err
			}
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			run, runErr := cells.Run(ctx, spec)
			if run == nil {
				return runErr
			}
			d, err := loadBundle(run.Dir)
			if err != nil {
				return errors.Join(runErr, err)
			}
			d.Color = colorTerminal(stdout)
			if len(run.Index.Targets) == 1 {
				fmt.Fprintln(stdout) // after the cells' sweeps, told as run tells one
			}
			err = show(d, stdout, &outputs)
			status := ""
			if runErr != nil {
				status = " (incomplete: resume with --resume " + run.Dir + ")"
			}
			fmt.Fprintf(stdout, "\nbundle: %s%s\n", run.Dir, status)
			var recErr error
			if rec.where() != "" {
				out, _, err := bundleFiles(run.Dir)
				recErr = errors.Join(err, rec.record(cmd.Context(), stdout, out))
			}
			if runErr != nil || err != nil {
				return errors.Join(err, runErr, recErr)
			}
			return errors.Join(suiteVerdictError(d.Suite, d.Micro, inconclusive), recErr)
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringVar(&preset, "preset", "", "run a built-in suite: "+strings.Join(suite.Presets(), ", "))
	fs.BoolVar(&quick, "quick", false, "run the suite's quick variant (minutes)")
	fs.BoolVar(&showOnly, "show", false, "print the suite file (a preset's, or the file) and run nothing")
	fs.BoolVar(&dryRun, "dry-run", false, "print the cells, their order and the estimated time, and run nothing")
	fs.StringVar(&only, "only", "", "run only the cells with these parameters: NAME=VALUE[|VALUE...][,NAME=VALUE...]")
	targets.register(fs, "replace the suite's targets: "+target.Forms()+" (repeatable)", "with --target: the target the others are compared with (default: the first)")
	fs.StringArrayVar(&params, "param", nil, "set a parameter of the suite: NAME=VALUE (repeatable)")
	fs.Var(probeopt.CountInto(&count), "count", "instructions[,cache]: count the servers' (and a proxy's) instructions per transaction under Valgrind, with cache also simulate caches and branch prediction, as the suite file's count: does (needs -t); micro cells counted as micro --count counts them, where their format and command allow")
	fs.BoolVar(&profile, "profile", false, "record a CPU profile of the servers with perf in every step, as the suite file's profile: true does (pprof files in the bundle; the HTML report draws them, and each candidate's differential flame graphs)")
	fs.IntVarP(&transactions, "transactions", "t", 0, "transactions per client in each step, instead of the suite's duration")
	fs.Var(roundsFlag{&rounds}, "rounds", "replace the suite's rounds: N, or auto[:MAX|DURATION] to round every cell until its bounded measures are decided")
	registerInconclusive(fs, &inconclusive)
	fs.StringArrayVar(&axes, "matrix", nil, "replace the values of an axis of the matrix: NAME=V1,V2,... (repeatable; --matrix partitions=18)")
	fs.StringVar(&g.Out, "out", "", "bundle directory (default results/suite-<name>-<UTC time>)")
	fs.StringVar(&resume, "resume", "", "complete the bundle in DIR: run only its missing or incomplete cells")
	fs.StringVar(&g.IO, "io", "auto", "client socket I/O: auto, raw or netpoll")
	fs.StringVar(&g.Colocate, "colocate", "auto", colocateHelp)
	outputs.register(fs, func(rf report.Format) bool { return rf.Shows(report.KindComparison) })
	rec.register(fs, true)
	registerCluster(fs, &c)
	ag.register(fs, false)
	registerBuildCache(fs, &c.Cluster.BuildCache)
	return cmd
}

// readSuite reads the suite file or the preset.
func readSuite(args []string, preset string, quick bool) (*suite.Suite, error) {
	if preset != "" {
		return suite.Preset(preset, quick)
	}
	return suite.ReadFile(args[0], quick)
}

// showSuite prints the suite file.
func showSuite(args []string, preset string, stdout io.Writer) error {
	if preset != "" {
		src, err := suite.PresetSource(preset)
		if err != nil {
			return err
		}
		_, err = io.WriteString(stdout, src)
		return err
	}
	s, err := suite.ReadFile(args[0], false)
	if err != nil {
		return err
	}
	_, err = io.WriteString(stdout, s.Source)
	return err
}

// dryRunSuite prints what the suite would run: its cells, what its
// targets build first (or find built), and the estimated time. A target
// the run would refuse before it starts is refused here too.
func dryRunSuite(ctx context.Context, s *suite.Suite, g suiteGiven, stdout io.Writer) error {
	all := s.Cells()
	run, err := s.Only(all, g.Only)
	if err != nil {
		return err
	}
	targets := g.Targets.Given
	what := "sweeps"
	if len(targets) > 1 {
		what = fmt.Sprintf("A/B runs of %s rounds", s.RoundsSpec())
	}
	brief := make([]string, len(targets))
	for i, t := range targets {
		brief[i] = t.Brief()
	}
	step := fmt.Sprintf("%v per step", s.Duration)
	if s.Transactions > 0 {
		step = fmt.Sprintf("%d transactions per client", s.Transactions)
	}
	if s.Count.Instructions {
		step += ", counted (" + s.Count.String() + ")"
	}
	fmt.Fprintf(stdout, "suite %s: %d of %d cells, %s on %s; clients %v, %s\n", s.Name, len(run), len(all), what,
		strings.Join(brief, ", "), s.Clients, step)
	var own [][]target.Spec // the cells' own targets (cells:), for their builds
	for _, c := range run {
		on := ""
		ct, err := g.Targets.Cell(c)
		if err != nil {
			return err
		}
		if ct.Own {
			var brief []string
			for _, g := range ct.Given {
				brief = append(brief, g.Brief())
			}
			on, own = "  on "+strings.Join(brief, ", "), append(own, ct.Specs)
		}
		if l := s.CellLoad(c); l.Own {
			on += "  " + cellLoadText(l)
		}
		fmt.Fprintf(stdout, "  %3d  %s%s\n", c.Index+1, c.Key(), on)
	}
	templated := false
	for _, t := range targets {
		templated = templated || strings.Contains(t.Templates(), "{{")
	}
	if !templated {
		specs := slices.Clone(g.Targets.Specs)
		note, err := s.CheckTargets(len(specs))
		if err != nil {
			return err
		}
		if note != "" {
			fmt.Fprintln(stdout, note)
		}
		for _, ts := range own {
			for _, t := range ts {
				if !slices.ContainsFunc(specs, func(s target.Spec) bool { return s.String() == t.String() }) {
					specs = append(specs, t)
				}
			}
		}
		for _, t := range specs {
			line, err := target.BuildStatus(ctx, t, g.Cluster)
			if err != nil {
				return err
			}
			if line != "" {
				fmt.Fprintf(stdout, "target %s: %s\n", t.Name, line)
			}
		}
	}
	_, microNotes, err := microCells(s, g.Targets.Specs)
	if err != nil {
		return err
	}
	for _, n := range append(append([]string(nil), g.Notes...), microNotes...) {
		fmt.Fprintln(stdout, n)
	}
	est, counted := cells.Estimate(s, run, len(targets))
	also := ""
	if counted > 0 {
		also = fmt.Sprintf("; %s of transactions counted (under Valgrind, timed as they run)", prose.Count(counted, "cell"))
	}
	fmt.Fprintf(stdout, "estimated time: %v, and the data's set-up in each cell%s\n", est.Round(time.Second), also)
	return nil
}

// cellLoadText says how a cell with settings of its own runs: "counted
// (instructions), clients [1 4], 200 transactions per client, auto:6
// rounds", "native, clients [8], 2s per step, 4 rounds".
func cellLoadText(l suite.CellLoad) string {
	how := "native"
	if l.Count.Instructions {
		how = "counted (" + l.Count.String() + ")"
	}
	step := fmt.Sprintf("%v per step", l.Duration)
	if l.Transactions > 0 {
		step = fmt.Sprintf("%d transactions per client", l.Transactions)
	}
	out := fmt.Sprintf("%s, clients %v, %s, %s rounds", how, l.Clients, step, l.Rounds)
	if l.Scale > 1 {
		out += fmt.Sprintf(", scale %d", l.Scale)
	}
	return out
}

// loadBundle reads a suite bundle into a document: its cells' files
// (suite.ReadBundle) and the suite's comparison (compare.CompareSuite).
func loadBundle(dir string) (*report.Doc, error) { return loadBundleWith(dir, nil, stats.Options{}) }

// loadBundleWith is loadBundle judging every cell against bounds instead
// of the bounds the cells recorded, when bounds is not nil.
func loadBundleWith(dir string, bounds *stats.Bounds, opt stats.Options) (*report.Doc, error) {
	b, err := suite.ReadBundle(dir)
	if err != nil {
		return nil, err
	}
	ms, err := suiteMicro(dir)
	if err != nil {
		return nil, err
	}
	s, err := compare.CompareSuite(b.Index, b.Cells, compare.SuiteOptions{Expect: b.Expect, Bounds: bounds, Stats: opt, Micro: ms, Say: remedy.Say})
	if err != nil {
		return nil, usage.Wrap(err)
	}
	return report.NewDoc(compare.Analyze(b.Files, compare.Compared{Suite: s, Micro: ms})), nil
}

// suiteMicro judges the micro cells' run files of a bundle, as each
// recorded its bounds and groups.
func suiteMicro(dir string) ([]*micro.Analysis, error) {
	paths, _ := filepath.Glob(filepath.Join(dir, cells.MicroFile("*")))
	var out []*micro.Analysis
	for _, p := range paths {
		run, err := micro.ReadRun(p)
		if err != nil {
			return nil, usage.Wrap(err)
		}
		a, err := micro.Judge(run)
		if err != nil {
			return nil, usage.Prefix(p+": ", err)
		}
		out = append(out, a)
	}
	return out, nil
}

// suiteVerdictError is the exit code's error: a RegressionError when a
// measure of a cell failed or a decision rule did, an InconclusiveError
// when one could not be decided (as --inconclusive maps it).
func suiteVerdictError(s *compare.Suite, ms []*micro.Analysis, inconclusive string) error {
	var failing, undecided []string
	if s == nil {
		return nil
	}
	outcome := (&compare.Analysis{Suite: s, Micro: ms}).Outcome()
	var incomplete []string
	for _, m := range ms {
		for _, c := range m.Candidates {
			switch c.Verdict.Outcome {
			case stats.Fail:
				failing = append(failing, fmt.Sprintf("micro cell %s, %s: benchmarks past their bounds", m.Name, c.Name))
			case stats.Inconclusive:
				undecided = append(undecided, fmt.Sprintf("micro cell %s, %s: bounded benchmarks undecided", m.Name, c.Name))
			}
		}
		if !m.Complete() {
			incomplete = append(incomplete, fmt.Sprintf("micro cell %s incomplete: %s", m.Name, strings.Join(m.Problems, "; ")))
		}
	}
	if len(incomplete) > 0 {
		return errors.New(strings.Join(incomplete, "; "))
	}
	for i, v := range s.Verdicts {
		switch v.Outcome {
		case stats.Fail:
			failing = append(failing, s.Candidates[i]+": measures past their bounds")
		case stats.Inconclusive:
			undecided = append(undecided, s.Candidates[i]+": bounded measures undecided")
		}
	}
	if s.ExpectFailed() {
		failing = append(failing, "a decision rule failed")
	}
	return outcomeError(outcome, inconclusive, strings.Join(failing, "; "), strings.Join(undecided, "; "))
}

// splitList splits a comma list, trimming blanks.
func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		out = append(out, strings.TrimSpace(v))
	}
	return out
}
