package build

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// PhaseCopy is a PostgreSQL build with extensions copying the server build
// it starts from (or, for the installed server, mirroring its tree).
const PhaseCopy = "copy server"

// Extension is an extension built against a server and installed into a
// copy of it: with PGXS (make USE_PGXS=1 PG_CONFIG=...), or with its own
// build command.
type Extension struct {
	Source Source
	// Make are more arguments of PGXS's make and make install, after
	// pgscale's own (USE_PGXS=1 PG_CONFIG=... CC=...), so they override
	// them and the Makefile's variables: OPTFLAGS= PG_CFLAGS=-O1.
	Make []string
	// Run, when set, replaces PGXS's make: a shell command run in the
	// exported tree (cargo pgrx package --pg-config "$PG_CONFIG" --out-dir
	// "$DESTDIR"). It sees PG_CONFIG (the server's), DESTDIR (an empty
	// directory), CC, MAKEFLAGS=-jN, CARGO_BUILD_JOBS and JOBS. What it
	// installed under $DESTDIR goes into the copy at the same paths, as
	// make install DESTDIR=... does; when it installed nothing there, its
	// tree's *.so files go into the server's pkglibdir and its *.control
	// and NAME--VERSION.sql files into SHAREDIR/extension.
	Run string
}

// String returns the extension as PATH[@REV][+PATCH...], its make
// arguments or its build command after it.
func (e Extension) String() string {
	s := e.Source.String()
	if len(e.Make) > 0 {
		s += " (make " + strings.Join(e.Make, " ") + ")"
	}
	if e.Run != "" {
		s += " (built by: " + e.Run + ")"
	}
	return s
}

// extKey is what of an extension goes into a key. Make and Run are left
// out when empty, so a PGXS extension with no arguments keeps the key it
// had before they existed.
type extKey struct {
	Tree    string
	Patches []string
	Make    []string `json:",omitempty"`
	Run     string   `json:",omitempty"`
	Tools   []string `json:",omitempty"`
}

// resolvedExt is an extension whose source has been identified.
type resolvedExt struct {
	Extension
	src *resolved
	key extKey
}

// resolveExtensions identifies the extensions' sources and their keys.
func resolveExtensions(ctx context.Context, exts []Extension) ([]resolvedExt, error) {
	var out []resolvedExt
	for _, e := range exts {
		r, err := resolveSource(ctx, e.Source)
		if err != nil {
			return nil, fmt.Errorf("extension: %w", err)
		}
		k := extKey{Tree: r.rec.Tree, Patches: patchHashes(r.rec.Patches), Make: e.Make, Run: e.Run}
		if strings.Contains(e.Run, "cargo") {
			for _, tool := range []string{"cargo", "rustc"} {
				v, err := toolVersion(ctx, tool, "--version")
				if err != nil {
					return nil, fmt.Errorf("extension %s: %w", e.Source, err)
				}
				k.Tools = append(k.Tools, v)
			}
		}
		out = append(out, resolvedExt{Extension: e, src: r, key: k})
	}
	return out, nil
}

func extKeys(exts []resolvedExt) []extKey {
	out := make([]extKey, len(exts))
	for i, e := range exts {
		out[i] = e.key
	}
	return out
}

// planWithExtensions plans a server build plus extensions as a copy of the
// server's own cached build with the extensions installed into it: its key
// is the server's key and the extensions' sources.
func (p Postgres) planWithExtensions(ctx context.Context, b *Builder, t toolchain) (*plan, error) {
	server := p
	server.Extensions = nil
	sp, err := server.plan(ctx, b, t)
	if err != nil {
		return nil, err
	}
	exts, err := resolveExtensions(ctx, p.Extensions)
	if err != nil {
		return nil, err
	}
	key := keyOf(struct {
		Schema     int
		Kind       string
		Base       string
		Extensions []extKey
	}{Schema, KindPostgres + "+extensions", sp.key, extKeys(exts)})
	m := sp.manifest
	m.Key, m.Base = key, sp.key
	label := p.Label()
	return &plan{key: key, manifest: m, make: func(ctx context.Context, s *session, scratch, entry, root string, m *Manifest) error {
		base, err := b.obtain(ctx, filepath.Dir(root), label, sp, t)
		if err != nil {
			return err
		}
		m.Version, m.Constants = base.Manifest.Version, base.Manifest.Constants
		prefix := filepath.Join(entry, installDir)
		if err := s.phase(ctx, PhaseCopy, func() error { return copyTree(base.Dir, prefix) }); err != nil {
			return err
		}
		// The copy's pg_config says the copy's directories: a build from
		// source finds them relative to its executable.
		into, err := newExtTarget(ctx, filepath.Join(prefix, "bin", "pg_config"), "", prefix)
		if err != nil {
			return err
		}
		return buildExtensions(ctx, s, scratch, exts, into, t, b.jobs(), m)
	}}, nil
}

