package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/trend"
	"github.com/pgscale/pgscale/internal/usage"
)

// historyBisectFlags are what pgscale history bisect passes to the bisect
// it runs, besides what the stored runs give.
type historyBisectFlags struct {
	resultID                  int64
	out, setup, cache, rounds string
	minChange, reshuffle      string
}

// newHistoryBisectCmd is `pgscale history bisect`: the commit that made a
// change point of a series, found by pgscale bisect between the commits of
// the runs either side of it, with the target and workload those runs
// recorded.
func newHistoryBisectCmd(_ io.Writer, open opener) *cobra.Command {
	var f historyBisectFlags
	cmd := &cobra.Command{
		Use:   "bisect SERIES|FILTER [--result N] [flags]",
		Short: "Find the commit behind a change point: pgscale bisect between the runs either side of it",
		Long: `Find which commit made a series' change point. The filter must select one
series; its newest change point since the acknowledged one is taken (or,
with --result N, the one at result N, the first point after it, as check
prints it). The runs either side of it give everything else:

  - the range: the commits their points were recorded under (a src: build's
    own commit, --commit, or the CI's), --good the one before, --bad the one
    after;
  - the target: the spec each result file records (target.spec, recorded
    since this version; an A/B file's targets before that), with the source
    built at those commits written without a revision and the target's other
    sources pinned at the commits their builds recorded: src:PATH,
    settings:,ext=PATH, src:PATH@REV,ext=PATH or a proxy: definition with a
    build:;
  - the workload: the scripts as the file holds them (written into the
    bisect's directory), scale, protocol, defines, -t or -T, the seed, and
    the series' client count and measure (--count instructions for a counted
    one); --set, --tmpfs, -F, --unlogged-tables and --setup from the command
    line the file records (a --setup file is read again from its path: give
    --setup FILE when it has moved).

It prints the pgscale bisect command line it builds and runs it: the same
bisect, its log, reports and --resume (pgscale bisect --resume DIR). When
the store cannot give what it needs (no change point, points without
commits, a target not built from source, commits the source's repository
does not have) it says so in one line, exit 2.

` + filterHelp(),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usage.Errorf("history bisect needs a FILTER naming one series (a number from pgscale history list)")
			}
			st, flt, err := open.filtered(cmd, args)
			if err != nil {
				return err
			}
			defer st.Close()
			ctx := cmd.Context()
			hs, err := st.Export(ctx, flt)
			if err != nil {
				return err
			}
			switch {
			case len(hs) == 0:
				return noSeries(st, args)
			case len(hs) > 1:
				return usage.Errorf("history bisect: %s matches %d series; name one (its number in pgscale history list, or add measure= and c=)", strings.Join(args, " "), len(hs))
			}
			h := hs[0]
			if h.Micro() {
				return usage.Errorf("history bisect: series %d is a micro-benchmark's (%s): history bisect measures a workload on a target built at each commit; name a series of run, ab or suite", h.ID, h.Measure)
			}
			c, err := changeToBisect(h, f.resultID)
			if err != nil {
				return err
			}
			before, err := st.File(ctx, c.Before.ResultID)
			if err != nil {
				return err
			}
			after, err := st.File(ctx, c.After.ResultID)
			if err != nil {
				return err
			}
			bargs, err := f.bisectArgs(cmd, h, c, before, after)
			if err != nil {
				return err
			}
			stderr := cmd.ErrOrStderr()
			fmt.Fprintf(stderr, "history bisect: series %d (%s): %s between %s (result %d, %s) and %s (result %d, %s)\n",
				h.ID, h.Key, stats.FormatChange(c.Change, c.Lo, c.Hi), report.ShortCommit(c.Before.Commit), c.Before.ResultID,
				c.Before.Time.UTC().Format("2006-01-02 15:04"), report.ShortCommit(c.After.Commit), c.After.ResultID, c.After.Time.UTC().Format("2006-01-02 15:04"))
			argv := append([]string{"pgscale"}, bargs...)
			fmt.Fprintf(stderr, "history bisect: pgscale %s\n", prose.Command(bargs))
			root := newRoot(argv, cmd.OutOrStdout(), stderr)
			root.SetArgs(bargs)
			return root.ExecuteContext(ctx)
		},
	}
	fs := cmd.Flags()
	fs.Int64Var(&f.resultID, "result", 0, "the change point at this result (the first point after it, as check prints it) instead of the newest")
	fs.StringVar(&f.out, "out", "", "the bisect's directory (default results/bisect-<UTC time>)")
	fs.StringVar(&f.setup, "setup", "", "the SQL file the runs' --setup ran, when it is no longer at the path their command line names")
	fs.StringVar(&f.rounds, "rounds", "", "passed to pgscale bisect: the most rounds a step takes")
	fs.StringVar(&f.minChange, "min-change", "", "passed to pgscale bisect: the smallest change of interest")
	fs.StringVar(&f.reshuffle, "reshuffle", "", "passed to pgscale bisect: re-create the clusters every N rounds")
	registerBuildCache(fs, &f.cache)
	return cmd
}

