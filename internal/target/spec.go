package target

import (
	"fmt"
	"strings"

	"github.com/pgscale/pgscale/internal/secret"
)

// Spec is one target as given to --target (or, for run, by --dsn or
// its absence, and --pooler).
type Spec struct {
	// Name names the target in reports, result files and bounds; empty
	// for run's single target.
	Name string
	// Kind says how it is reached, and Arg is the rest of the spec as its
	// kind read it.
	Kind Kind
	Arg  Arg
	// Of names the targets whose servers a target of a kind that fronts
	// others (a pooler) stands in front of; ParseSpecs sets the default
	// (the first target that is not in front of another) and Front to
	// copies of those targets' specs.
	Of []string
	// Front are the specs of the targets in Of, in its order: another
	// target's, or for run --pooler the ephemeral cluster or --dsn.
	Front []Spec
}

// Existing is the target of an existing server that dsn names; an empty
// dsn is the one the libpq environment (PGHOST...) names.
func Existing(dsn string) Spec { return Spec{Kind: DSN, Arg: DSNArg{DSN: dsn}} }

// ForRun is run's target: the server --dsn names, or the one the libpq
// environment (PGHOST...) points at, or else an ephemeral cluster from
// the default binaries.
func ForRun(dsn string) Spec {
	if dsn != "" || EnvPointsAtServer() {
		return Existing(dsn)
	}
	return Spec{Kind: Settings, Arg: SettingsArg{}}
}

// FromSource is run's target with --pg-src: an ephemeral cluster from
// PostgreSQL built from source, arg as a src: target takes it.
func FromSource(arg string) (Spec, error) {
	a, err := srcKind.parse(arg)
	if err != nil {
		return Spec{}, fmt.Errorf("--pg-src %q: %v", arg, err)
	}
	return Spec{Kind: Src, Arg: a}, nil
}

// WithPooler is run's target behind a pooler: pooler is --pooler's value,
// KIND[:ARG] of a kind that fronts a server (pgbouncer[:k=v,...]), and
// front the server it fronts (ForRun's).
func WithPooler(front Spec, pooler string) (Spec, error) {
	bad := func(format string, args ...any) (Spec, error) {
		return Spec{}, fmt.Errorf("--pooler %q: %s", pooler, fmt.Sprintf(format, args...))
	}
	name, arg, _ := strings.Cut(pooler, ":")
	k := lookup(Kind(strings.TrimSpace(name)))
	if k == nil || k.fronts == 0 {
		return bad("want %s", PoolerForms())
	}
	of, arg, err := takeOf(arg)
	if err != nil {
		return bad("%v", err)
	}
	if len(of) > 0 {
		return bad("of= names an ab target; run's pooler fronts the ephemeral cluster or --dsn")
	}
	a, err := k.parse(arg)
	if err != nil {
		return bad("%v", err)
	}
	return Spec{Kind: k.name, Arg: a, Front: []Spec{front}}, nil
}

// kind is the spec's registered kind; a kind not registered (a zero Spec)
// has no property, and Open refuses it.
func (t Spec) kind() *kind {
	if k := lookup(t.Kind); k != nil {
		return k
	}
	return &kind{name: t.Kind}
}

// Ephemeral reports whether pgscale starts the target's server itself; a
// pooler's server is the one it fronts.
func (t Spec) Ephemeral() bool {
	k := t.kind()
	if k.fronts == 0 {
		return k.ephemeral
	}
	for _, f := range t.Front {
		if f.Ephemeral() {
			return true
		}
	}
	return false
}

// String returns the spec as written, with any password redacted:
// NAME=KIND:ARG, or KIND:ARG for an unnamed target.
func (t Spec) String() string {
	var parts []string
	for _, of := range t.Of {
		parts = append(parts, "of="+of)
	}
	arg := ""
	if t.Arg != nil {
		arg = t.Arg.String()
	}
	if arg != "" || len(parts) == 0 {
		parts = append(parts, arg)
	}
	s := t.Kind.String() + ":" + strings.Join(parts, ",")
	if t.Name != "" {
		s = t.Name + "=" + s
	}
	return s
}

// ParseSpec reads NAME=KIND:ARG, a target of one of the registered kinds
// (Forms: NAME=bin:DIR, NAME=settings:k=v,..., ...). A value holding a
// comma is written in single quotes: settings:shared_preload_libraries='a,b'.
// It checks the form only: that DIR holds a server, or that the
// connection string parses, is for Open to find out; which targets a
// pooler fronts is ParseSpecs'.
func ParseSpec(spec string) (Spec, error) {
	bad := func(format string, args ...any) (Spec, error) {
		return Spec{}, fmt.Errorf("--target %q: %s", secret.Redact(spec), fmt.Sprintf(format, args...))
	}
	name, rest, ok := strings.Cut(spec, "=")
	name = strings.TrimSpace(name)
	if !ok {
		return bad("want %s", Forms())
	}
	if err := checkTargetName(name); err != nil {
		return bad("%v", err)
	}
	kindName, arg, ok := strings.Cut(rest, ":")
	if !ok {
		return bad("no kind after %s=: write %s", name, forms(""))
	}
	k := lookup(Kind(strings.TrimSpace(kindName)))
	if k == nil {
		return bad("unknown kind %q: want %s", kindName, kindsWhere(func(*kind) bool { return true }))
	}
	t := Spec{Name: name, Kind: k.name}
	if k.fronts > 0 {
		var err error
		if t.Of, arg, err = takeOf(arg); err != nil {
			return bad("%v", err)
		}
		if len(t.Of) > k.fronts {
			return bad("a %s target fronts at most %d target(s), and of= names %d", k.name, k.fronts, len(t.Of))
		}
	}
	a, err := k.parse(arg)
	if err != nil {
		return bad("%v", err)
	}
	t.Arg = a
	return t, nil
}

