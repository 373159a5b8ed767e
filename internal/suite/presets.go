package suite

import (
	"embed"
	"path"
	"sort"
	"strings"

	"github.com/pgscale/pgscale/internal/usage"
)

//go:embed presets/*.yaml
var presetFS embed.FS

// Presets lists the names of the built-in suites.
func Presets() []string {
	entries, _ := presetFS.ReadDir("presets")
	var out []string
	for _, e := range entries {
		out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(out)
	return out
}

// PresetSource is a preset's suite file, for --show.
func PresetSource(name string) (string, error) {
	b, err := presetFS.ReadFile(path.Join("presets", name+".yaml"))
	if err != nil {
		return "", usage.Errorf("no preset %q (have %s)", name, strings.Join(Presets(), ", "))
	}
	return string(b), nil
}

// Preset reads a built-in suite (its quick variant with quick).
func Preset(name string, quick bool) (*Suite, error) {
	src, err := PresetSource(name)
	if err != nil {
		return nil, err
	}
	return Parse("preset:"+name, "", name, []byte(src), quick)
}
