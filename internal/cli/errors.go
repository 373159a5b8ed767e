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

// RegressionError says a comparison found measures outside their bounds.
// Exit code 1.
type RegressionError struct{ Msg string }

func (e *RegressionError) Error() string { return e.Msg }

// ExitCode maps an error returned by a subcommand to the process exit
// code: a usage error (usage.Is) is 2, a regression 1, any other error a
// run that could not complete, 3.
func ExitCode(err error) int {
	var reg *RegressionError
	switch {
	case err == nil:
		return ExitOK
	case usage.Is(err):
		return ExitUsage
	case errors.As(err, &reg):
		return ExitRegression
	default:
		return ExitIncomplete
	}
}
