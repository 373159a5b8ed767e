package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
)

// verdictFlags say how a comparison is judged and where its reports go;
// ab and compare share them.
type verdictFlags struct {
	bounds     []string
	confidence float64
	markdown   string
	verdict    string
	benchfmt   string
	bmf        string
}

func (v *verdictFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&v.bounds, "bound", nil, "largest change allowed in the bad direction: MEASURE=±N% or MEASURE@c=N=±N% (tps=-3%, p99=+5%, tps@c=16=-5%); measures: tps, p50, p99, client-cpu/txn (repeatable, or comma-separated)")
	fs.Float64Var(&v.confidence, "confidence", stats.DefaultConfidence, "confidence level of intervals and tests (Holm-corrected over all measures)")
	fs.StringVar(&v.markdown, "markdown", "", "also write the comparison as a GitHub markdown comment to FILE")
	fs.StringVar(&v.verdict, "verdict", "", "also write every measure's numbers, bound and status and the verdict as JSON to FILE")
	fs.StringVar(&v.benchfmt, "benchfmt", "", "also write the per-round results in Go benchmark format to FILE (benchstat -col target -ignore round FILE)")
	fs.StringVar(&v.bmf, "bmf", "", "also write the figures in Bencher Metric Format JSON to FILE")
}

// parse returns the bounds and statistics options, or a usage error.
func (v *verdictFlags) parse() (stats.Bounds, stats.Options, error) {
	opt := stats.Options{Confidence: v.confidence}
	if !(v.confidence > 0 && v.confidence < 1) {
		return nil, opt, Usagef("--confidence must be between 0 and 1, e.g. 0.95")
	}
	b, err := stats.ParseBounds(v.bounds)
	if err != nil {
		return nil, opt, &UsageError{Err: err}
	}
	return b, opt, nil
}

// write prints the comparison on stdout and writes the report files asked
// for.
func (v *verdictFlags) write(rep *report.ABReport, inputs []report.Input, stdout io.Writer) error {
	if err := report.WriteText(stdout, rep, report.TextOptions{Color: colorTerminal(stdout)}); err != nil {
		return err
	}
	outs := []struct {
		path  string
		write func(io.Writer) error
	}{
		{v.markdown, func(w io.Writer) error { return report.WriteMarkdown(w, rep) }},
		{v.verdict, func(w io.Writer) error { return report.WriteVerdict(w, rep) }},
		{v.benchfmt, func(w io.Writer) error { return report.WriteBenchfmt(w, inputs) }},
		{v.bmf, func(w io.Writer) error { return report.WriteBMF(w, rep) }},
	}
	var errs []error
	for _, o := range outs {
		if o.path == "" {
			continue
		}
		var buf bytes.Buffer
		if err := o.write(&buf); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := result.WriteFileAtomic(o.path, buf.Bytes()); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// verdictError turns a comparison's outcome into the error that sets the
// exit code: a RegressionError when a measure is outside its bounds.
func verdictError(rep *report.ABReport) error {
	if rep.Passed() {
		return nil
	}
	var failing []string
	for i, v := range rep.Verdicts {
		if !v.Passed() {
			failing = append(failing, rep.Candidates[i])
		}
	}
	return &RegressionError{Msg: fmt.Sprintf("%s: measures outside bounds", strings.Join(failing, ", "))}
}

// colorTerminal reports whether w is a terminal that shows colour.
func colorTerminal(w io.Writer) bool {
	return isTerminal(w) && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
}

func newCompareCmd(stdout io.Writer) *cobra.Command {
	var v verdictFlags
	var unpaired bool
	cmd := &cobra.Command{
		Use:   "compare BASE.json CAND.json [CAND.json...]",
		Short: "Compare saved results: change ± uncertainty per measure, bounds and a verdict",
		Long: `Compare result files, the first as the baseline, step by step (same client
count) and measure by measure, and judge each change against its bound.

Files written by one pgscale ab run are paired by round, as ab itself does.
Other files are compared unpaired (Mann-Whitney U, like benchstat), each
complete step of a file counting as one value: this does not cancel drift
between the runs, so it needs a larger change to see it.

Exit code 0 when no measure is outside its bounds, 1 when one is, 2 for bad
usage or unreadable files.`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			bounds, opt, err := v.parse()
			if err != nil {
				return err
			}
			inputs, err := readInputs(args)
			if err != nil {
				return err
			}
			rep, err := report.Compare(inputs, report.CompareOptions{Bounds: bounds, Stats: opt, Unpaired: unpaired})
			if err != nil {
				// A bound matching no measure, or files with nothing to compare.
				return &UsageError{Err: err}
			}
			if err := v.write(rep, inputs, stdout); err != nil {
				return err
			}
			return verdictError(rep)
		},
	}
	cmd.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) < 2 {
			return Usagef("compare needs a baseline and at least one candidate result file")
		}
		return nil
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	v.register(fs)
	fs.BoolVar(&unpaired, "unpaired", false, "compare files of one ab run unpaired too (Mann-Whitney U)")
	return cmd
}

// readInputs reads result files and names each by its A/B target name, or
// by its file name when that is missing or taken.
func readInputs(paths []string) ([]report.Input, error) {
	var inputs []report.Input
	used := map[string]bool{}
	for _, p := range paths {
		f, err := result.Read(p)
		if err != nil {
			return nil, &UsageError{Err: err}
		}
		name := f.Target.Name
		if name == "" || used[name] {
			name = strings.TrimSuffix(filepath.Base(p), ".json")
		}
		for base, i := name, 2; used[name]; i++ {
			name = fmt.Sprintf("%s#%d", base, i)
		}
		used[name] = true
		inputs = append(inputs, report.Input{Name: name, File: f})
	}
	return inputs, nil
}
