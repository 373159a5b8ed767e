package target

import (
	"fmt"
	"slices"
	"strconv"
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
	// Own are the servers a pooler fronts that are no target of the run,
	// given as of='SPEC' (of='settings:replicas=1'): each is started for
	// the pooler alone, named NAME.sN in Of (s1, s2...), and not measured
	// on its own.
	Own []Spec
	// Replicas is how many streaming replicas an ephemeral target's
	// cluster gets (replicas=N in its spec): made with pg_basebackup from
	// it, replaying before the run starts, each an upstream of a proxy in
	// front of it.
	Replicas int
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
// PostgreSQL built from source, arg as a src: target takes it. Its error
// is a *SpecError the edge words.
func FromSource(arg string) (Spec, error) {
	a, err := srcKind.parse(arg)
	if err != nil {
		return Spec{}, &SpecError{Spec: arg, Err: err}
	}
	return Spec{Kind: Src, Arg: a}, nil
}

// WithPooler is run's target behind a pooler: pooler is --pooler's value,
// KIND[:ARG] of a kind that fronts a server (pgbouncer[:k=v,...]), and
// front the server it fronts (ForRun's). Its error is a *SpecError the
// edge words.
func WithPooler(front Spec, pooler string) (Spec, error) {
	bad := func(format string, args ...any) (Spec, error) {
		return Spec{}, &SpecError{Spec: pooler, Err: fmt.Errorf(format, args...)}
	}
	name, arg, _ := strings.Cut(pooler, ":")
	k := lookup(Kind(strings.TrimSpace(name)))
	if k == nil || k.fronts == 0 {
		return bad("want %s", PoolerForms())
	}
	own, arg, err := k.splitArg(arg)
	if err != nil {
		return bad("%v", err)
	}
	of, arg, err := takeOf(arg)
	if err != nil {
		return bad("%v", err)
	}
	if own != "" {
		arg = own
	}
	if len(of) > 0 {
		return Spec{}, &SpecError{Spec: pooler, Err: ErrPoolerOf}
	}
	a, err := k.parse(arg)
	if err != nil {
		return bad("%v", err)
	}
	t := Spec{Kind: k.name, Arg: a, Front: []Spec{front}}
	// A proxy whose definition fronts several servers (shards: of: [s1,
	// s2]) gets as many servers of its own, alike, named after them.
	if names := k.ofArg(a); len(names) > 1 {
		t.Front = nil
		for _, name := range names {
			f := front
			f.Name = name
			t.Front = append(t.Front, f)
		}
	}
	return t, nil
}

// kind is the spec's registered kind; a kind not registered (a zero Spec)
// has no property, and Open refuses it.
func (t Spec) kind() *kind {
	if k := lookup(t.Kind); k != nil {
		return k
	}
	return &kind{name: t.Kind}
}

// Counts reports whether the target's server (for a pooler or proxy whose
// kind can run under Valgrind: every server it fronts) can run under
// Valgrind (--count instructions).
func (t Spec) Counts() bool {
	k := t.kind()
	if !k.counts {
		return false
	}
	for _, f := range t.Front {
		if !f.Counts() {
			return false
		}
	}
	return true
}

// own returns the server of its own that Of's entry name is.
func (t Spec) own(name string) (Spec, bool) {
	for _, o := range t.Own {
		if o.Name == name {
			return o, true
		}
	}
	return Spec{}, false
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

// Fronts reports whether the target is a pooler or proxy in front of other
// servers (pgbouncer:, proxy:), whose own costs are its measures.
func (t Spec) Fronts() bool { return t.kind().fronts > 0 }

// String returns the spec as written, with any password redacted:
// NAME=KIND:ARG, or KIND:ARG for an unnamed target.
func (t Spec) String() string {
	var parts []string
	for _, of := range t.Of {
		if o, ok := t.own(of); ok {
			parts = append(parts, "of='"+strings.TrimPrefix(o.String(), o.Name+"=")+"'")
			continue
		}
		parts = append(parts, "of="+of)
	}
	if t.Replicas > 0 {
		parts = append(parts, "replicas="+strconv.Itoa(t.Replicas))
	}
	arg := ""
	if t.Arg != nil {
		arg = t.Arg.String()
	}
	if strings.HasPrefix(arg, "{") {
		parts = append([]string{arg}, parts...) // an inline definition, then of=
	} else if arg != "" || len(parts) == 0 {
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
	bad := func(err error) (Spec, error) {
		return Spec{}, &SpecError{Spec: secret.Redact(spec), Err: err}
	}
	name, rest, ok := strings.Cut(spec, "=")
	name = strings.TrimSpace(name)
	if !ok {
		return bad(fmt.Errorf("want %s", Forms()))
	}
	if err := checkTargetName(name); err != nil {
		return bad(err)
	}
	kindName, arg, ok := strings.Cut(rest, ":")
	if !ok {
		return bad(fmt.Errorf("no kind after %s=: write %s", name, forms("")))
	}
	return parseKind(name, kindName, arg, bad)
}

// ParseUnnamed reads KIND:ARG, a target without a name: the one target
// of a command that runs one (bisect's TARGETSPEC, pgscale build's), or a
// result file's record of its target (result.Target.Spec). Its own
// servers (of='SPEC') are named s1, s2...; Named names it.
func ParseUnnamed(spec string) (Spec, error) {
	bad := func(err error) (Spec, error) {
		return Spec{}, &SpecError{Spec: secret.Redact(spec), Err: err, Unnamed: true}
	}
	kindName, arg, ok := strings.Cut(spec, ":")
	if !ok {
		return bad(fmt.Errorf("want %s", forms("")))
	}
	return parseKind("", kindName, arg, bad)
}

// parseKind reads the KIND:ARG of a target named name (empty: none),
// bad wording its errors.
func parseKind(name, kindName, arg string, bad func(error) (Spec, error)) (Spec, error) {
	k := lookup(Kind(strings.TrimSpace(kindName)))
	if k == nil {
		return bad(fmt.Errorf("unknown kind %q: want %s", kindName, kindsWhere(func(*kind) bool { return true })))
	}
	t := Spec{Name: name, Kind: k.name}
	// An argument the kind takes whole (a proxy's inline definition); of=
	// items may follow it.
	own, arg, err := k.splitArg(arg)
	if err != nil {
		return bad(err)
	}
	if k.fronts > 0 {
		if t.Of, arg, err = takeOf(arg); err != nil {
			return bad(err)
		}
	}
	if err := t.ownFronts(); err != nil {
		return bad(err)
	}
	if k.ephemeral {
		if t.Replicas, arg, err = takeReplicas(arg); err != nil {
			return bad(err)
		}
	}
	if own != "" {
		if strings.TrimSpace(arg) != "" {
			return bad(fmt.Errorf("after the definition {...} only of=NAME may follow, not %q", arg))
		}
		arg = own
	}
	a, err := k.parse(arg)
	if err != nil {
		return bad(err)
	}
	t.Arg = a
	if err := t.fronting(k); err != nil {
		return bad(err)
	}
	return t, nil
}

// Named returns the target named name, its own servers (of='SPEC')
// renamed after it (NAME.s1, NAME.s2...) and fronted: as ParseSpecs
// would have read it under that name. A target that fronts another
// target by its name keeps its Of and Front as they are.
func (t Spec) Named(name string) Spec {
	old := t.Name
	t.Name = name
	if len(t.Own) == 0 {
		return t
	}
	own := make([]Spec, len(t.Own))
	of := slices.Clone(t.Of)
	for i, o := range t.Own {
		n := ownName(name, i+1)
		for j := range of {
			if of[j] == o.Name {
				of[j] = n
			}
		}
		o.Name = n
		own[i] = o
	}
	t.Own, t.Of = own, of
	if HasFrontName(Spec{Name: old, Of: t.Of, Own: t.Own}) {
		return t
	}
	t.Front = nil
	for _, n := range t.Of {
		o, _ := t.own(n)
		t.Front = append(t.Front, o)
	}
	return t
}

// ownName is the name of a target's own server n (of='SPEC'): NAME.sN,
// or sN for an unnamed target.
func ownName(target string, n int) string {
	if target == "" {
		return fmt.Sprintf("s%d", n)
	}
	return fmt.Sprintf("%s.s%d", target, n)
}

// fronting sets, for a kind that fronts others, the targets its argument
// names when the spec names none, and checks how many there are.
func (t *Spec) fronting(k *kind) error {
	if len(t.Of) == 0 {
		if t.Of = k.ofArg(t.Arg); len(t.Of) > 0 {
			if err := t.ownFronts(); err != nil {
				return err
			}
		}
	}
	if len(t.Of) > k.fronts {
		return fmt.Errorf("a %s target fronts at most %d target(s), and of= names %d", k.name, k.fronts, len(t.Of))
	}
	return nil
}

// splitArg is the kind's split, or the argument as an ordinary comma list.
func (k *kind) splitArg(arg string) (own, rest string, err error) {
	if k.split == nil {
		return "", arg, nil
	}
	return k.split(arg)
}

// ofArg is the targets a's own definition says it fronts (none for most
// kinds).
func (k *kind) ofArg(a Arg) []string {
	if k.defaultOf == nil || a == nil {
		return nil
	}
	return k.defaultOf(a)
}

// ownFronts turns the entries of Of that are specs (of='settings:...')
// into servers of the target's own, named NAME.sN.
func (t *Spec) ownFronts() error {
	for i, of := range t.Of {
		if !strings.Contains(of, ":") {
			continue
		}
		name := ownName(t.Name, len(t.Own)+1)
		o, err := ParseSpec(name + "=" + of)
		if err != nil {
			return &ownError{of: of, err: err}
		}
		if o.kind().fronts > 0 {
			return fmt.Errorf("of='%s': a server of its own is a %s target", of, kindsWhere(func(k *kind) bool { return k.fronts == 0 }))
		}
		t.Own = append(t.Own, o)
		t.Of[i] = name
	}
	return nil
}

// takeOf takes the of=NAME items out of a comma list (commas in single
// quotes do not count) and returns the names and the rest of the list;
// of='SPEC' (a server of the target's own) comes back as SPEC.
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
		if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
			v = v[1 : len(v)-1]
		}
		if strings.Contains(v, ":") {
			of = append(of, v) // a server of its own: ownFronts
			continue
		}
		if err := checkTargetName(v); err != nil {
			return nil, "", fmt.Errorf("of=: %v", err)
		}
		of = append(of, v)
	}
	return of, strings.Join(kept, ","), nil
}

// maxReplicas is how many streaming replicas one target may have.
const maxReplicas = 8

// takeReplicas takes a replicas=N item out of a comma list.
func takeReplicas(arg string) (n int, rest string, err error) {
	items, err := splitItems(arg)
	if err != nil {
		return 0, "", err
	}
	var kept []string
	for _, it := range items {
		k, v, ok := strings.Cut(it, "=")
		if !ok || strings.TrimSpace(k) != "replicas" {
			kept = append(kept, it)
			continue
		}
		n, err = strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 || n > maxReplicas {
			return 0, "", fmt.Errorf("replicas=%s: want a number of streaming replicas from 0 to %d", v, maxReplicas)
		}
	}
	return n, strings.Join(kept, ","), nil
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
	return ParseGiven(Texts(specs), baseline, atLeast)
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
			if o, ok := t.own(of); ok {
				t.Front = append(t.Front, o)
				continue
			}
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
