package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/trend"
	"github.com/pgscale/pgscale/internal/usage"
)

// newHistoryAckCmd is `pgscale history ack`: a change point marked as
// known.
func newHistoryAckCmd(stdout io.Writer, open opener) *cobra.Command {
	var all bool
	var resultID int64
	var note string
	cmd := &cobra.Command{
		Use:   "ack FILTER|--all [--result N] [--note TEXT]",
		Short: "Mark a change point as known, so check reports only later ones",
		Long: `Acknowledge a change point in each matching series: the newest one check
reports, or, with --result N, the change at result N (the first point
after it; check prints it). From then on check reports only change points
after it. A commit that moved every series is acknowledged everywhere with
--all --result N.

` + filterHelp(),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && !all {
				return usage.Errorf("history ack needs a FILTER naming the series (or --all)")
			}
			st, f, err := open.filtered(cmd, args)
			if err != nil {
				return err
			}
			defer st.Close()
			ctx := cmd.Context()
			hs, err := st.Export(ctx, f)
			if err != nil {
				return err
			}
			if len(hs) == 0 {
				return noSeries(st, args)
			}
			acked := 0
			for _, h := range hs {
				at, what := ackPoint(h, resultID)
				if at == 0 {
					continue
				}
				if err := st.Ack(ctx, h.ID, at, note); err != nil {
					return err
				}
				acked++
				fmt.Fprintf(stdout, "acknowledged: series %d (%s) at result %d%s\n", h.ID, h.Key, at, what)
			}
			switch {
			case acked == 0 && resultID != 0:
				return usage.Errorf("no matching series has a point from result %d", resultID)
			case acked == 0:
				fmt.Fprintf(stdout, "nothing to acknowledge: no change point since the acknowledged ones in %d series\n", len(hs))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "every series of the store")
	cmd.Flags().Int64Var(&resultID, "result", 0, "the change at this result (the first point after it), as check prints it")
	cmd.Flags().StringVar(&note, "note", "", "why the change is known (kept with the acknowledgement)")
	return cmd
}

// ackPoint returns the result to acknowledge in h and what the change
// there is: the one given, when h has a point from it, else the newest
// change point after the acknowledged one; 0 when there is none.
func ackPoint(h trend.History, resultID int64) (int64, string) {
	cs, _ := h.ChangePoints(stats.ChangePointOptions{})
	if resultID != 0 {
		for _, p := range h.Points {
			if p.ResultID == resultID {
				for _, c := range cs {
					if c.After.ResultID == resultID {
						return resultID, ": " + stats.FormatChange(c.Change, c.Lo, c.Hi)
					}
				}
				return resultID, " (no change point found there)"
			}
		}
		return 0, ""
	}
	for i := len(cs) - 1; i >= 0; i-- {
		if !cs[i].Acked {
			return cs[i].After.ResultID, ": " + stats.FormatChange(cs[i].Change, cs[i].Lo, cs[i].Hi)
		}
	}
	return 0, ""
}
