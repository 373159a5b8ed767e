package build

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Schema is the cache's schema version. It is part of every key, so a
// change to how builds are made or laid out starts a fresh set of keys.
const Schema = 1

// Kinds of build, as Manifest.Kind names them.
const (
	KindPostgres  = "postgres"  // a PostgreSQL server build
	KindCommand   = "command"   // any program built by its own command
	KindInstalled = "installed" // an installed server's tree, mirrored, with extensions
)

// Manifest describes a cached build: what it was made from, how, and what
// it holds. It is kept as manifest.json beside the build.
type Manifest struct {
	Schema int    `json:"schema"`
	Key    string `json:"key"`
	Kind   string `json:"kind"`
	// Name is the label of the spec that first made the build.
	Name   string       `json:"name,omitempty"`
	Source SourceRecord `json:"source"`
	// Base is, for a PostgreSQL build with extensions, the key of the
	// server build it was made from (a copy of it, plus the extensions).
	Base string `json:"base,omitempty"`
	// Bin is, for an installed server's copy, its bin directory relative
	// to the install directory (the installed server's own path:
	// usr/lib/postgresql/15/bin); empty means bin.
	Bin string `json:"bin,omitempty"`
	// System is "autoconf" or "meson" for PostgreSQL.
	System string `json:"system,omitempty"`
	// Configure is every configure (or meson setup) argument, the
	// defaults chosen included and the prefix left out.
	Configure []string `json:"configure,omitempty"`
	// Command and Keep are a Command build's command and what was kept.
	Command string `json:"command,omitempty"`
	Keep    string `json:"keep,omitempty"`
	// Compiler is the C compiler's identity as the key has it; Tools the
	// other tools' (rustc, cargo) for a Command.
	Compiler string   `json:"compiler"`
	Tools    []string `json:"tools,omitempty"`
	// CCache says whether ccache was used; it is not part of the key.
	CCache bool `json:"ccache"`
	Jobs   int  `json:"jobs,omitempty"`
	// Contrib lists the contrib modules installed.
	Contrib    []string          `json:"contrib,omitempty"`
	Extensions []ExtensionRecord `json:"extensions,omitempty"`
	// Version is what the installed server says: "postgres (PostgreSQL) 15.18".
	Version string `json:"version,omitempty"`
	// Constants are compile-time constants read from the patched source
	// that a probe cannot learn from the version, such as
	// FP_LOCK_SLOTS_PER_BACKEND; a constant the source does not define
	// (newer releases size the fast path at run time) is absent.
	Constants map[string]int64 `json:"constants,omitempty"`
	// Notes say which defaults were chosen and why.
	Notes   []string      `json:"notes,omitempty"`
	Phases  []PhaseRecord `json:"phases,omitempty"`
	Seconds float64       `json:"seconds"`
	Created time.Time     `json:"created"`
}

// ExtensionRecord is one extension built into a PostgreSQL build.
type ExtensionRecord struct {
	Name   string       `json:"name"`
	Source SourceRecord `json:"source"`
	// Make are the arguments given to PGXS's make; Run the build command
	// that replaced it.
	Make []string `json:"make,omitempty"`
	Run  string   `json:"run,omitempty"`
	// Controls are the extension control files it installed, without
	// ".control": the names CREATE EXTENSION takes.
	Controls []string `json:"controls,omitempty"`
}

// PhaseRecord is how long one phase of a build took.
type PhaseRecord struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
}

// Duration returns how long the build took.
func (m *Manifest) Duration() time.Duration {
	return time.Duration(m.Seconds * float64(time.Second))
}

func writeManifest(dir string, m *Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, manifestFile), append(b, '\n'), 0o644)
}

// ReadManifest reads the manifest of the cached build in dir.
func ReadManifest(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, manifestFile))
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, manifestFile), err)
	}
	return &m, nil
}

// FastPathSlots returns the build's FP_LOCK_SLOTS_PER_BACKEND, read from its
// patched source, and whether the source defined it (releases from 18 on
// size the fast path at run time: the lock probe must observe it instead).
func (m *Manifest) FastPathSlots() (int, bool) {
	v, ok := m.Constants["FP_LOCK_SLOTS_PER_BACKEND"]
	return int(v), ok
}
