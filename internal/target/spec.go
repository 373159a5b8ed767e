package target

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/pgscale/pgscale/internal/secret"
)

// Kind says how a target is reached.
type Kind int

// Target kinds, as written before the colon of a target spec.
const (
	// Bin is an ephemeral cluster started from a build's server
	// binaries: NAME=bin:DIR.
	Bin Kind = iota + 1
	// Settings is an ephemeral cluster from the default binaries with
	// its own server settings: NAME=settings:k=v,...
	Settings
	// DSN is an existing server, pooler or proxy: NAME=dsn:CONNSTRING.
	DSN
	// Pooled is a pgbouncer this process starts in front of another
	// target's server, with its own settings:
	// NAME=pgbouncer:[of=NAME,]k=v,... (run: --pooler pgbouncer[:k=v,...]).
	Pooled
)

// String returns "bin", "settings", "dsn" or "pgbouncer".
func (k Kind) String() string {
	switch k {
	case Bin:
		return "bin"
	case Settings:
		return "settings"
	case DSN:
		return "dsn"
	case Pooled:
		return "pgbouncer"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Spec is one target as given to --target (or, for run, by --dsn or
// its absence).
type Spec struct {
	// Name names the target in reports, result files and bounds; empty
	// for run's single target.
	Name string
	// Kind says how it is reached.
	Kind Kind
	// BinDir holds the server binaries of a Bin target.
	BinDir string
	// Settings are a Settings target's server settings, applied after
	// pgscale's defaults and the run's --set settings.
	Settings []Setting
	// DSN is a DSN target's connection string (empty: the libpq
	// environment). It may hold a password: print String(), never DSN.
	DSN string
	// Pooler are a Pooled target's pgbouncer settings (pool_mode,
	// default_pool_size, max_client_conn...), after pgscale's defaults.
	Pooler []Setting
	// Of names the target whose server a Pooled target fronts in an A/B
	// run; ParseSpecs sets it (default: the first target that is not a
	// pooler) and Front to a copy of that target's spec.
	Of string
	// Front is the server a Pooled target fronts: run's target (an
	// ephemeral cluster or --dsn), or a copy of target Of's spec.
	Front *Spec
}

// ForRun is run's target: the server --dsn names, or the one the libpq
// environment (PGHOST...) points at, or else an ephemeral cluster from
// the default binaries.
func ForRun(dsn string) Spec {
	if dsn != "" || EnvPointsAtServer() {
		return Spec{Kind: DSN, DSN: dsn}
	}
	return Spec{Kind: Settings}
}

// WithPooler is run's target behind a pooler: pooler is --pooler's value,
// pgbouncer[:k=v,...], and front the server it fronts (ForRun's).
func WithPooler(front Spec, pooler string) (Spec, error) {
	kind, arg, _ := strings.Cut(pooler, ":")
	if strings.TrimSpace(kind) != "pgbouncer" {
		return Spec{}, fmt.Errorf("--pooler %q: want pgbouncer or pgbouncer:k=v,... (pool_mode, default_pool_size, max_client_conn...)", pooler)
	}
	settings, err := parsePoolerSettings(arg)
	if err != nil {
		return Spec{}, fmt.Errorf("--pooler %q: %v", pooler, err)
	}
	for _, s := range settings {
		if s.Name == "of" {
			return Spec{}, fmt.Errorf("--pooler %q: of= names an ab target; run's pooler fronts the ephemeral cluster or --dsn", pooler)
		}
	}
	return Spec{Kind: Pooled, Pooler: settings, Front: &front}, nil
}

// Ephemeral reports whether pgscale starts the target's server itself; a
// pooler's server is the one it fronts.
func (t Spec) Ephemeral() bool {
	if t.Kind == Pooled {
		return t.Front != nil && t.Front.Ephemeral()
	}
	return t.Kind != DSN
}

// String returns the spec as written, with any password redacted:
// NAME=KIND:ARG, or KIND:ARG for an unnamed target.
func (t Spec) String() string {
	var arg string
	switch t.Kind {
	case Bin:
		arg = t.BinDir
	case Settings:
		parts := make([]string, len(t.Settings))
		for i, s := range t.Settings {
			parts[i] = s.Name + "=" + s.Value
		}
		arg = strings.Join(parts, ",")
	case DSN:
		arg = secret.Redact(t.DSN)
	case Pooled:
		var parts []string
		if t.Of != "" {
			parts = append(parts, "of="+t.Of)
		}
		for _, s := range t.Pooler {
			parts = append(parts, s.Name+"="+s.Value)
		}
		arg = strings.Join(parts, ",")
	}
	s := t.Kind.String() + ":" + arg
	if t.Name != "" {
		s = t.Name + "=" + s
	}
	return s
}

// ParseSpec reads NAME=bin:DIR, NAME=settings:k=v,..., NAME=dsn:CONNSTRING
// or NAME=pgbouncer:[of=NAME,]k=v,... A settings value holding a comma is
// written in single quotes: settings:shared_preload_libraries='a,b'. It
// checks the form only: that DIR holds a server, or that the connection
// string parses, is for the caller to find out; which target a pgbouncer
// fronts is ParseSpecs'.
func ParseSpec(spec string) (Spec, error) {
	bad := func(format string, args ...any) (Spec, error) {
		return Spec{}, fmt.Errorf("--target %q: %s", secret.Redact(spec), fmt.Sprintf(format, args...))
	}
	name, rest, ok := strings.Cut(spec, "=")
	name = strings.TrimSpace(name)
	if !ok {
		return bad("want NAME=bin:DIR, NAME=settings:k=v,..., NAME=dsn:CONNSTRING or NAME=pgbouncer:k=v,...")
	}
	if err := checkTargetName(name); err != nil {
		return bad("%v", err)
	}
	kind, arg, ok := strings.Cut(rest, ":")
	if !ok {
		return bad("no kind after %s=: write bin:DIR, settings:k=v,..., dsn:CONNSTRING or pgbouncer:k=v,...", name)
	}
	t := Spec{Name: name}
	switch strings.TrimSpace(kind) {
	case "bin":
		t.Kind, t.BinDir = Bin, strings.TrimSpace(arg)
		if t.BinDir == "" {
			return bad("bin: needs the directory holding the build's initdb and postgres")
		}
	case "settings":
		t.Kind = Settings
		parts, err := splitSettings(arg)
		if err != nil {
			return bad("%v", err)
		}
		for _, p := range parts {
			s, err := ParseSetting(p)
			if err != nil {
				return bad("%v", err)
			}
			t.Settings = append(t.Settings, s)
		}
	case "dsn":
		t.Kind, t.DSN = DSN, strings.TrimSpace(arg)
		if t.DSN == "" {
			return bad("dsn: needs a connection string (URI or keyword form)")
		}
	case "pgbouncer":
		t.Kind = Pooled
		settings, err := parsePoolerSettings(arg)
		if err != nil {
			return bad("%v", err)
		}
		for _, s := range settings {
			if s.Name == "of" {
				t.Of = s.Value
				if err := checkTargetName(s.Value); err != nil {
					return bad("of=: %v", err)
				}
				continue
			}
			t.Pooler = append(t.Pooler, s)
		}
	default:
		return bad("unknown kind %q: want bin, settings, dsn or pgbouncer", kind)
	}
	return t, nil
}

// poolerSettingName is the form of a pgbouncer setting's name.
var poolerSettingName = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// parsePoolerSettings reads a pooler's k=v,... (quotes as for settings:).
func parsePoolerSettings(arg string) ([]Setting, error) {
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
		if !poolerSettingName.MatchString(s.Name) || strings.ContainsAny(s.Value, "\n\r") {
			return nil, fmt.Errorf("pgbouncer setting %q: want name=value, the name in lower-case letters, digits and _", p)
		}
		out = append(out, s)
	}
	return out, nil
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

// splitSettings splits k=v,k=v on commas outside single quotes, and drops
// the quotes around a whole value.
func splitSettings(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	quoted := false
	flush := func() {
		p := strings.TrimSpace(cur.String())
		cur.Reset()
		if p == "" {
			return
		}
		if k, v, ok := strings.Cut(p, "="); ok {
			v = strings.TrimSpace(v)
			if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
				v = v[1 : len(v)-1]
			}
			p = strings.TrimSpace(k) + "=" + v
		}
		out = append(out, p)
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

// ParseSpecs reads every --target and puts the baseline first: the target
// named baseline, or the first given when baseline is empty. It needs at
// least atLeast targets and distinct names.
func ParseSpecs(specs []string, baseline string, atLeast int) ([]Spec, error) {
	if len(specs) < atLeast {
		if atLeast == 1 {
			return nil, fmt.Errorf("name a target with --target NAME=bin:DIR, NAME=settings:k=v,..., NAME=dsn:CONNSTRING or NAME=pgbouncer:k=v,...")
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

// resolveFronts sets, for every pgbouncer target, the target whose server it
// fronts: the one of= names, else the first target given that is not a
// pooler. A pooler fronts a server, not another pooler.
func resolveFronts(ts []Spec) error {
	first := -1
	for i, t := range ts {
		if t.Kind != Pooled {
			first = i
			break
		}
	}
	for i := range ts {
		t := &ts[i]
		if t.Kind != Pooled {
			continue
		}
		if t.Of == "" {
			if first < 0 {
				return fmt.Errorf("target %s=pgbouncer: fronts another target's server, and every target is a pooler: add a bin:, settings: or dsn: target", t.Name)
			}
			t.Of = ts[first].Name
		}
		found := false
		for _, o := range ts {
			if o.Name != t.Of {
				continue
			}
			if o.Kind == Pooled {
				return fmt.Errorf("target %s=pgbouncer:of=%s: %s is a pooler; of= names a bin:, settings: or dsn: target", t.Name, t.Of, t.Of)
			}
			front := o
			t.Front, found = &front, true
		}
		if !found {
			return fmt.Errorf("target %s=pgbouncer:of=%s names no target (targets: %s)", t.Name, t.Of, names(ts))
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
