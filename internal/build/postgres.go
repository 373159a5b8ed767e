package build

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/pgscale/pgscale/internal/prose"
)

// Build systems of PostgreSQL.
const (
	Autoconf = "autoconf"
	Meson    = "meson"
)

// Postgres is a PostgreSQL build: the server, the contrib modules the
// probes use and extensions built against it with PGXS.
type Postgres struct {
	// Name labels the build in progress and errors; empty means the source.
	Name   string
	Source Source
	// Configure arguments come after the defaults (for autoconf
	// --enable-debug --disable-cassert CFLAGS=-O2, and --without-readline,
	// --without-icu or --without-zlib when their development files are
	// missing; for meson the same as -D options), so they override them.
	Configure []string
	// Contrib modules to build and install; nil means pg_stat_statements.
	Contrib []string
	// Extensions are built against the server (with PGXS, or their own
	// command) and installed into a copy of it. The server is built (and
	// cached) on its own first, so changing an extension does not rebuild
	// the server.
	Extensions []Extension
	// System is Autoconf or Meson; empty means meson when the tree has
	// meson.build and meson and ninja are installed, else autoconf.
	System string
}

// Label returns the Name, else the source.
func (p Postgres) Label() string {
	if p.Name != "" {
		return p.Name
	}
	return p.Source.String()
}

func (p Postgres) contrib() []string {
	if p.Contrib == nil {
		return []string{"pg_stat_statements"}
	}
	return p.Contrib
}

func (p Postgres) plan(ctx context.Context, b *Builder, t toolchain) (*plan, error) {
	if len(p.Extensions) > 0 {
		return p.planWithExtensions(ctx, b, t)
	}
	src, err := resolveSource(ctx, p.Source)
	if err != nil {
		return nil, err
	}
	system, err := p.system(ctx, src)
	if err != nil {
		return nil, err
	}
	for _, a := range p.Configure {
		if a == "--prefix" || strings.HasPrefix(a, "--prefix=") || strings.HasPrefix(a, "-Dprefix=") {
			return nil, fmt.Errorf("configure %s: the cache chooses the prefix", a)
		}
	}
	args, notes := defaultArgs(ctx, system, t)
	if system == Meson {
		args = mergeMesonArgs(args, p.Configure)
	} else {
		args = append(args, p.Configure...)
	}
	contrib := p.contrib()
	key := keyOf(struct {
		Schema    int
		Kind      string
		Tree      string
		Patches   []string
		System    string
		Configure []string
		Contrib   []string
		Compiler  string
	}{Schema, KindPostgres, src.rec.Tree, patchHashes(src.rec.Patches), system, args, contrib, t.identity})
	m := Manifest{Schema: Schema, Key: key, Kind: KindPostgres, Source: src.rec, System: system,
		Configure: args, Compiler: t.identity, Contrib: contrib, Notes: notes}
	jobs := "-j" + strconv.Itoa(b.jobs())
	return &plan{key: key, manifest: m, make: func(ctx context.Context, s *session, scratch, entry, root string, m *Manifest) error {
		dir := filepath.Join(scratch, "src")
		if err := exportPatched(ctx, s, src, dir); err != nil {
			return err
		}
		m.Constants = readConstants(dir)
		prefix := filepath.Join(root, installDir)
		stage := filepath.Join(scratch, "stage")
		if system == Meson {
			err = buildMeson(ctx, s, dir, prefix, stage, jobs, args, t)
		} else {
			err = buildAutoconf(ctx, s, dir, prefix, stage, jobs, args, contrib, t)
		}
		if err != nil {
			return err
		}
		// Installed under the final prefix inside stage (DESTDIR), so the
		// paths compiled in (libpq's rpath among them) are the cache's.
		if err := os.Rename(filepath.Join(stage, prefix), filepath.Join(entry, installDir)); err != nil {
			return fmt.Errorf("installed files: %w", err)
		}
		return s.phase(ctx, PhaseCheck, func() error {
			out, err := exec.CommandContext(ctx, filepath.Join(entry, installDir, "bin", "postgres"), "--version").Output()
			if err != nil {
				return fmt.Errorf("postgres --version: %w", err)
			}
			m.Version = strings.TrimSpace(string(out))
			fmt.Fprintln(s.log, m.Version)
			return nil
		})
	}}, nil
}

func buildAutoconf(ctx context.Context, s *session, dir, prefix, stage, jobs string, args, contrib []string, t toolchain) error {
	err := s.phase(ctx, PhaseConfigure, func() error {
		// The prefix comes from a config.site, not the command line:
		// configure writes its command line into pg_config.h
		// (CONFIGURE_ARGS), which every file includes, and the prefix
		// is the build's own (its key). ccache's preprocessed mode hit
		// anyway (the macro is in no file's preprocessed text), but its
		// direct mode, which hashes the headers' text and skips the
		// preprocessor, could not hit across builds (a bisect's
		// midpoints, a patch's builds).
		site := filepath.Join(filepath.Dir(dir), "config.site")
		if err := os.WriteFile(site, []byte("prefix="+prose.Command([]string{prefix})+"\n"), 0o644); err != nil {
			return err
		}
		return s.run(ctx, dir, []string{"CONFIG_SITE=" + site}, "./configure", append(args, "CC="+t.ccEnv())...)
	})
	if err != nil {
		return err
	}
	if err := s.phase(ctx, PhaseMake, func() error { return s.run(ctx, dir, nil, "make", jobs) }); err != nil {
		return err
	}
	err = s.phase(ctx, PhaseInstall, func() error {
		return s.run(ctx, dir, nil, "make", "install", "DESTDIR="+stage)
	})
	if err != nil || len(contrib) == 0 {
		return err
	}
	return s.phase(ctx, PhaseContrib, func() error {
		for _, c := range contrib {
			if err := s.run(ctx, dir, nil, "make", "-C", filepath.Join("contrib", c), jobs, "install", "DESTDIR="+stage); err != nil {
				return fmt.Errorf("contrib/%s: %w", c, err)
			}
		}
		return nil
	})
}

