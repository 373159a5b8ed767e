package target

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pgscale/pgscale/internal/secret"
)

// Given is a target as a suite file gives it: a spec as --target takes it
// (Spec), or a target named Name of kind Kind whose argument is written in
// the file as a definition (Def, the YAML as written: a proxy's), which
// the kind's own file reads; Dir is the suite file's directory, where the
// definition's relative paths start.
type Given struct {
	Spec string
	Name string
	Kind Kind
	Def  []byte
	Dir  string
	// Balanced, when set, makes the target its spec's balancing variant
	// (Spec.Balanced): a suite's parameter that derives it from another;
	// Fix is what to give instead where pgscale cannot derive one.
	Balanced bool
	Fix      string
}

// Texts are --target values as Givens.
func Texts(specs []string) []Given {
	out := make([]Given, len(specs))
	for i, s := range specs {
		out[i] = Given{Spec: s}
	}
	return out
}

// String writes the target as --target would take it, any password
// redacted: the spec, or NAME=KIND:DEF with the definition as the kind
// writes it back (a proxy's: an inline JSON object).
func (g Given) String() string {
	if g.Balanced {
		if t, err := g.parse(); err == nil {
			return t.String()
		}
	}
	if g.Def == nil {
		return secret.Redact(g.Spec)
	}
	t, err := g.parse()
	if err != nil {
		return g.Name + "=" + g.Kind.String() + ":{...}"
	}
	return t.String()
}

// Brief is String shortened for a line of text: a proxy's inline
// definition becomes its program's name ("b=proxy:{pgbouncer ...}").
func (g Given) Brief() string { return Brief(g.String()) }

// parse reads one given target: its spec, or its definition by its kind,
// and with Balanced derives its balancing variant.
func (g Given) parse() (Spec, error) {
	t, err := g.parseAsGiven()
	if err != nil || !g.Balanced {
		return t, err
	}
	b, err := t.Balanced()
	var ue *UnbalancedError
	if errors.As(err, &ue) {
		ue.Fix = g.Fix
	}
	if err != nil {
		return t, fmt.Errorf("target %s: %w", t.Name, err)
	}
	return b, nil
}

// parseAsGiven reads the target as its spec or definition says.
func (g Given) parseAsGiven() (Spec, error) {
	if g.Def == nil {
		return ParseSpec(g.Spec)
	}
	bad := func(format string, args ...any) (Spec, error) {
		return Spec{}, fmt.Errorf("target %s: %s", g.Name, fmt.Sprintf(format, args...))
	}
	if err := checkTargetName(g.Name); err != nil {
		return bad("%v", err)
	}
	k := lookup(g.Kind)
	if k == nil || k.def == nil {
		return bad("a %s: target is given by its spec, not a definition", g.Kind)
	}
	a, err := k.def(g.Def, g.Dir)
	if err != nil {
		return bad("%v", err)
	}
	t := Spec{Name: g.Name, Kind: k.name, Arg: a}
	if err := t.fronting(k); err != nil {
		return bad("%v", err)
	}
	return t, nil
}

// ParseGiven is ParseSpecs for targets a suite file gives, some as specs,
// some as definitions. Its errors the edge words: a *SpecError, a
// *TooFewTargetsError, a *BaselineError, or one that names its target.
func ParseGiven(gs []Given, baseline string, atLeast int) ([]Spec, error) {
	if len(gs) < atLeast {
		return nil, &TooFewTargetsError{AtLeast: atLeast, Got: len(gs)}
	}
	var out []Spec
	seen := map[string]bool{}
	base := -1
	for _, g := range gs {
		t, err := g.parse()
		if err != nil {
			return nil, err
		}
		if seen[t.Name] {
			return nil, fmt.Errorf("two targets are named %q; give each its own name", t.Name)
		}
		seen[t.Name] = true
		if t.Name == baseline {
			base = len(out)
		}
		out = append(out, t)
	}
	if err := resolveFronts(out); err != nil {
		return nil, err
	}
	if baseline != "" {
		if base < 0 {
			return nil, &BaselineError{Baseline: baseline, Targets: names(out)}
		}
		b := out[base]
		copy(out[1:base+1], out[:base])
		out[0] = b
	}
	return out, nil
}

// Expand returns g with every {{name}} that expand knows replaced, in its
// spec or definition (a suite's parameters); other templates (a proxy's
// own) are left as they are.
func (g Given) Expand(expand func(string) string) Given {
	if g.Def == nil {
		g.Spec = expand(g.Spec)
		return g
	}
	g.Def = []byte(expand(string(g.Def)))
	return g
}

// Templates is the text of g that may hold a suite's {{name}} templates.
func (g Given) Templates() string {
	if g.Def == nil {
		return g.Spec
	}
	return strings.TrimSpace(string(g.Def))
}

// TooFewTargetsError says a run was given Got targets and needs AtLeast.
type TooFewTargetsError struct{ AtLeast, Got int }

func (e *TooFewTargetsError) Error() string {
	if e.Got == 0 {
		return "name a target: " + Forms()
	}
	return fmt.Sprintf("%d targets given, at least %d needed", e.Got, e.AtLeast)
}

// BaselineError says the baseline named no target: Targets are the
// targets' names ("a, b").
type BaselineError struct {
	Baseline, Targets string
	// Word is what the edge calls what named the baseline, said before
	// it (--baseline, a suite file's baseline: key). Empty, "the baseline".
	Word string
}

func (e *BaselineError) Error() string {
	word := e.Word
	if word == "" {
		word = "the baseline"
	}
	return fmt.Sprintf("%s %q names no target (targets: %s)", word, e.Baseline, e.Targets)
}
