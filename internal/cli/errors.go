package cli

import (
	"errors"
	"fmt"

	"github.com/pgscale/pgscale/internal/usage"
)

// Exit codes, as the README's "Exit codes" documents them.
const (
	ExitOK           = 0 // success, and any verdict passed (or no bounds were given)
	ExitRegression   = 1 // a comparison found a measure past its bound
	ExitUsage        = 2 // bad flags, bad input files, bad scripts
	ExitIncomplete   = 3 // the run could not complete; partial results were written
	ExitInconclusive = 4 // a bounded measure could not be decided (--inconclusive maps it)
)

// RegressionError says a comparison found measures past their bounds.
// Exit code 1.
type RegressionError struct{ Msg string }

func (e *RegressionError) Error() string { return e.Msg }

// InconclusiveError says a comparison could not decide some bounded
// measure: it neither passed nor failed. Exit code 4.
type InconclusiveError struct{ Msg string }

func (e *InconclusiveError) Error() string { return e.Msg }

// ExitError is a subcommand's own exit code, its message already
// printed: pgscale pgbench exits as pgbench does.
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// ExitCode maps an error returned by a subcommand to the process exit
// code: a usage error (usage.Is) is 2, a regression 1, an inconclusive
// verdict 4, any other error a run that could not complete, 3; an
// ExitError says its own.
func ExitCode(err error) int {
	var reg *RegressionError
	var inc *InconclusiveError
	var ee *ExitError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ee):
		return ee.Code
	case usage.Is(err):
		return ExitUsage
	case errors.As(err, &reg):
		return ExitRegression
	case errors.As(err, &inc):
		return ExitInconclusive
	default:
		return ExitIncomplete
	}
}
