package target

import (
	"errors"
	"fmt"
)

// SpecError is a target spec that cannot be read: Spec as given (any
// password redacted) and Err why, in one line without the spec. The edge
// words it, as the flag or the suite file that gave the spec says it, by
// setting Word before the error is said (issue 45: the target layer speaks
// of no flag).
type SpecError struct {
	Spec string
	Err  error
	// Unnamed says the spec is a target without its name (KIND:ARG,
	// ParseUnnamed's), which the error calls "target" whoever gave it.
	Unnamed bool
	// Word is what the edge calls what gave the spec, said before it; a
	// named target's spec inside it (a server of its own, of='SPEC') is
	// said with Word too, or, when the spec is Unnamed, with Word alone.
	// Empty, "target".
	Word string
}

// Error says the spec and why, as the edge words it.
func (e *SpecError) Error() string { return e.text(e.Word) }

// Unwrap returns why.
func (e *SpecError) Unwrap() error { return e.Err }

// text is the error with word for what gave a named target's spec.
func (e *SpecError) text(word string) string {
	label := word
	if e.Unnamed || label == "" {
		label = "target"
	}
	why := e.Err.Error()
	if o, ok := e.Err.(*ownError); ok {
		why = o.text(word)
	}
	return fmt.Sprintf("%s %q: %s", label, e.Spec, why)
}

// ownError is a server of a target's own (of='SPEC') that cannot be read:
// err is ParseSpec's.
type ownError struct {
	of  string
	err error
}

func (e *ownError) Error() string { return e.text("") }

func (e *ownError) Unwrap() error { return e.err }

// text is the error with word for what gave a named target's spec.
func (e *ownError) text(word string) string {
	var se *SpecError
	if errors.As(e.err, &se) {
		return fmt.Sprintf("of='%s': %s", e.of, se.text(word))
	}
	return fmt.Sprintf("of='%s': %v", e.of, e.err)
}

// ErrPoolerOf says run's pooler named the targets it fronts (of=), which
// are an A/B run's: run's pooler fronts run's one server.
var ErrPoolerOf = errors.New("of= names an ab target; run's pooler fronts run's server")
