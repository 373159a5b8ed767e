package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/report/remedy"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/usage"
)

func newReportCmd(stdout io.Writer) *cobra.Command {
	var format, output string
	var expect []string
	cmd := &cobra.Command{
		Use:   "report FILE|DIR...",
		Short: "Show result files: each step's figures and evidence, the sweep, the diagnosis; or an A/B run's comparison",
		Long: `Render result files (a directory stands for the result files in it). A sweep
shows each step's figures and the evidence its probes gathered, the sweep
table and the diagnosis, computed again from the file: what pgscale run
printed. The files of one A/B run show their comparison with the bounds the
run was given (or, for --calibrate, the noise): what pgscale ab printed.
Files of every result version are read.

Formats: ` + report.Names(func(report.Format) bool { return true }) + `.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usage.Errorf("report needs at least one result file")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := report.Lookup(format)
			if err != nil {
				return usage.Wrap(err)
			}
			if _, err := compare.ParseExpectations(expect); err != nil {
				return usage.Wrap(err)
			}
			if len(args) == 1 && result.IsSuiteBundle(args[0]) {
				d, err := loadBundle(args[0])
				if err != nil {
					return err
				}
				d.Color = output == "" && colorTerminal(stdout)
				return writeReport(f, d, stdout, output)
			}
			paths, err := resultPaths(args)
			if err != nil {
				return err
			}
			var inputs []compare.Input
			for _, p := range paths {
				file, err := result.Read(p)
				if err != nil {
					return usage.Wrap(err)
				}
				if len(expect) > 0 {
					file.Expect = expect
				}
				inputs = append(inputs, compare.Input{Name: p, File: file, Path: p})
			}
			var cmp *compare.Comparison
			var noise *compare.Noise
			if compare.SameRun(inputs) {
				for i := range inputs {
					inputs[i].Name = inputs[i].File.Target.Name
				}
				if cmp, noise, err = compare.OfRun(inputs, remedy.Say); err != nil {
					return usage.Wrap(err)
				}
			}
			a := compare.Analyze(inputs, compare.Compared{Comparison: cmp, Noise: noise})
			d := &report.Doc{Analysis: a, Color: output == "" && colorTerminal(stdout)}
			if err := writeReport(f, d, stdout, output); err != nil {
				return err
			}
			if d.Comparison == nil && d.Noise == nil {
				for _, in := range inputs {
					if err := expectError(in.File); err != nil {
						return err
					}
				}
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&expect, "expect", nil, "check these decision rules instead of those the files record: "+expectHelp)
	cmd.Flags().StringVar(&format, "format", "text", report.Names(func(report.Format) bool { return true }))
	cmd.Flags().StringVarP(&output, "output", "o", "", "write the report to FILE instead of stdout")
	return cmd
}

// resultPaths expands each directory among args into the result files in
// it (*.json, in name order).
func resultPaths(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		fi, err := os.Stat(a)
		if err != nil || !fi.IsDir() {
			out = append(out, a) // result.Read says what is wrong with it
			continue
		}
		m, err := filepath.Glob(filepath.Join(a, "*.json"))
		if err != nil || len(m) == 0 {
			return nil, usage.Errorf("%s holds no result file (*.json)", a)
		}
		out = append(out, m...)
	}
	return out, nil
}

// writeReport renders d in format f on stdout, or into the file output.
func writeReport(f report.Format, d *report.Doc, stdout io.Writer, output string) error {
	var buf bytes.Buffer
	if err := f.Write(&buf, d); err != nil {
		return usage.Wrap(err)
	}
	if output == "" {
		_, err := stdout.Write(buf.Bytes())
		return err
	}
	return result.WriteFileAtomic(output, buf.Bytes())
}
