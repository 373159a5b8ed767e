package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/pgscale/pgscale/internal/micro"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/store"
	"github.com/pgscale/pgscale/internal/usage"
)

// newHistoryAddCmd is `pgscale history add`: result files written before,
// recorded in the store.
func newHistoryAddCmd(stdout io.Writer, open opener) *cobra.Command {
	var labels, commits []string
	cmd := &cobra.Command{
		Use:   "add FILE|DIR...",
		Short: "Record existing result files in the store",
		Long: `Record result files (a directory stands for the result files in it, a
suite's bundle for its cells' files, each cell a workload "SUITE CELL") in the
store, each whole, with its figures indexed as points. A micro-benchmark run
file (pgscale micro's, a suite's micro cell's) is recorded once per target,
its benchmarks' measures the points, the commit each tree was at its
commit unless --commit gives one. Every file is
checked first (the result schema, its rules, no password anywhere): when
one fails, nothing is stored. A file stored before is not stored again.

--label [NAME=]LABEL sets the label of the files whose target is NAME (an
A/B run's target name), or of every file without one; the default is the
file's target name, else "default". --commit [NAME=]SHA likewise sets the
commit measured; the default is the CI environment's commit
(GITHUB_SHA, CI_COMMIT_SHA, ...), else none. Give --commit when adding
files of another time.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usage.Errorf("history add needs at least one result file")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var todo []written // path and series only
			for _, a := range args {
				cells, isBundle, err := bundleFiles(a)
				if err != nil {
					return err
				}
				if isBundle {
					todo = append(todo, cells...)
					continue
				}
				paths, err := resultPaths([]string{a})
				if err != nil {
					return err
				}
				for _, p := range paths {
					todo = append(todo, written{path: p})
				}
			}
			var pending []store.Pending
			var names []string
			for _, w := range todo {
				raw, err := os.ReadFile(w.path)
				if err != nil {
					return usage.Wrap(err)
				}
				if w.micro || micro.IsRun(raw) {
					run, err := store.CheckMicro(raw)
					if err != nil {
						return usage.Errorf("%s: %v", w.path, err)
					}
					pending = append(pending, store.Pending{Path: w.path, Raw: raw, Workload: w.series, Micro: true})
					for _, t := range run.Targets {
						names = append(names, t.Name)
					}
					continue
				}
				if err := store.Check(raw); err != nil {
					return usage.Errorf("%s: %v", w.path, err)
				}
				var f result.File
				if err := json.Unmarshal(raw, &f); err != nil {
					return usage.Errorf("%s: %v", w.path, err) // Check decoded it already
				}
				pending = append(pending, store.Pending{Path: w.path, Raw: raw, File: &f, Workload: w.series})
				names = append(names, f.Target.Name)
			}
			lab, err := perTarget("--label", labels, names)
			if err != nil {
				return err
			}
			com, err := perTarget("--commit", commits, names)
			if err != nil {
				return err
			}
			st, err := open(cmd)
			if err != nil {
				return err
			}
			defer st.Close()
			added, err := st.AddFiles(cmd.Context(), pending, store.AddOptions{Labels: lab, Commits: com})
			for _, a := range added {
				fmt.Fprintln(stdout, storedLine(st.Location(), a))
			}
			return err
		},
	}
	cmd.Flags().StringArrayVar(&labels, "label", nil, "label [NAME=]LABEL of the files of target NAME, or of every file without one (repeatable)")
	cmd.Flags().StringArrayVar(&commits, "commit", nil, "commit [NAME=]SHA the files of target NAME measured, or every file without one (default: the CI environment's; repeatable)")
	return cmd
}