// extTarget is the server extensions are built against and the copy of it
// they are installed into.
type extTarget struct {
	// pgConfig is the server's pg_config, which PGXS builds with.
	pgConfig string
	// root is the copy's root: a file installed at DESTDIR/P goes to
	// root/P ("" when pg_config's directories are the copy's own).
	root string
	// under is the directory every installed file must land in.
	under string
	// pkglib and share are pg_config's --pkglibdir and --sharedir.
	pkglib, share string
}

func newExtTarget(ctx context.Context, pgConfig, root, under string) (extTarget, error) {
	x := extTarget{pgConfig: pgConfig, root: root, under: under}
	for _, d := range []struct {
		flag string
		to   *string
	}{{"--pkglibdir", &x.pkglib}, {"--sharedir", &x.share}} {
		out, err := exec.CommandContext(ctx, pgConfig, d.flag).Output()
		if err != nil {
			return x, fmt.Errorf("%s %s: %w", pgConfig, d.flag, err)
		}
		*d.to = strings.TrimSpace(string(out))
	}
	return x, nil
}

// in returns where pg_config's path p is in the copy.
func (x extTarget) in(p string) string {
	if x.root == "" {
		return p
	}
	return filepath.Join(x.root, p)
}

// buildExtensions builds each extension in turn (phase "ext NAME") and
// installs it into the copy, recording each in the manifest.
func buildExtensions(ctx context.Context, s *session, scratch string, exts []resolvedExt, x extTarget, t toolchain, jobs int, m *Manifest) error {
	controlDir := x.in(filepath.Join(x.share, "extension"))
	used := map[string]bool{}
	for i, e := range exts {
		name := extName(ctx, e.src)
		for n, first := 2, name; used[name]; n++ {
			name = first + "-" + strconv.Itoa(n)
		}
		used[name] = true
		dir := filepath.Join(scratch, "ext-"+strconv.Itoa(i+1))
		if err := exportPatched(ctx, s, e.src, dir); err != nil {
			return err
		}
		stage := filepath.Join(scratch, "stage-"+strconv.Itoa(i+1))
		if err := os.Mkdir(stage, 0o755); err != nil {
			return err
		}
		before := controls(controlDir)
		err := s.phase(ctx, "ext "+name, func() error {
			if e.Run != "" {
				env := []string{"PG_CONFIG=" + x.pgConfig, "DESTDIR=" + stage, "CC=" + t.ccEnv(), "MAKEFLAGS=-j" + strconv.Itoa(jobs),
					"CARGO_BUILD_JOBS=" + strconv.Itoa(jobs), "JOBS=" + strconv.Itoa(jobs)}
				if err := s.run(ctx, dir, env, "/bin/sh", "-c", e.Run); err != nil {
					return err
				}
			} else {
				pgxs := append([]string{"USE_PGXS=1", "PG_CONFIG=" + x.pgConfig, "CC=" + t.ccEnv()}, e.Make...)
				if err := s.run(ctx, dir, nil, "make", append([]string{"-j" + strconv.Itoa(jobs)}, pgxs...)...); err != nil {
					return err
				}
				if err := s.run(ctx, dir, nil, "make", append([]string{"install", "DESTDIR=" + stage}, pgxs...)...); err != nil {
					return err
				}
			}
			n, err := installStaged(stage, x)
			if err != nil || n > 0 {
				return err
			}
			if e.Run == "" {
				return errors.New("make install put nothing under DESTDIR")
			}
			return installFromTree(s, dir, x)
		})
		if err != nil {
			return err
		}
		var added []string
		for _, c := range controls(controlDir) {
			if !slices.Contains(before, c) {
				added = append(added, c)
			}
		}
		m.Extensions = append(m.Extensions, ExtensionRecord{Name: name, Source: e.src.rec, Make: e.Make, Run: e.Run, Controls: added})
	}
	return nil
}

