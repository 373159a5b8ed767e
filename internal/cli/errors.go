package cli

import (
	"errors"

	"github.com/pgscale/pgscale/internal/usage"
)

// Exit codes, as documented in the README.
const (
	ExitOK         = 0 // success, and any verdict passed
	ExitRegression = 1 // a comparison found a measure outside its bounds
	ExitUsage      = 2 // bad flags, bad input files, bad scripts
	ExitIncomplete = 3 // the run could not complete; partial results were written
)

// UsageError is a mistake in what the user asked for: a wrong flag, a bad
// script, a missing file. The CLI maps it to exit code 2.
type UsageError = usage.Error

// Usagef returns a UsageError with a formatted message.
func Usagef(format string, args ...any) error { return usage.Errorf(format, args...) }

// IncompleteError says a run could not complete (server unreachable or gone,
// interrupted); partial results may have been written. Exit code 3.
type IncompleteError struct{ Err error }

func (e *IncompleteError) Error() string { return e.Err.Error() }
func (e *IncompleteError) Unwrap() error { return e.Err }

// RegressionError says a comparison found measures outside their bounds. Exit code 1.
type RegressionError struct{ Msg string }

func (e *RegressionError) Error() string { return e.Msg }

// ExitCode maps an error returned by a subcommand to the process exit code.
func ExitCode(err error) int {
	var (
		usage *UsageError
		inc   *IncompleteError
		reg   *RegressionError
	)
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &usage):
		return ExitUsage
	case errors.As(err, &reg):
		return ExitRegression
	case errors.As(err, &inc):
		return ExitIncomplete
	default:
		return ExitIncomplete
	}
}
