package build

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// Installed is an installed PostgreSQL server (a bin directory such as
// Debian's /usr/lib/postgresql/15/bin) with extensions built against it by
// its own PGXS (its pg_config, with the server's development headers) and
// installed into a copy of its tree, never into the system's directories.
//
// The copy mirrors the server's bin, pkglib and share directories at their
// own absolute paths under the build's install directory
// (install/usr/lib/postgresql/15/bin, .../lib, install/usr/share/postgresql/15):
// PostgreSQL finds its share and library directories relative to its
// executable's real path when they keep their layout around the bin
// directory, so the server started from the copy's bin directory reads the
// copy's extension files. Directories are made; each file is a hard link
// to the server's (a snapshot of it, at no cost in space), or, where a hard
// link cannot be made (another file system, or a user who may not link the
// system's files), a copy for the executables (PostgreSQL resolves a
// symbolic link to its executable, which would lead it back to the
// system's directories) and a symbolic link for the rest.
type Installed struct {
	// Name labels the build in progress and errors; empty means the bin
	// directory.
	Name string
	// BinDir is the installed server's bin directory, holding postgres
	// and pg_config.
	BinDir     string
	Extensions []Extension
}

// Label returns the Name, else the bin directory.
func (i Installed) Label() string {
	if i.Name != "" {
		return i.Name
	}
	return "installed " + i.BinDir
}

// HeadersError says the installed server's development files do not match
// it (or are missing): an extension cannot be built for it.
type HeadersError struct {
	// Server is the server's version ("15.20"), Headers the headers'
	// ("15.18"; empty when they are missing), Dir where they are looked for.
	Server, Headers, Dir string
	// Package is the Debian package that holds them
	// (postgresql-server-dev-15).
	Package string
}

func (e *HeadersError) Error() string {
	if e.Headers == "" {
		return fmt.Sprintf("the installed server (PostgreSQL %s) has no development files to build an extension with: no %s "+
			"(Debian: apt-get install %s)", e.Server, filepath.Join(e.Dir, "pg_config.h"), e.Package)
	}
	return fmt.Sprintf("the installed server is PostgreSQL %s but its development headers (%s, %s) are %s: an extension must be "+
		"built with the server's own version's headers; install %s at %s, or build the server too (src:PATH,ext=...)",
		e.Server, e.Package, e.Dir, e.Headers, e.Package, e.Server)
}

// serverInfo is what an installed server says of itself through
// postgres --version and pg_config.
type serverInfo struct {
	version  string            // postgres --version
	number   string            // "15.20"
	pgConfig string            // its pg_config
	config   string            // pg_config's whole output, for the key
	dirs     map[string]string // pg_config's NAME = VALUE lines
}

var versionNumber = regexp.MustCompile(`\b(\d+(?:\.\d+)?)`)

