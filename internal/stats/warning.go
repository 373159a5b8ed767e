package stats

import "fmt"

// WarningKind classifies a Warning so callers can react to some kinds.
type WarningKind int

const (
	// TooFew: too few values for an interval or a test, or for one of the
	// cross-checks; the numbers that could be computed are still there.
	TooFew WarningKind = iota + 1
	// LeftOut: zero, negative or non-finite values were left out, or a
	// paired comparison got slices of different lengths.
	LeftOut
	// NoVariation: the values (or ratios) are all identical, so there is
	// no spread to build an interval from.
	NoVariation
	// Disagree: two methods that should agree do not (the t-test and the
	// signed-rank test, for example); the data may be non-normal.
	Disagree
	// Autocorrelated: batch means of a per-second series are still
	// correlated, so its interval is likely too narrow.
	Autocorrelated
	// Unpaired: a note that a comparison is unpaired and so does not
	// cancel drift between rounds.
	Unpaired
	// BadOption: an option was out of range and its default was used.
	BadOption
	// AANotNull: an A/A run showed a significant difference between the
	// two sides, which should be the same.
	AANotNull
)

// String names the kind in lower case, e.g. "too few values".
func (k WarningKind) String() string {
	switch k {
	case TooFew:
		return "too few values"
	case LeftOut:
		return "values left out"
	case NoVariation:
		return "no variation"
	case Disagree:
		return "methods disagree"
	case Autocorrelated:
		return "autocorrelated"
	case Unpaired:
		return "unpaired"
	case BadOption:
		return "bad option"
	case AANotNull:
		return "A/A difference"
	}
	return fmt.Sprintf("WarningKind(%d)", int(k))
}

// Warning is a statistical caveat that travels next to the numbers it
// concerns. It is an error so it can sit in a []error as benchmath's do, but
// it never means the computation failed.
type Warning struct {
	// Kind classifies the caveat.
	Kind WarningKind
	// Msg says what is wrong, naming the measure where there is one.
	Msg string
}

// Error returns the message.
func (w *Warning) Error() string { return w.Msg }

func warnf(k WarningKind, format string, args ...any) error {
	return &Warning{Kind: k, Msg: fmt.Sprintf(format, args...)}
}
