package agent

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/pgscale/pgscale/internal/usage"
)

// OptionError is an option of a coordinated run, an agent or their
// manifest that cannot be: Field names it as Config, AgentConfig or
// ManifestOptions does (Agents, DSN, Coordinator, Image, Secret, Name,
// CPU, Memory), Value is the value refused when there is one, Missing says
// it was not given, and Err says why. The command line words it in the
// flag that gives the option, as the user gave it.
type OptionError struct {
	Field   string
	Value   string
	Missing bool
	Err     error
}

// Error says which field and why.
func (e *OptionError) Error() string {
	switch {
	case e.Missing:
		return e.Field + " is missing: " + e.Err.Error()
	case e.Value != "":
		return fmt.Sprintf("%s %q: %v", e.Field, e.Value, e.Err)
	}
	return e.Field + ": " + e.Err.Error()
}

// Unwrap returns why.
func (e *OptionError) Unwrap() error { return e.Err }

// optionError is the usage error of field's value, refused because of why.
func optionError(field, value string, why error) error {
	return usage.Wrap(&OptionError{Field: field, Value: value, Err: why})
}

// notGiven is the usage error of field left out; why says what it is for.
func notGiven(field, why string) error {
	return usage.Wrap(&OptionError{Field: field, Missing: true, Err: errors.New(why)})
}

// CoordinationError is a failure to reach the coordination database: the
// command line knows where its connection string came from.
type CoordinationError struct{ Err error }

// Error says it is the coordination database's.
func (e *CoordinationError) Error() string { return "coordination database: " + e.Err.Error() }

// Unwrap returns the failure.
func (e *CoordinationError) Unwrap() error { return e.Err }

// atLeastOne is the usage error of n agents, fewer than one.
func atLeastOne(n int) error {
	return optionError("Agents", "", fmt.Errorf("must be at least 1, got %d", n))
}

// NoRunError is an agent that found no open run of its job, in the
// coordination database Where, to join within Wait. The command line says
// how to start one.
type NoRunError struct {
	Job, Where string
	Wait       time.Duration
}

// Error says so, and to start a coordinated run of the job.
func (e *NoRunError) Error() string {
	return e.With("start a run of job " + strconv.Quote(e.Job) + " on agents, coordinated through this database")
}

// With is Error with how, how to start the run, in the parentheses that
// end it.
func (e *NoRunError) With(how string) string {
	return fmt.Sprintf("no open run of job %q on %s within %v (%s)", e.Job, e.Where, e.Wait, how)
}