// changeToBisect is the change point of h to bisect: the one at result
// id, else the newest not acknowledged; none is a usage error.
func changeToBisect(h trend.History, id int64) (trend.Change, error) {
	cs, _ := h.ChangePoints(stats.ChangePointOptions{})
	for i := len(cs) - 1; i >= 0; i-- {
		if id != 0 && cs[i].After.ResultID == id || id == 0 && !cs[i].Acked {
			return cs[i], nil
		}
	}
	if id != 0 {
		return trend.Change{}, usage.Errorf("history bisect: series %d has no change point at result %d (pgscale history show %d)", h.ID, id, h.ID)
	}
	return trend.Change{}, usage.Errorf("history bisect: series %d has no change point since the acknowledged one in its %d points: nothing to bisect (pgscale history show %d)", h.ID, len(h.Points), h.ID)
}

// bisectArgs builds pgscale bisect's command line from the runs either
// side of change c of series h: the range, the target, the workload and
// the measure.
func (f *historyBisectFlags) bisectArgs(cmd *cobra.Command, h trend.History, c trend.Change, before, after *result.File) ([]string, error) {
	good, err := pointCommit(c.Before)
	if err != nil {
		return nil, err
	}
	bad, err := pointCommit(c.After)
	if err != nil {
		return nil, err
	}
	specOf := func(p trend.Point, file *result.File) (target.Spec, error) {
		given := recordedSpec(file)
		if given == "" {
			return target.Spec{}, usage.Errorf("history bisect: result %d does not record its target as given (a file written before pgscale recorded target.spec): run pgscale bisect --good %s --bad %s TARGETSPEC with its workload yourself",
				p.ResultID, report.ShortCommit(good), report.ShortCommit(bad))
		}
		s, err := target.ParseUnnamed(given)
		if err != nil {
			return target.Spec{}, usage.Errorf("history bisect: result %d's target %s: %v", p.ResultID, given, specError(err, "--target"))
		}
		s, _, err = target.BisectBetween(s, before.Target, after.Target, good, bad)
		if err != nil {
			return target.Spec{}, usage.Errorf("history bisect: result %d's target: %v", p.ResultID, bisectSourceError(err))
		}
		return s, nil
	}
	tb, err := specOf(c.Before, before)
	if err != nil {
		return nil, err
	}
	ta, err := specOf(c.After, after)
	if err != nil {
		return nil, err
	}
	if tb.String() != ta.String() {
		return nil, usage.Errorf("history bisect: the runs either side of the change ran different targets (%s, result %d; %s, result %d): bisect moves one source of one target",
			tb, c.Before.ResultID, ta, c.After.ResultID)
	}
	rev, _, err := target.BisectSource(ta)
	if err != nil {
		return nil, bisectSourceError(err)
	}
	if _, err := bisectCommits(cmd.Context(), rev.Source.Path, good, bad); err != nil {
		return nil, usage.Errorf("history bisect: series %d changed between %s and %s, which %s cannot bisect: %v", h.ID, report.ShortCommit(good), report.ShortCommit(bad), rev.Source.Path, err)
	}
	out := f.out
	if out == "" {
		out = filepath.Join("results", "bisect-"+time.Now().UTC().Format("20060102T150405Z"))
	}
	if out, err = filepath.Abs(out); err != nil {
		return nil, usage.Errorf("history bisect: --out: %v", err)
	}
	cmdArgs, err := f.commandArgs(after.Command)
	if err != nil {
		return nil, err
	}
	// The scripts are written last: a refusal leaves nothing behind.
	wl, err := workloadArgs(after.Workload, filepath.Join(out, "scripts"))
	if err != nil {
		return nil, err
	}
	args := append([]string{"bisect", "--good", good, "--bad", bad, ta.String()}, wl...)
	args = append(args, cmdArgs...)
	args = append(args, "-c", strconv.Itoa(h.Clients), "--measure", h.Measure)
	for _, md := range compare.Measures() {
		if md.Name == h.Measure && md.Counted {
			args = append(args, "--count", "instructions")
		}
	}
	for _, p := range [][2]string{{"--rounds", f.rounds}, {"--min-change", f.minChange}, {"--reshuffle", f.reshuffle}, {"--build-cache", f.cache}} {
		if p[1] != "" {
			args = append(args, p[0], p[1])
		}
	}
	return append(args, "--out", out), nil
}

