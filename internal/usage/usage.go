// Package usage marks errors that are the user's mistake — a wrong flag, a
// bad script or suite file, a target that cannot exist — as opposed to a
// run that could not complete. The command line maps them to exit code 2;
// every layer that finds such a mistake wraps it here, once.
package usage

import (
	"errors"
	"fmt"
)

// Error is a mistake in what the user asked for.
type Error struct{ Err error }

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an Error with a formatted message.
func Errorf(format string, args ...any) error {
	return &Error{Err: fmt.Errorf(format, args...)}
}

// Wrap marks err as the user's mistake; nil stays nil.
func Wrap(err error) error {
	if err == nil || Is(err) {
		return err
	}
	return &Error{Err: err}
}

// Is reports whether err, or an error it wraps, is the user's mistake.
func Is(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// Prefix adds context to err, keeping its kind: "target a: " + err.
func Prefix(prefix string, err error) error {
	if err == nil {
		return nil
	}
	if Is(err) {
		return &Error{Err: fmt.Errorf("%s%w", prefix, err)}
	}
	return fmt.Errorf("%s%w", prefix, err)
}
