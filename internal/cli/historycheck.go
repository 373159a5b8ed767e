package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/micro"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/trend"
	"github.com/pgscale/pgscale/internal/usage"
)

// newHistoryCheckCmd is `pgscale history check`: the change points since
// the acknowledged ones, judged against the bounds, and the exit code.
func newHistoryCheckCmd(stdout io.Writer, open opener) *cobra.Command {
	var bounds []string
	var confidence float64
	cmd := &cobra.Command{
		Use:   "check [FILTER]",
		Short: "Find change points in each series; exit 1 when one is a regression past a bound",
		Long: `Run change-point detection over each matching series (E-Divisive means with
a Student t-test between the segments either side, p < 0.001, as Apache
Otava does it; docs/history.md) and report every change point after the
series' acknowledged one: its size ± uncertainty, the means either side
and the commits it lies between. A change point is outside bounds when it
is past its --bound in the bad direction (tps=-2%, p99=+5%, tps@c=8=-2%; a
micro-benchmark's as pgscale micro takes them: 'micro:BenchmarkSum/*=+5%',
'micro:*@cpu-ns/op=+10%').

Exit code 0 when no change point is outside its bound (without bounds,
whatever was found), 1 when one is, 2 for bad usage.

` + filterHelp(),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !(confidence > 0 && confidence < 1) {
				return usage.Errorf("--confidence must be between 0 and 1, e.g. 0.95")
			}
			macro, micros := splitMicroBounds(bounds)
			b, err := stats.ParseBounds(macro)
			if err != nil {
				return usage.Wrap(err)
			}
			mb, err := micro.ParseBounds(micros)
			if err != nil {
				return usage.Wrap(err)
			}
			st, f, err := open.filtered(cmd, args)
			if err != nil {
				return err
			}
			defer st.Close()
			ctx := cmd.Context()
			series, err := st.Series(ctx, f)
			if err != nil {
				return err
			}
			if len(series) == 0 && len(args) > 0 {
				return noSeries(st, args)
			}
			if len(b) > 0 && len(series) > 0 { // an empty store (a first CI run) has nothing to bound yet
				if err := compare.CheckBounds(seriesClients(series), b, stats.Options{Confidence: confidence}); err != nil {
					return usage.Wrap(err)
				}
			}
			if len(mb) > 0 && len(series) > 0 {
				resolved, err := microSeriesBounds(series, mb)
				if err != nil {
					return usage.Wrap(err)
				}
				b = append(b, resolved...)
			}
			changes, warns, err := st.Changes(ctx, f, stats.ChangePointOptions{Options: stats.Options{Confidence: confidence}})
			if err != nil {
				return err
			}
			c := &trend.Check{Store: st.Location(), Series: len(series), Changes: changes, Assessments: trend.Judge(changes, b), Warnings: warns}
			text, _ := report.Lookup("text")
			if err := text.Write(stdout, &report.Doc{Check: c}); err != nil {
				return err
			}
			if n := len(c.Outside()); n > 0 {
				return &RegressionError{Msg: fmt.Sprintf("history check: change points outside bounds: %d", n)}
			}
			return nil
		},
	}
	registerVerdict(cmd.Flags(), &bounds, &confidence)
	return cmd
}

// seriesClients returns the client counts of the series, once each
// (micro-benchmarks' have none).
func seriesClients(series []trend.Series) []int {
	var out []int
	seen := map[int]bool{}
	for _, s := range series {
		if !seen[s.Clients] && !s.Micro() {
			seen[s.Clients] = true
			out = append(out, s.Clients)
		}
	}
	return out
}

// splitMicroBounds parts --bound values into the measures' bounds and the
// micro-benchmarks' (micro:PATTERN[@UNIT]=±N%), each a comma list.
func splitMicroBounds(specs []string) (macro, micros []string) {
	for _, spec := range specs {
		for _, part := range strings.Split(spec, ",") {
			if micro.IsBound(part) {
				micros = append(micros, part)
			} else if strings.TrimSpace(part) != "" {
				macro = append(macro, part)
			}
		}
	}
	return macro, micros
}

// microSeriesBounds resolves micro-benchmark bounds against the
// micro-benchmark series as a run's analysis resolves them: each
// series' measure gets the most specific bound that matches it, a bound
// on no series is an error.
func microSeriesBounds(series []trend.Series, bounds []micro.Bound) (stats.Bounds, error) {
	var ms []stats.Measure
	var primary []bool
	seen := map[string]bool{}
	for _, s := range series {
		m, p, ok := micro.SeriesMeasure(s.Key.Measure, s.Unit, s.HigherIsBetter)
		if !ok || !s.Micro() || seen[m.Key()] {
			continue
		}
		seen[m.Key()] = true
		ms, primary = append(ms, m), append(primary, p)
	}
	return micro.ResolveBounds(bounds, ms, primary)
}