// buildMeson builds with meson and ninja, which build and install every
// contrib module along with the server.
func buildMeson(ctx context.Context, s *session, dir, prefix, stage, jobs string, args []string, t toolchain) error {
	err := s.phase(ctx, PhaseConfigure, func() error {
		a := append([]string{"setup", "build", "--prefix=" + prefix}, args...)
		return s.run(ctx, dir, []string{"CC=" + t.ccEnv()}, "meson", a...)
	})
	if err != nil {
		return err
	}
	if err := s.phase(ctx, PhaseMake, func() error { return s.run(ctx, dir, nil, "ninja", "-C", "build", jobs) }); err != nil {
		return err
	}
	return s.phase(ctx, PhaseInstall, func() error {
		return s.run(ctx, dir, nil, "meson", "install", "-C", "build", "--quiet", "--destdir", stage)
	})
}

// system picks the build system for a tree.
func (p Postgres) system(ctx context.Context, src *resolved) (string, error) {
	hasMeson, hasConfigure := src.has(ctx, "meson.build"), src.has(ctx, "configure")
	switch p.System {
	case Meson:
		if !hasMeson {
			return "", errors.New("system meson: the tree has no meson.build")
		}
		return Meson, nil
	case Autoconf:
		if !hasConfigure {
			return "", errors.New("system autoconf: the tree has no configure script")
		}
		return Autoconf, nil
	case "":
	default:
		return "", fmt.Errorf("system %q: want %q or %q", p.System, Autoconf, Meson)
	}
	if hasMeson && onPath("meson") && onPath("ninja") {
		return Meson, nil
	}
	if hasConfigure {
		return Autoconf, nil
	}
	if hasMeson {
		return "", errors.New("the tree builds only with meson, and meson or ninja is not installed")
	}
	return "", errors.New("not a PostgreSQL source tree: no configure script, no meson.build")
}

func onPath(prog string) bool {
	_, err := exec.LookPath(prog)
	return err == nil
}

// has says whether the source's tree holds a file at its top.
func (r *resolved) has(ctx context.Context, name string) bool {
	if r.rec.Mode == ModeCommit {
		_, err := Git(ctx, r.repo, "cat-file", "-e", r.treeish+name)
		return err == nil
	}
	_, found := slices.BinarySearch(r.files, name)
	return found
}

// defaultArgs are the configure arguments hackers use for performance
// work, and the optional libraries turned off when their development files
// are missing (with a note saying so).
func defaultArgs(ctx context.Context, system string, t toolchain) (args, notes []string) {
	type lib struct{ name, why string }
	var missing []lib
	if !hasHeader(ctx, t.cc, "readline/readline.h") && !hasHeader(ctx, t.cc, "editline/readline.h") {
		missing = append(missing, lib{"readline", "no readline/readline.h (libreadline-dev)"})
	}
	if !hasPkgConfig(ctx, "icu-uc", "icu-i18n") {
		missing = append(missing, lib{"icu", "pkg-config finds no icu-uc, icu-i18n (libicu-dev)"})
	}
	if !hasHeader(ctx, t.cc, "zlib.h") {
		missing = append(missing, lib{"zlib", "no zlib.h (zlib1g-dev)"})
	}
	if system == Meson {
		args = []string{"--buildtype=debugoptimized", "-Dcassert=false"}
	} else {
		args = []string{"--enable-debug", "--disable-cassert", "CFLAGS=-O2"}
	}
	for _, l := range missing {
		a := "--without-" + l.name
		if system == Meson {
			a = "-D" + l.name + "=disabled"
		}
		args = append(args, a)
		notes = append(notes, a+": "+l.why)
	}
	if len(missing) == 0 {
		notes = append(notes, "readline, icu, zlib: development files found, no --without option added")
	}
	return args, notes
}

// mergeMesonArgs appends the user's meson arguments to the defaults, a
// user's -Dname=value replacing a default for the same name (meson rejects
// an option given twice).
func mergeMesonArgs(defaults, user []string) []string {
	name := func(a string) string {
		if n, _, ok := strings.Cut(a, "="); ok && (strings.HasPrefix(a, "-D") || strings.HasPrefix(a, "--")) {
			return n
		}
		return a
	}
	var out []string
	for _, d := range defaults {
		if !slices.ContainsFunc(user, func(u string) bool { return name(u) == name(d) }) {
			out = append(out, d)
		}
	}
	return append(out, user...)
}

// readConstants reads, from a (patched) PostgreSQL tree, the compile-time
// constants probes need and cannot learn from the server's version.
func readConstants(dir string) map[string]int64 {
	wanted := []struct{ file, name string }{
		{"src/include/storage/proc.h", "FP_LOCK_SLOTS_PER_BACKEND"},
	}
	out := map[string]int64{}
	for _, w := range wanted {
		b, err := os.ReadFile(filepath.Join(dir, w.file))
		if err != nil {
			continue
		}
		re := regexp.MustCompile(`(?m)^[ \t]*#[ \t]*define[ \t]+` + w.name + `[ \t]+\(?([0-9]+)\)?[ \t]*(?:/\*.*)?$`)
		if m := re.FindSubmatch(b); m != nil {
			if v, err := strconv.ParseInt(string(m[1]), 10, 64); err == nil {
				out[w.name] = v
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
