package build

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// What a Command build keeps.
const (
	// KeepTree keeps the whole source tree after the build command.
	KeepTree = "tree"
	// KeepPrefix keeps only what the command installed into $PREFIX.
	KeepPrefix = "prefix"
)

// Command builds any program, such as a pooler or a proxy, from a source
// tree with its own build command.
type Command struct {
	// Name labels the build in progress and errors; empty means the source.
	Name   string
	Source Source
	// Run is a shell command run in the exported tree, such as
	// "./configure --without-openssl && make" or "cargo build --release".
	// It sees CC (ccache in front of the compiler when installed),
	// MAKEFLAGS=-jN, CARGO_BUILD_JOBS and JOBS, and with KeepPrefix a
	// PREFIX to install into. PREFIX is a temporary directory, moved into
	// the cache afterwards: the program must not depend on its install
	// path at run time.
	Run string
	// Keep is KeepTree (the default) or KeepPrefix.
	Keep string
	// Tools are programs whose "--version" is part of the key beside the
	// C compiler's; nil means cargo and rustc when Run mentions cargo.
	Tools []string
}

// Label returns the Name, else the source.
func (c Command) Label() string {
	if c.Name != "" {
		return c.Name
	}
	return c.Source.String()
}

func (c Command) plan(ctx context.Context, b *Builder, t toolchain) (*plan, error) {
	if strings.TrimSpace(c.Run) == "" {
		return nil, errors.New("no build command")
	}
	keep := c.Keep
	if keep == "" {
		keep = KeepTree
	}
	if keep != KeepTree && keep != KeepPrefix {
		return nil, fmt.Errorf("keep %q: want %q or %q", c.Keep, KeepTree, KeepPrefix)
	}
	src, err := resolveSource(ctx, c.Source)
	if err != nil {
		return nil, err
	}
	tools := c.Tools
	if tools == nil && strings.Contains(c.Run, "cargo") {
		tools = []string{"cargo", "rustc"}
	}
	var ids []string
	for _, tool := range tools {
		v, err := toolVersion(ctx, tool, "--version")
		if err != nil {
			return nil, err
		}
		ids = append(ids, v)
	}
	key := keyOf(struct {
		Schema   int
		Kind     string
		Tree     string
		Patches  []string
		Run      string
		Keep     string
		Compiler string
		Tools    []string
	}{Schema, KindCommand, src.rec.Tree, patchHashes(src.rec.Patches), c.Run, keep, t.identity, ids})
	m := Manifest{Schema: Schema, Key: key, Kind: KindCommand, Source: src.rec,
		Command: c.Run, Keep: keep, Compiler: t.identity, Tools: ids}
	jobs := strconv.Itoa(b.jobs())
	return &plan{key: key, manifest: m, make: func(ctx context.Context, s *session, scratch, entry, root string, m *Manifest) error {
		dir := filepath.Join(scratch, "src")
		if err := exportPatched(ctx, s, src, dir); err != nil {
			return err
		}
		env := []string{"CC=" + t.ccEnv(), "MAKEFLAGS=-j" + jobs, "CARGO_BUILD_JOBS=" + jobs, "JOBS=" + jobs}
		prefix := filepath.Join(entry, installDir)
		if keep == KeepPrefix {
			if err := os.Mkdir(prefix, 0o755); err != nil {
				return err
			}
			env = append(env, "PREFIX="+prefix)
		}
		if err := s.phase(ctx, PhaseBuild, func() error {
			return s.run(ctx, dir, env, "/bin/sh", "-c", c.Run)
		}); err != nil {
			return err
		}
		if keep == KeepTree {
			return os.Rename(dir, filepath.Join(entry, treeDir))
		}
		if ents, _ := os.ReadDir(prefix); len(ents) == 0 {
			return &Error{Name: s.name, Key: s.key, Phase: PhaseBuild,
				Err: errors.New("the build command installed nothing into $PREFIX")}
		}
		return nil
	}}, nil
}

// exportPatched exports a resolved source into dir and applies its
// patches, each its own phase.
func exportPatched(ctx context.Context, s *session, src *resolved, dir string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	if err := s.phase(ctx, PhaseExport, func() error { return src.export(ctx, dir) }); err != nil {
		return err
	}
	if len(src.patches) == 0 {
		return nil
	}
	return s.phase(ctx, PhasePatch, func() error { return applyPatches(ctx, s, dir, src) })
}

// patchHashes is what of the patches goes into a key: their bytes' hashes
// in order, not their names.
func patchHashes(ps []PatchRecord) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.SHA256
	}
	return out
}
