package workload

import (
	"errors"

	"github.com/pgscale/pgscale/internal/usage"
)

// OptionError is an option of the workload or of its data that pgbench
// would refuse: Field names it as InitOptions or Spec does (Scale,
// Fillfactor, Partitions, PartitionMethod, Steps; Protocol, Seed) and
// Err says why ("must be at least 1"). The edge words it in the flag
// that gives the option, as the user gave it.
type OptionError struct {
	Field string
	Err   error
}

// Error says which field and why.
func (e *OptionError) Error() string { return e.Field + ": " + e.Err.Error() }

// Unwrap returns why.
func (e *OptionError) Unwrap() error { return e.Err }

// optionError is the usage error of field's value, refused because of err.
func optionError(field string, err error) error {
	return usage.Wrap(&OptionError{Field: field, Err: err})
}

// mustBe is the usage error of field's value, which must be as rule says
// ("at least 1").
func mustBe(field, rule string) error { return optionError(field, errors.New("must be "+rule)) }
