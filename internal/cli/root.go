// Package cli builds pgscale's command tree: one file per subcommand, flag
// parsing and wiring only.
package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// Version is the pgscale version, recorded in every result file.
var Version = "0.1.0-dev"

// Main runs pgscale with args, writing to stdout and stderr, and returns the
// process exit code. Tests call it in-process.
func Main(args []string, stdout, stderr io.Writer) int {
	root := newRoot(append([]string{"pgscale"}, args...), stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err != nil {
		fmt.Fprintf(stderr, "pgscale: %v\n", err)
	}
	return ExitCode(err)
}

// newRoot builds the command tree; argv is the command line as typed, for
// result files.
func newRoot(argv []string, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "pgscale",
		Short:         "Measure how a PostgreSQL workload scales with concurrency",
		Version:       Version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(
		newRunCmd(argv, stdout, stderr),
		newInitCmd(stdout, stderr),
		newABCmd(stdout, stderr),
		newCompareCmd(stdout),
		newReportCmd(stdout, stderr),
	)
	root.SetOut(stdout)
	root.SetErr(stderr)
	// Flag errors are usage errors (exit 2).
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &UsageError{Err: err}
	})
	return root
}
