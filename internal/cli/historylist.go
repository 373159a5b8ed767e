package cli

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/pgscale/pgscale/internal/report"
)

// newHistoryListCmd is `pgscale history list`: the series of the store.
func newHistoryListCmd(stdout io.Writer, open opener) *cobra.Command {
	return &cobra.Command{
		Use:   "list [FILTER]",
		Short: "List the series with their point counts and newest values",
		Long:  "List the series of the store: number, key, point count, the newest value with its commit and time.\n\n" + filterHelp(),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, f, err := open.filtered(cmd, args)
			if err != nil {
				return err
			}
			defer st.Close()
			series, err := st.Series(cmd.Context(), f)
			if err != nil {
				return err
			}
			text, _ := report.Lookup("text")
			return text.Write(stdout, &report.Doc{Series: &report.Series{Store: st.Location(), Series: series}})
		},
	}
}
