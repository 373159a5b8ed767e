package cli

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/store"
	"github.com/pgscale/pgscale/internal/usage"
)

// newHistoryExportCmd is `pgscale history export`: the stored result
// files in Go's benchmark format or Bencher's BMF.
func newHistoryExportCmd(stdout io.Writer, open opener) *cobra.Command {
	var format, output string
	cmd := &cobra.Command{
		Use:   "export [FILTER]",
		Short: "Write the stored result files in Go's benchmark format or Bencher's BMF",
		Long: `Write the stored result files with a point in a matching series, oldest
first, through the report formats: benchfmt (Go's benchmark format, each
file's target named LABEL@COMMIT: benchstat -col target FILE compares the
commits) or bmf (Bencher Metric Format, one benchmark per file and client
count, named LABEL@COMMIT/WORKLOAD/clients=N, a second run of one commit
with #2 after it). Whole files are written, every measure of them.
Micro-benchmark runs are not result files: their series are left out, with
a note.

` + filterHelp(),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "benchfmt" && format != "bmf" {
				return usage.Errorf("--format %q: want benchfmt or bmf", format)
			}
			rf, err := report.Lookup(format)
			if err != nil {
				return usage.Wrap(err)
			}
			st, f, err := open.filtered(cmd, args)
			if err != nil {
				return err
			}
			defer st.Close()
			runs, err := st.Runs(cmd.Context(), f)
			if err != nil {
				return err
			}
			if len(runs) == 0 {
				return noSeries(st, args)
			}
			var files []store.Run
			var micros []string
			for _, r := range runs {
				if r.Kind == store.KindResult {
					files = append(files, r)
				} else if !slices.Contains(micros, r.Workload) {
					micros = append(micros, r.Workload)
				}
			}
			if len(micros) > 0 {
				msg := fmt.Sprintf("the series of %s are micro-benchmarks', whose run files export does not write (history show and check read them, pgscale micro RUN.json judges a run)", strings.Join(micros, ", "))
				if len(files) == 0 {
					return usage.Errorf("%s; select result files' series with a filter", msg)
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "pgscale: note: %s: left out\n", msg)
			}
			var inputs []compare.Input
			used := map[string]int{}
			for _, r := range files {
				file, err := st.File(cmd.Context(), r.ResultID)
				if err != nil {
					return err
				}
				name := runName(r.Label, r.Commit)
				if used[name]++; used[name] > 1 && format == "bmf" {
					name += "#" + strconv.Itoa(used[name])
				}
				inputs = append(inputs, compare.Input{Name: name, File: file})
			}
			d := report.NewDoc(compare.Analyze(inputs, compare.Compared{}))
			var buf bytes.Buffer
			if err := rf.Write(&buf, d); err != nil {
				return err
			}
			return writeOutput(stdout, output, buf.Bytes())
		},
	}
	cmd.Flags().StringVar(&format, "format", "benchfmt", "benchfmt or bmf")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write to FILE instead of stdout")
	return cmd
}
