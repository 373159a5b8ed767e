package suite

import (
	"errors"
	"fmt"

	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
)

// installed is the target of a suite that names none and is given none:
// the installed server, settings as they are.
var installed = target.Given{Spec: "installed=settings:"}

// Targets are the targets a suite run runs on, each parsed once where
// the command line and the file meet (Resolve): --target's in place of
// the suite's, in every cell; else the suite's, its parameters' values
// in their templates, and for the cells a cells: entry matches, its
// targets in place of the suite's of the same names; else the installed
// server.
type Targets struct {
	// Specs are the targets, the baseline first; Given the same as
	// given, in the order given (for lines of text).
	Specs []target.Spec
	Given []target.Given
	// Replaced says --target replaced the suite's targets (and so every
	// cell's own).
	Replaced bool
	// suite and baseline are what the cells' own targets are read from.
	suite    *Suite
	baseline string
}

// CellTargets are the targets one cell runs on: Specs (the baseline
// first) and Given (as given); Own says they are the cell's own (a
// cells: entry gave some).
type CellTargets struct {
	Specs []target.Spec
	Given []target.Given
	Own   bool
}

// Cell returns the targets cell c runs on: the run's, or those of its own
// a cells: entry gives it (not with --target), parsed here, when the cell
// is about to be checked, its mistakes usage errors naming the cell.
func (t *Targets) Cell(c Cell) (CellTargets, error) {
	if t.Replaced {
		return CellTargets{Specs: t.Specs, Given: t.Given}, nil
	}
	gs, own := t.suite.CellTargets(c)
	if !own {
		return CellTargets{Specs: t.Specs, Given: t.Given}, nil
	}
	specs, err := parseTargets(gs, t.baseline, false)
	if err != nil {
		return CellTargets{}, usage.Prefix(fmt.Sprintf("cell %s: ", c.Key()), usage.Wrap(err))
	}
	return CellTargets{Specs: specs, Given: gs, Own: true}, nil
}

// Resolve parses the targets a run of the suite runs on: given (--target
// values) in place of the suite's, with baseline (--baseline) naming
// theirs; else the suite's, its parameters' values (--param) in their
// templates (a cell's own are parsed as it is checked: Cell). Every
// mistake is a usage error.
func (s *Suite) Resolve(given []string, baseline string) (*Targets, error) {
	t := &Targets{Given: target.Texts(given), Replaced: len(given) > 0, suite: s}
	if !t.Replaced {
		t.Given, baseline = s.TargetSpecs(), s.Baseline
		if len(t.Given) == 0 {
			t.Given, baseline = []target.Given{installed}, ""
		}
	}
	t.baseline = baseline
	var err error
	if t.Specs, err = parseTargets(t.Given, baseline, t.Replaced); err != nil {
		return nil, usage.Wrap(err)
	}
	return t, nil
}

// parseTargets reads targets as given, the baseline first: the one place
// the suite's targets (and --target's in their place) are parsed. Its
// errors name the flags (--target, --baseline) when flags gave them, and
// the file's keys (target, baseline) when the file did.
func parseTargets(gs []target.Given, baseline string, flags bool) ([]target.Spec, error) {
	specs, err := target.ParseGiven(gs, baseline, 1)
	if !flags {
		return specs, fileWords(err)
	}
	var se *target.SpecError
	var few *target.TooFewTargetsError
	var base *target.BaselineError
	switch {
	case errors.As(err, &few):
		return nil, fmt.Errorf("name a target with --target %s", target.Forms())
	case errors.As(err, &base):
		base.Word = "--baseline"
	case errors.As(err, &se):
		se.Word = "--target"
	}
	return specs, err
}

// fileWords words a target error as the suite file gave it: its baseline:
// key, its targets: entries (the target package's own word, "target").
func fileWords(err error) error {
	var base *target.BaselineError
	if errors.As(err, &base) {
		base.Word = "baseline"
	}
	return err
}

// targetsPath is the node of the suite file an error of its targets is
// at: the baseline: key, the targets: entry that does not parse, or the
// targets: list.
func targetsPath(gs []target.Given, err error) string {
	var base *target.BaselineError
	var se *target.SpecError
	switch {
	case errors.As(err, &base):
		return "$.baseline"
	case errors.As(err, &se):
		for i, g := range gs {
			if g.Spec == se.Spec {
				return fmt.Sprintf("$.targets[%d]", i)
			}
		}
	}
	return "$.targets"
}