// installStaged moves what an install put under stage (DESTDIR) into the
// copy, each file to the copy's place of the path it was installed at,
// replacing what is there (a link to the installed server's file is
// replaced, never written through). It returns how many files it moved.
func installStaged(stage string, x extTarget) (int, error) {
	n := 0
	err := filepath.WalkDir(stage, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(stage, p)
		to := x.in(string(filepath.Separator) + rel)
		if !within(to, x.under) {
			return fmt.Errorf("the install put %s outside the server's tree (%s)", string(filepath.Separator)+rel, x.under)
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		if err := os.Rename(p, to); err != nil {
			return err
		}
		n++
		return nil
	})
	return n, err
}

// installFromTree is the rule for a build command that installed nothing
// under $DESTDIR: the tree's *.so files go into the pkglibdir, its
// *.control and NAME--VERSION.sql files into SHAREDIR/extension. Two
// files of one name, or none at all, fail the build.
func installFromTree(s *session, dir string, x extTarget) error {
	found := map[string]string{}
	var moves [][2]string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		name := d.Name()
		var to string
		switch {
		case strings.HasSuffix(name, ".so"):
			to = x.in(x.pkglib)
		case strings.HasSuffix(name, ".control"), strings.HasSuffix(name, ".sql") && strings.Contains(name, "--"):
			to = x.in(filepath.Join(x.share, "extension"))
		default:
			return nil
		}
		if prev, ok := found[name]; ok {
			return fmt.Errorf("the build command installed nothing under $DESTDIR, and its tree has two %s (%s, %s): install under $DESTDIR", name, prev, p)
		}
		found[name] = p
		moves = append(moves, [2]string{p, filepath.Join(to, name)})
		return nil
	})
	if err != nil {
		return err
	}
	if len(moves) == 0 {
		return errors.New("the build command installed nothing under $DESTDIR and left no .so, .control or NAME--VERSION.sql file in its tree")
	}
	for _, mv := range moves {
		fmt.Fprintf(s.log, "from the tree: %s -> %s\n", mv[0], mv[1])
		if err := os.MkdirAll(filepath.Dir(mv[1]), 0o755); err != nil {
			return err
		}
		os.Remove(mv[1])
		if err := os.Rename(mv[0], mv[1]); err != nil {
			return err
		}
	}
	return nil
}

// within says whether path p is dir or inside it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// extName names an extension by its tree's one control file at the top,
// else by its directory.
func extName(ctx context.Context, r *resolved) string {
	top := r.files
	if r.rec.Mode == ModeCommit {
		out, err := Git(ctx, r.repo, "ls-tree", "--name-only", r.treeish)
		if err != nil {
			return filepath.Base(r.rec.Path)
		}
		top = strings.Split(out, "\n")
	}
	var names []string
	for _, f := range top {
		if n, ok := strings.CutSuffix(f, ".control"); ok && !strings.Contains(f, "/") {
			names = append(names, n)
		}
	}
	if len(names) == 1 {
		return names[0]
	}
	return filepath.Base(r.rec.Path)
}

// controls lists the extension names whose control files are in dir.
func controls(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".control"); ok {
			out = append(out, n)
		}
	}
	return out
}

// copyTree copies the directory src to dst (which must not exist), with
// modes and symbolic links as they are.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.Mkdir(to, fi.Mode().Perm())
		case fi.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, to)
		case fi.Mode().IsRegular():
			return copyFile(p, to, fi.Mode().Perm())
		}
		return nil
	})
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
