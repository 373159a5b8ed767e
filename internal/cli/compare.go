package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/report/remedy"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/store"
	"github.com/pgscale/pgscale/internal/usage"
)

func newCompareCmd(stdout io.Writer) *cobra.Command {
	var bounds stats.Bounds
	var confidence float64
	var inconclusive string
	var unpaired bool
	var outputs outputFlags
	var baseline, location string
	cmd := &cobra.Command{
		Use:   "compare BASE.json CAND.json [CAND.json...] | compare BUNDLE | compare --baseline store:LABEL CAND.json...",
		Short: "Compare saved results: change ± uncertainty per measure, bounds and a verdict",
		Long: `Compare result files, the first as the baseline, step by step (same client
count) and measure by measure, and judge each change against its bound.

Files written by one pgscale ab run are paired by round, as ab itself does.
Other files are compared unpaired (Mann-Whitney U, like benchstat), each
complete step of a file counting as one value: this does not cancel drift
between the runs, so it needs a larger change to see it.

A suite's bundle directory is compared cell by cell, every measure of every
cell judged together, against the bounds given here (or, without --bound,
those the suite recorded).

--baseline store:LABEL compares the files with the runs of LABEL stored in
the history store (--store, $` + store.EnvLocation + `) on the same workload and
machine: those of the commit its newest run measured, or of COMMIT with
store:LABEL@COMMIT (a prefix is enough). They are compared unpaired, each
complete step of each stored run one value.

Exit code 0 when every bounded measure passed (or none was bounded), 1 when
one failed, 4 when one is inconclusive (--inconclusive pass|fail maps it),
2 for bad usage or unreadable files.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("baseline") {
				if len(args) == 0 {
					return usage.Errorf("compare --baseline needs at least one candidate result file")
				}
				return nil
			}
			if len(args) == 1 && result.IsSuiteBundle(args[0]) {
				return nil
			}
			if len(args) < 2 {
				return usage.Errorf("compare needs a baseline and at least one candidate result file")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if !(confidence > 0 && confidence < 1) {
				return usage.Errorf("--confidence must be between 0 and 1, e.g. 0.95")
			}
			b := bounds
			if len(args) == 1 && !cmd.Flags().Changed("baseline") {
				var override *stats.Bounds
				if cmd.Flags().Changed("bound") {
					override = &b
				}
				d, err := loadBundleWith(args[0], override, stats.Options{Confidence: confidence})
				if err != nil {
					return err
				}
				d.Color = colorTerminal(stdout)
				if err := show(d, stdout, &outputs); err != nil {
					return err
				}
				return suiteVerdictError(d.Suite, d.Micro, inconclusive)
			}
			inputs, err := readInputs(args)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("baseline") {
				base, err := storedBaseline(cmd.Context(), location, baseline, inputs, stdout)
				if err != nil {
					return err
				}
				inputs, unpaired = append([]compare.Input{base}, inputs...), true
			}
			c, err := compare.Compare(inputs, compare.Options{Bounds: b, Stats: stats.Options{Confidence: confidence}, Unpaired: unpaired, Say: remedy.Say})
			if err != nil {
				// A bound matching no measure, or files with nothing to compare.
				return usage.Wrap(err)
			}
			a := compare.Analyze(inputs, compare.Compared{Comparison: c})
			if err := show(&report.Doc{Analysis: a, Color: colorTerminal(stdout)}, stdout, &outputs); err != nil {
				return err
			}
			return verdictError(c, inconclusive)
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	registerBounds(fs, &bounds, &confidence)
	registerInconclusive(fs, &inconclusive)
	outputs.register(fs, func(rf report.Format) bool { return rf.Shows(report.KindComparison) })
	fs.BoolVar(&unpaired, "unpaired", false, "compare files of one ab run unpaired too (Mann-Whitney U)")
	fs.StringVar(&baseline, "baseline", "", "store:LABEL or store:LABEL@COMMIT: compare with runs stored in the history store instead of a BASE.json")
	fs.StringVar(&location, "store", "", "with --baseline store:...: the "+storeHelp+" (default as for pgscale history: $"+store.EnvLocation+", else the default file)")
	return cmd
}

// storedBaseline reads the stored runs that --baseline store:LABEL[@COMMIT]
// names, on the candidates' workload and machine, pooled into one side of
// an unpaired comparison, and says on w whose runs they are.
func storedBaseline(ctx context.Context, location, spec string, cands []compare.Input, w io.Writer) (compare.Input, error) {
	ref, ok := strings.CutPrefix(spec, "store:")
	label, commit, _ := strings.Cut(ref, "@")
	if !ok || strings.TrimSpace(label) == "" {
		return compare.Input{}, usage.Errorf("--baseline %q: want store:LABEL or store:LABEL@COMMIT (a file baseline is the first argument)", spec)
	}
	workload, machine := store.WorkloadKey(cands[0].File.Workload), store.FingerprintOf(cands[0].File.Environment).Fingerprint
	for _, c := range cands[1:] {
		if store.WorkloadKey(c.File.Workload) != workload || store.FingerprintOf(c.File.Environment).Fingerprint != machine {
			return compare.Input{}, usage.Errorf("%s and %s ran different workloads or on different machines: compare them with the store one at a time", cands[0].Name, c.Name)
		}
	}
	st, err := store.Open(ctx, location)
	if err != nil {
		return compare.Input{}, err
	}
	defer st.Close()
	runs, err := st.Baseline(ctx, label, commit, workload, machine)
	if err != nil {
		return compare.Input{}, usage.Wrap(err)
	}
	var files []*result.File
	var ids []string
	for _, r := range runs {
		f, err := st.File(ctx, r.ResultID)
		if err != nil {
			return compare.Input{}, err
		}
		files = append(files, f)
		ids = append(ids, strconv.FormatInt(r.ResultID, 10))
	}
	name := runName(label, runs[0].Commit)
	at := "with no commit recorded"
	if runs[0].Commit != "" {
		at = "at commit " + runs[0].Commit
	}
	when := runs[0].Started.UTC().Format("2006-01-02 15:04")
	if last := runs[len(runs)-1].Started.UTC().Format("2006-01-02 15:04"); last != when {
		when += " to " + last
	}
	runsOf := "1 stored run (result " + ids[0]
	if len(runs) > 1 {
		runsOf = fmt.Sprintf("%d stored runs (results %s", len(runs), strings.Join(ids, ", "))
	}
	fmt.Fprintf(w, "baseline: %s, %s, %s UTC) of label %s %s in %s; workload %s, machine %s\n",
		name, runsOf, when, label, at, st.Location(), workload, machine)
	return compare.Pool(name, files), nil
}

// readInputs reads result files and names each by its A/B target name, or
// by its file name when that is missing or taken.
func readInputs(paths []string) ([]compare.Input, error) {
	var inputs []compare.Input
	used := map[string]bool{}
	for _, p := range paths {
		f, err := result.Read(p)
		if err != nil {
			return nil, usage.Wrap(err)
		}
		name := f.Target.Name
		if name == "" || used[name] {
			name = strings.TrimSuffix(filepath.Base(p), ".json")
		}
		for base, i := name, 2; used[name]; i++ {
			name = fmt.Sprintf("%s#%d", base, i)
		}
		used[name] = true
		inputs = append(inputs, compare.Input{Name: name, File: f, Path: p})
	}
	return inputs, nil
}
