// Package cli builds pgscale's command tree: one file per subcommand, each
// turning flags (and a suite file) into a typed spec — parsed and checked
// once, here, its mistakes usage errors in the flags' words —, handing it
// to a schedule (internal/schedule/...) or a comparison
// (internal/compare), and rendering what comes back (internal/report).
// It runs no SQL and starts no goroutine of its own.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/pgscale/pgscale/internal/usage"
)

// Version is the pgscale version, recorded in every result file.
var Version = "0.1.0-dev"

// Main runs pgscale with args, writing to stdout and stderr, and returns the
// process exit code. Tests call it in-process.
func Main(args []string, stdout, stderr io.Writer) int {
	root := newRoot(append([]string{"pgscale"}, args...), stdout, stderr)
	root.SetArgs(args)
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	var err error
	var cmd *cobra.Command
	if _, _, ferr := root.Find(args); ferr != nil {
		err = usage.Wrap(ferr) // an unknown subcommand is bad usage, not a run that failed
	} else {
		cmd, err = root.ExecuteC()
	}
	var ee *ExitError
	if err != nil && !errors.As(err, &ee) {
		fmt.Fprintf(stderr, "pgscale: %s\n", onceEach(worded(cmd, err)))
	}
	return ExitCode(err)
}

// onceEach keeps the first of each line a message repeats: errors joined
// from several targets or files that failed alike say it once.
func onceEach(msg string) string {
	lines := strings.Split(msg, "\n")
	seen := make(map[string]bool, len(lines))
	out := lines[:0]
	for _, l := range lines {
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
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
		newABCmd(argv, stdout, stderr),
		newSuiteCmd(argv, stdout, stderr),
		newCompareCmd(stdout),
		newReportCmd(stdout),
		newPgbenchCmd(argv, stdout, stderr),
		newHistoryCmd(stdout),
		newAgentCmd(stdout, stderr),
		newBuildCmd(stdout, stderr),
		newMicroCmd(stdout, stderr),
		newBisectCmd(argv, stdout, stderr),
	)
	root.SetOut(stdout)
	root.SetErr(stderr)
	// Flag errors are usage errors (exit 2), and so are the wrong number
	// of arguments (cobra's Args checks return plain errors, which exited
	// 3 as if a server had failed).
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usage.Wrap(err) })
	usageArgs(root)
	return root
}

// usageArgs makes every command's argument check's error a usage error,
// naming the command.
func usageArgs(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return usage.Wrap(fmt.Errorf("%s: %w", strings.TrimPrefix(cmd.CommandPath(), "pgscale "), err))
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		usageArgs(sub)
	}
}

// interruptible returns ctx cancelled by Ctrl-C or SIGTERM: the runners
// then stop, write what they measured and clean up.
func interruptible(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// colorTerminal reports whether w is a terminal that shows colour.
func colorTerminal(w io.Writer) bool {
	return isTerminal(w) && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
}
