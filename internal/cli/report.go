package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/result"
)

func newReportCmd(stdout, _ io.Writer) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "report FILE...",
		Short: "Show result files: sweep table, each step's evidence, the diagnosis",
		Long: `Render result files for a terminal (--format text) or a pull request
(--format markdown): the sweep with per-transaction costs and a verdict per
step, the evidence the probes gathered, and the diagnosis, computed again
from the file. Files of every result version are read.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return Usagef("report needs at least one result file")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := report.ParseFormat(format)
			if err != nil {
				return &UsageError{Err: err}
			}
			for i, path := range args {
				file, err := result.Read(path)
				if err != nil {
					return &UsageError{Err: err}
				}
				if i > 0 {
					fmt.Fprintln(stdout)
				}
				report.File(stdout, path, file, f)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "text or markdown")
	return cmd
}
