package build

import (
	"context"
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
// it starts from.
const PhaseCopy = "copy server"

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
	type extKey struct {
		Tree    string
		Patches []string
	}
	var exts []*resolved
	var keys []extKey
	for _, e := range p.Extensions {
		r, err := resolveSource(ctx, e)
		if err != nil {
			return nil, fmt.Errorf("extension: %w", err)
		}
		exts = append(exts, r)
		keys = append(keys, extKey{r.rec.Tree, patchHashes(r.rec.Patches)})
	}
	key := keyOf(struct {
		Schema     int
		Kind       string
		Base       string
		Extensions []extKey
	}{Schema, KindPostgres + "+extensions", sp.key, keys})
	m := sp.manifest
	m.Key, m.Base = key, sp.key
	jobs := "-j" + strconv.Itoa(b.jobs())
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
		pgConfig := filepath.Join(prefix, "bin", "pg_config")
		share, err := exec.CommandContext(ctx, pgConfig, "--sharedir").Output()
		if err != nil {
			return fmt.Errorf("pg_config --sharedir: %w", err)
		}
		controlDir := filepath.Join(strings.TrimSpace(string(share)), "extension")
		used := map[string]bool{}
		for i, r := range exts {
			name := extName(ctx, r)
			for n, first := 2, name; used[name]; n++ {
				name = first + "-" + strconv.Itoa(n)
			}
			used[name] = true
			dir := filepath.Join(scratch, "ext-"+strconv.Itoa(i+1))
			if err := exportPatched(ctx, s, r, dir); err != nil {
				return err
			}
			before := controls(controlDir)
			pgxs := []string{"USE_PGXS=1", "PG_CONFIG=" + pgConfig, "CC=" + t.ccEnv()}
			err := s.phase(ctx, "ext "+name, func() error {
				if err := s.run(ctx, dir, nil, "make", append([]string{jobs}, pgxs...)...); err != nil {
					return err
				}
				return s.run(ctx, dir, nil, "make", append([]string{"install"}, pgxs...)...)
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
			m.Extensions = append(m.Extensions, ExtensionRecord{Name: name, Source: r.rec, Controls: added})
		}
		return nil
	}}, nil
}

// extName names an extension by its tree's one control file at the top,
// else by its directory.
func extName(ctx context.Context, r *resolved) string {
	top := r.files
	if r.rec.Mode == ModeCommit {
		out, err := git(ctx, r.repo, "ls-tree", "--name-only", r.treeish)
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