// takeOf takes the of=NAME items out of a comma list (commas in single
// quotes do not count) and returns the names and the rest of the list.
func takeOf(arg string) (of []string, rest string, err error) {
	items, err := splitItems(arg)
	if err != nil {
		return nil, "", err
	}
	var kept []string
	for _, it := range items {
		k, v, ok := strings.Cut(it, "=")
		if !ok || strings.TrimSpace(k) != "of" {
			kept = append(kept, it)
			continue
		}
		v = strings.TrimSpace(v)
		if err := checkTargetName(v); err != nil {
			return nil, "", fmt.Errorf("of=: %v", err)
		}
		of = append(of, v)
	}
	return of, strings.Join(kept, ","), nil
}

// checkTargetName accepts names that are safe as file names, benchfmt
// values and bound-free words: letters, digits, '.', '_' and '-', starting
// with a letter or digit.
func checkTargetName(name string) error {
	if name == "" {
		return fmt.Errorf("empty target name")
	}
	for i, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || i > 0 && (r == '.' || r == '_' || r == '-')
		if !ok {
			return fmt.Errorf("target name %q: use letters, digits, '.', '_' and '-', starting with a letter or digit", name)
		}
	}
	if len(name) > 64 {
		return fmt.Errorf("target name %q is longer than 64 characters", name)
	}
	return nil
}

// splitItems splits a comma list on the commas outside single quotes,
// keeping the quotes, and drops empty items.
func splitItems(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	quoted := false
	flush := func() {
		if p := strings.TrimSpace(cur.String()); p != "" {
			out = append(out, p)
		}
		cur.Reset()
	}
	for _, r := range s {
		switch {
		case r == '\'':
			quoted = !quoted
			cur.WriteRune(r)
		case r == ',' && !quoted:
			flush()
		default:
			cur.WriteRune(r)
		}
	}
	if quoted {
		return nil, fmt.Errorf("unbalanced single quote in settings %q", s)
	}
	flush()
	return out, nil
}

// splitSettings splits k=v,k=v on commas outside single quotes, and drops
// the quotes around a whole value.
func splitSettings(s string) ([]string, error) {
	items, err := splitItems(s)
	if err != nil {
		return nil, err
	}
	for i, p := range items {
		if k, v, ok := strings.Cut(p, "="); ok {
			v = strings.TrimSpace(v)
			if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
				v = v[1 : len(v)-1]
			}
			items[i] = strings.TrimSpace(k) + "=" + v
		}
	}
	return items, nil
}

// parseSettings reads k=v,... (quotes as for splitSettings) as settings.
func parseSettings(arg string) ([]Setting, error) {
	parts, err := splitSettings(arg)
	if err != nil {
		return nil, err
	}
	var out []Setting
	for _, p := range parts {
		s, err := ParseSetting(p)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// ParseSpecs reads every --target and puts the baseline first: the target
// named baseline, or the first given when baseline is empty. It needs at
// least atLeast targets and distinct names.
func ParseSpecs(specs []string, baseline string, atLeast int) ([]Spec, error) {
	if len(specs) < atLeast {
		if atLeast == 1 {
			return nil, fmt.Errorf("name a target with --target %s", Forms())
		}
		return nil, fmt.Errorf("an A/B run needs at least %d targets (--target NAME=SPEC, repeated); got %d", atLeast, len(specs))
	}
	var out []Spec
	seen := map[string]bool{}
	base := -1
	for _, s := range specs {
		t, err := ParseSpec(s)
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
			return nil, fmt.Errorf("--baseline %q names no target (targets: %s)", baseline, names(out))
		}
		b := out[base]
		copy(out[1:base+1], out[:base])
		out[0] = b
	}
	return out, nil
}

// resolveFronts sets, for every target of a kind that fronts others, the
// targets whose servers it stands in front of: those of= names, else the
// first target given that is a server. A pooler fronts a server, not
// another pooler.
func resolveFronts(ts []Spec) error {
	first := -1
	for i, t := range ts {
		if t.kind().fronts == 0 {
			first = i
			break
		}
	}
	servers := func() string { return kindsWhere(func(k *kind) bool { return k.fronts == 0 }) }
	for i := range ts {
		t := &ts[i]
		if t.kind().fronts == 0 {
			continue
		}
		if len(t.Of) == 0 {
			if first < 0 {
				return fmt.Errorf("target %s=%s: fronts another target's server, and every target is a pooler: add a %s target", t.Name, t.Kind, servers())
			}
			t.Of = []string{ts[first].Name}
		}
		t.Front = nil
		for _, of := range t.Of {
			found := false
			for _, o := range ts {
				if o.Name != of {
					continue
				}
				if o.kind().fronts > 0 {
					return fmt.Errorf("target %s=%s:of=%s: %s is a pooler; of= names a %s target", t.Name, t.Kind, of, of, servers())
				}
				t.Front, found = append(t.Front, o), true
			}
			if !found {
				return fmt.Errorf("target %s=%s:of=%s names no target (targets: %s)", t.Name, t.Kind, of, names(ts))
			}
		}
	}
	return nil
}

func names(ts []Spec) string {
	n := make([]string, len(ts))
	for i, t := range ts {
		n[i] = t.Name
	}
	return strings.Join(n, ", ")
}
