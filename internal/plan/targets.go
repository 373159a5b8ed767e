package plan

import (
	"fmt"
	"strings"

	"github.com/pgscale/pgscale/internal/secret"
	"github.com/pgscale/pgscale/internal/target"
)

// TargetKind says how an A/B target is reached.
type TargetKind int

// Target kinds, as written before the colon of a target spec.
const (
	// BinTarget is an ephemeral cluster started from a build's server
	// binaries: NAME=bin:DIR.
	BinTarget TargetKind = iota + 1
	// SettingsTarget is an ephemeral cluster from the default binaries with
	// its own server settings: NAME=settings:k=v,...
	SettingsTarget
	// DSNTarget is an existing server, pooler or proxy: NAME=dsn:CONNSTRING.
	DSNTarget
)

// String returns "bin", "settings" or "dsn".
func (k TargetKind) String() string {
	switch k {
	case BinTarget:
		return "bin"
	case SettingsTarget:
		return "settings"
	case DSNTarget:
		return "dsn"
	}
	return fmt.Sprintf("TargetKind(%d)", int(k))
}

// TargetSpec is one target of an A/B run, as given to --target.
type TargetSpec struct {
	// Name names the target in reports, result files and bounds.
	Name string
	// Kind says how it is reached.
	Kind TargetKind
	// BinDir holds the server binaries of a BinTarget.
	BinDir string
	// Settings are a SettingsTarget's server settings, applied after
	// pgscale's defaults and the run's --set settings.
	Settings []target.Setting
	// DSN is a DSNTarget's connection string. It may hold a password:
	// print String(), never DSN.
	DSN string
}

// Ephemeral reports whether pgscale starts the target's server itself.
func (t TargetSpec) Ephemeral() bool { return t.Kind != DSNTarget }

// String returns the spec as written, with any password redacted.
func (t TargetSpec) String() string {
	switch t.Kind {
	case BinTarget:
		return t.Name + "=bin:" + t.BinDir
	case SettingsTarget:
		parts := make([]string, len(t.Settings))
		for i, s := range t.Settings {
			parts[i] = s.Name + "=" + s.Value
		}
		return t.Name + "=settings:" + strings.Join(parts, ",")
	case DSNTarget:
		return t.Name + "=dsn:" + secret.Redact(t.DSN)
	}
	return t.Name
}

// ParseTargetSpec reads NAME=bin:DIR, NAME=settings:k=v,... or
// NAME=dsn:CONNSTRING. A settings value holding a comma is written in
// single quotes: settings:shared_preload_libraries='a,b'. It checks the
// form only: that DIR holds a server, or that the connection string
// parses, is for the caller to find out.
func ParseTargetSpec(spec string) (TargetSpec, error) {
	bad := func(format string, args ...any) (TargetSpec, error) {
		return TargetSpec{}, fmt.Errorf("--target %q: %s", secret.Redact(spec), fmt.Sprintf(format, args...))
	}
	name, rest, ok := strings.Cut(spec, "=")
	name = strings.TrimSpace(name)
	if !ok {
		return bad("want NAME=bin:DIR, NAME=settings:k=v,... or NAME=dsn:CONNSTRING")
	}
	if err := checkTargetName(name); err != nil {
		return bad("%v", err)
	}
	kind, arg, ok := strings.Cut(rest, ":")
	if !ok {
		return bad("no kind after %s=: write bin:DIR, settings:k=v,... or dsn:CONNSTRING", name)
	}
	t := TargetSpec{Name: name}
	switch strings.TrimSpace(kind) {
	case "bin":
		t.Kind, t.BinDir = BinTarget, strings.TrimSpace(arg)
		if t.BinDir == "" {
			return bad("bin: needs the directory holding the build's initdb and postgres")
		}
	case "settings":
		t.Kind = SettingsTarget
		parts, err := splitSettings(arg)
		if err != nil {
			return bad("%v", err)
		}
		for _, p := range parts {
			s, err := target.ParseSetting(p)
			if err != nil {
				return bad("%v", err)
			}
			t.Settings = append(t.Settings, s)
		}
	case "dsn":
		t.Kind, t.DSN = DSNTarget, strings.TrimSpace(arg)
		if t.DSN == "" {
			return bad("dsn: needs a connection string (URI or keyword form)")
		}
	default:
		return bad("unknown kind %q: want bin, settings or dsn", kind)
	}
	return t, nil
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

// ParseTargets reads every --target and puts the baseline first: the target
// named baseline, or the first given when baseline is empty. It needs at
// least atLeast targets and distinct names.
func ParseTargets(specs []string, baseline string, atLeast int) ([]TargetSpec, error) {
	if len(specs) < atLeast {
		if atLeast == 1 {
			return nil, fmt.Errorf("name a target with --target NAME=bin:DIR, NAME=settings:k=v,... or NAME=dsn:CONNSTRING")
		}
		return nil, fmt.Errorf("an A/B run needs at least %d targets (--target NAME=SPEC, repeated); got %d", atLeast, len(specs))
	}
	var out []TargetSpec
	seen := map[string]bool{}
	base := -1
	for _, s := range specs {
		t, err := ParseTargetSpec(s)
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

func names(ts []TargetSpec) string {
	n := make([]string, len(ts))
	for i, t := range ts {
		n[i] = t.Name
	}
	return strings.Join(n, ", ")
}
