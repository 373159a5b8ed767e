package cli

import (
	"bytes"
	"io"

	"github.com/spf13/cobra"

	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/trend"
	"github.com/pgscale/pgscale/internal/usage"
)

// newHistoryShowCmd is `pgscale history show`: every point of the
// matching series, as text or as an HTML page of trend charts.
func newHistoryShowCmd(stdout io.Writer, open opener) *cobra.Command {
	var format, output string
	cmd := &cobra.Command{
		Use:   "show SERIES|FILTER",
		Short: "Show the points of series as a table, or as an HTML page of trend charts",
		Long: `Show every point of the matching series in time order: value, interval,
rounds, commit (or label), time, result, and the change points found. With
--format html, one self-contained page with a trend chart per series:
points with their intervals, the means between change points, change
points marked, the commit on hover.

` + filterHelp(),
		RunE: func(cmd *cobra.Command, args []string) error {
			rf, err := report.Lookup(format)
			if err != nil || !rf.Shows(report.KindHistory) {
				return usage.Errorf("--format %q: want %s", format, historyFormats())
			}
			st, f, err := open.filtered(cmd, args)
			if err != nil {
				return err
			}
			defer st.Close()
			hs, err := st.Export(cmd.Context(), f)
			if err != nil {
				return err
			}
			if len(hs) == 0 {
				return noSeries(st, args)
			}
			h := &report.History{Store: st.Location(), Series: hs, Changes: trend.ChangePointsOf(hs, stats.ChangePointOptions{})}
			var buf bytes.Buffer
			if err := rf.Write(&buf, &report.Doc{History: h}); err != nil {
				return err
			}
			return writeOutput(stdout, output, buf.Bytes())
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", historyFormats())
	cmd.Flags().StringVarP(&output, "output", "o", "", "write to FILE instead of stdout")
	return cmd
}

// historyFormats names the formats that show the history.
func historyFormats() string {
	return report.Names(func(f report.Format) bool { return f.Shows(report.KindHistory) })
}