// inspect asks the installed server and its pg_config what they are, and
// checks that the development headers are there and of the server's
// version.
func (i Installed) inspect(ctx context.Context) (*serverInfo, error) {
	bin, err := filepath.Abs(i.BinDir)
	if err != nil {
		return nil, err
	}
	out, err := exec.CommandContext(ctx, filepath.Join(bin, "postgres"), "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --version: %w", filepath.Join(bin, "postgres"), err)
	}
	si := &serverInfo{version: strings.TrimSpace(string(out)), pgConfig: filepath.Join(bin, "pg_config"), dirs: map[string]string{}}
	v := strings.TrimPrefix(si.version, "postgres (PostgreSQL) ")
	if m := versionNumber.FindString(v); m != "" {
		si.number = m
	}
	major, _, _ := strings.Cut(si.number, ".")
	pkg := "postgresql-server-dev-" + major
	cfg, err := exec.CommandContext(ctx, si.pgConfig).Output()
	if err != nil {
		return nil, fmt.Errorf("the installed server (PostgreSQL %s) has no pg_config in %s to build an extension with "+
			"(Debian: apt-get install %s): %w", si.number, bin, pkg, err)
	}
	si.config = string(cfg)
	for _, l := range strings.Split(si.config, "\n") {
		if k, v, ok := strings.Cut(l, " = "); ok {
			si.dirs[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	for _, k := range []string{"BINDIR", "PKGLIBDIR", "SHAREDIR", "INCLUDEDIR-SERVER", "PGXS"} {
		if si.dirs[k] == "" {
			return nil, fmt.Errorf("%s says no %s", si.pgConfig, k)
		}
	}
	inc := si.dirs["INCLUDEDIR-SERVER"]
	hdr, err := os.ReadFile(filepath.Join(inc, "pg_config.h"))
	if err != nil {
		return nil, &HeadersError{Server: si.number, Dir: inc, Package: pkg}
	}
	headers := ""
	if m := regexp.MustCompile(`(?m)^#define PG_VERSION "([^" ]+)`).FindSubmatch(hdr); m != nil {
		headers = string(m[1])
	}
	if headers != si.number {
		return nil, &HeadersError{Server: si.number, Headers: headers, Dir: inc, Package: pkg}
	}
	if _, err := os.Stat(si.dirs["PGXS"]); err != nil {
		return nil, fmt.Errorf("the installed server's PGXS is missing (%s; Debian: apt-get install %s)", si.dirs["PGXS"], pkg)
	}
	return si, nil
}

func (i Installed) plan(ctx context.Context, b *Builder, t toolchain) (*plan, error) {
	if len(i.Extensions) == 0 {
		return nil, errors.New("the installed server needs no build without extensions")
	}
	si, err := i.inspect(ctx)
	if err != nil {
		return nil, err
	}
	exts, err := resolveExtensions(ctx, i.Extensions)
	if err != nil {
		return nil, err
	}
	key := keyOf(struct {
		Schema     int
		Kind       string
		Version    string
		PgConfig   string
		Compiler   string
		Extensions []extKey
	}{Schema, KindInstalled, si.version, si.config, t.identity, extKeys(exts)})
	bindir := si.dirs["BINDIR"]
	m := Manifest{Schema: Schema, Key: key, Kind: KindInstalled, Source: SourceRecord{Path: bindir, Mode: KindInstalled},
		Compiler: t.identity, Version: si.version, Bin: strings.TrimPrefix(filepath.Clean(bindir), "/")}
	return &plan{key: key, manifest: m, make: func(ctx context.Context, s *session, scratch, entry, _ string, m *Manifest) error {
		root := filepath.Join(entry, installDir)
		how := ""
		err := s.phase(ctx, PhaseCopy, func() error {
			var err error
			how, err = mirrorServer(root, si.dirs["BINDIR"], si.dirs["PKGLIBDIR"], si.dirs["SHAREDIR"])
			return err
		})
		if err != nil {
			return err
		}
		m.Notes = append(m.Notes, "the installed server's tree ("+strings.Join(mirrored(si), ", ")+") mirrored: "+how)
		if err := checkRelocated(ctx, root, si); err != nil {
			return err
		}
		into, err := newExtTarget(ctx, si.pgConfig, root, root)
		if err != nil {
			return err
		}
		return buildExtensions(ctx, s, scratch, exts, into, t, b.jobs(), m)
	}}, nil
}

// mirrored lists the directories of the installed server that its copy
// holds.
func mirrored(si *serverInfo) []string {
	return []string{si.dirs["BINDIR"], si.dirs["PKGLIBDIR"], si.dirs["SHAREDIR"]}
}

// checkRelocated makes sure the copy's server finds the copy's directories,
// not the system's: its pg_config, which finds them as postgres does,
// must say the copy's.
func checkRelocated(ctx context.Context, root string, si *serverInfo) error {
	for _, d := range []struct{ flag, key string }{{"--sharedir", "SHAREDIR"}, {"--pkglibdir", "PKGLIBDIR"}} {
		out, err := exec.CommandContext(ctx, filepath.Join(root, si.dirs["BINDIR"], "pg_config"), d.flag).Output()
		if err != nil {
			return fmt.Errorf("the copy's pg_config %s: %w", d.flag, err)
		}
		want := filepath.Join(root, si.dirs[d.key])
		if got := strings.TrimSpace(string(out)); got != want {
			return fmt.Errorf("the installed server does not find its files relative to its executable (its copy's %s is %s, not %s): "+
				"it cannot run from a copy; build the server too (src:PATH,ext=...)", d.key, got, want)
		}
	}
	return nil
}

// mirrorServer mirrors the installed server's directories under root at
// their own paths, and says how: hard links, or copies and symbolic links.
func mirrorServer(root, bin string, dirs ...string) (string, error) {
	linked, fallback := 0, 0
	all := append([]string{bin}, dirs...)
	for i, d := range all {
		nested := false
		for j, o := range all {
			if j != i && d != o && within(d, o) {
				nested = true
			}
		}
		if nested || (i > 0 && d == bin) {
			continue
		}
		exec := d == bin
		err := filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			to := filepath.Join(root, p)
			fi, err := e.Info()
			if err != nil {
				return err
			}
			switch {
			case e.IsDir():
				return os.MkdirAll(to, fi.Mode().Perm()|0o700)
			case fi.Mode()&fs.ModeSymlink != 0:
				link, err := os.Readlink(p)
				if err != nil {
					return err
				}
				return os.Symlink(link, to)
			case !fi.Mode().IsRegular():
				return nil
			}
			if os.Link(p, to) == nil {
				linked++
				return nil
			}
			fallback++
			if exec {
				return copyFile(p, to, fi.Mode().Perm())
			}
			return os.Symlink(p, to)
		})
		if err != nil {
			return "", fmt.Errorf("mirroring %s: %w", d, err)
		}
	}
	switch {
	case fallback == 0:
		return fmt.Sprintf("%d files hard-linked", linked), nil
	case linked == 0:
		return fmt.Sprintf("%d files copied (executables) or symbolically linked (the rest): no hard link could be made", fallback), nil
	}
	return fmt.Sprintf("%d files hard-linked, %d copied or symbolically linked", linked, fallback), nil
}
