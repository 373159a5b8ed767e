package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/usage"
)

func newCompareCmd(stdout io.Writer) *cobra.Command {
	var bounds []string
	var confidence float64
	var unpaired bool
	var outputs outputFlags
	cmd := &cobra.Command{
		Use:   "compare BASE.json CAND.json [CAND.json...] | compare BUNDLE",
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

Exit code 0 when no measure is outside its bounds, 1 when one is, 2 for bad
usage or unreadable files.`,
		Args: func(_ *cobra.Command, args []string) error {
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
			b, err := stats.ParseBounds(bounds)
			if err != nil {
				return usage.Wrap(err)
			}
			if len(args) == 1 {
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
				return suiteVerdictError(d.Suite)
			}
			inputs, err := readInputs(args)
			if err != nil {
				return err
			}
			c, err := compare.Compare(inputs, compare.Options{Bounds: b, Stats: stats.Options{Confidence: confidence}, Unpaired: unpaired})
			if err != nil {
				// A bound matching no measure, or files with nothing to compare.
				return usage.Wrap(err)
			}
			if err := show(&report.Doc{Files: inputs, Comparison: c, Color: colorTerminal(stdout)}, stdout, &outputs); err != nil {
				return err
			}
			return verdictError(c)
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	registerVerdict(fs, &bounds, &confidence)
	outputs.register(fs, func(rf report.Format) bool { return rf.Comparisons })
	fs.BoolVar(&unpaired, "unpaired", false, "compare files of one ab run unpaired too (Mann-Whitney U)")
	return cmd
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