// pointCommit is the commit a point was recorded under, as bisect takes
// it: a patched build's commit without its patches' hash (the target
// keeps the patches). None, or a working tree with uncommitted changes,
// is a usage error.
func pointCommit(p trend.Point) (string, error) {
	c, _, _ := strings.Cut(p.Commit, "+")
	switch {
	case c == "":
		return "", usage.Errorf("history bisect: result %d recorded no commit (label %s): record runs with --commit SHA, from CI, or of a src: build, to bisect between them", p.ResultID, p.Label)
	case strings.HasSuffix(c, "-dirty"):
		return "", usage.Errorf("history bisect: result %d measured a working tree with uncommitted changes (%s): no commit holds what it measured", p.ResultID, report.ShortCommit(c))
	}
	return c, nil
}

// recordedSpec is the target a result file records as given: its
// target.spec, else an A/B file's entry for its target.
func recordedSpec(f *result.File) string {
	if f.Target.Spec != "" {
		return f.Target.Spec
	}
	if f.AB != nil {
		for _, t := range f.AB.Targets {
			if t.Name == f.Target.Name {
				return strings.TrimPrefix(t.Spec, t.Name+"=")
			}
		}
	}
	return ""
}

// workloadArgs are the flags that make the workload a result file
// records: its scripts (built-in ones by name, the others written into
// dir), data scale and partitions, protocol, defines, the load's options,
// length and seed.
func workloadArgs(w result.Workload, dir string) ([]string, error) {
	var args []string
	names := map[string]bool{}
	for i, s := range w.Scripts {
		weight := ""
		if len(w.Scripts) > 1 {
			weight = "@" + strconv.Itoa(s.Weight)
		}
		if name, ok := strings.CutPrefix(s.Name, "builtin:"); ok {
			args = append(args, "-b", name+weight)
			continue
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, usage.Errorf("history bisect: %v", err)
		}
		name := filepath.Base(s.Name)
		if names[name] {
			name = strconv.Itoa(i+1) + "-" + name
		}
		names[name] = true
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(s.Source), 0o644); err != nil {
			return nil, usage.Errorf("history bisect: %v", err)
		}
		args = append(args, "-f", path+weight)
	}
	if w.Scale > 0 {
		args = append(args, "-s", strconv.Itoa(w.Scale))
	}
	if w.Partitions > 0 {
		args = append(args, "--partitions", strconv.Itoa(w.Partitions), "--partition-method", w.PartitionMethod)
	}
	// prepared is the default, and the default also sends what the server
	// cannot prepare with the simple protocol, as the recorded run did.
	if w.Protocol != "" && w.Protocol != "prepared" {
		args = append(args, "-M", w.Protocol)
	}
	keys := make([]string, 0, len(w.Defines))
	for k := range w.Defines {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "-D", k+"="+w.Defines[k])
	}
	num := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	if w.Connect {
		args = append(args, "-C")
	}
	if w.RateTPS > 0 {
		args = append(args, "-R", num(w.RateTPS))
	}
	if w.LatencyLimitMs > 0 {
		args = append(args, "-L", num(w.LatencyLimitMs))
	}
	if w.MaxTries != 1 {
		args = append(args, "--max-tries", strconv.Itoa(w.MaxTries))
	}
	if w.ContinueOnError {
		args = append(args, "--continue-on-error")
	}
	if w.Threads > 0 {
		args = append(args, "-j", strconv.Itoa(w.Threads))
	}
	if w.Transactions > 0 {
		args = append(args, "-t", strconv.Itoa(w.Transactions))
	} else if w.DurationS > 0 {
		args = append(args, "-T", num(w.DurationS)+"s")
	}
	args = append(args, "--warmup", num(w.WarmupS)+"s", "--random-seed", strconv.FormatUint(w.RandomSeed, 10))
	return args, nil
}

// commandArgs takes from a result file's command line what the file does
// not record otherwise: the cluster's --set settings, --tmpfs, pgbench's
// -F and --unlogged-tables, and --setup, whose file is read again (from
// --setup given here, else from the path the command line names; one that
// is not there is a usage error saying to give it).
func (f *historyBisectFlags) commandArgs(argv []string) ([]string, error) {
	var args []string
	setup := ""
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		name, value, hasValue := strings.Cut(a, "=")
		takes := slices.Contains([]string{"--set", "--setup", "--fillfactor", "-F"}, name)
		if takes && !hasValue && i+1 < len(argv) {
			i++
			value, hasValue = argv[i], true
		}
		switch {
		case name == "--set" && hasValue:
			args = append(args, "--set", value)
		case (name == "--fillfactor" || name == "-F") && hasValue:
			args = append(args, "--fillfactor", value)
		case a == "--tmpfs" || a == "--unlogged-tables":
			args = append(args, a)
		case name == "--setup" && hasValue:
			setup = value
		}
	}
	switch {
	case f.setup != "":
		setup = f.setup
	case setup == "":
		return args, nil
	}
	abs, err := filepath.Abs(setup)
	if err == nil {
		_, err = os.Stat(abs)
	}
	if err != nil {
		return nil, usage.Errorf("history bisect: the runs ran --setup %s, which a result file does not keep and is not there now: give the file (--setup FILE)", setup)
	}
	return append(args, "--setup", abs), nil
}
