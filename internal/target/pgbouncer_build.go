package target

import (
	"context"
	"fmt"
	"os/exec"
	"strings"

	"github.com/pgscale/pgscale/internal/build"
)

// A pgbouncer: target with src= builds pgbouncer from its source tree with
// internal/build's command builds (the build cache, a key of the tree, the
// patches, the command and the compiler), as a proxy definition's build:
// does, by one of two recipes chosen from the tree at its revision:
//
//   - a release tarball's tree (Debian's .orig, the fixture of
//     .ci/pgbouncer-source) has configure and the manual pages made:
//     ./configure --without-openssl && make, what a proxy definition of
//     the fixture writes, so both find the same build;
//   - a git checkout at a tag (upstream's v1.25.1) has neither: autogen.sh
//     makes configure with autoconf, automake's aclocal and libtool's
//     libtoolize, and only the program is made (make pgbouncer), since its
//     manual pages need pandoc.
//
// TLS is left out (--without-openssl): a benchmark's clients and servers
// are on loopback, and no libssl-dev is needed.
const (
	pgbouncerRelease = "./configure --without-openssl && make"
	pgbouncerGit     = "./autogen.sh && ./configure --without-openssl && make pgbouncer"
)

// tool is a program a build needs, and the Debian package that installs
// it.
type tool struct {
	program, pkg, why string
	// have, when set, replaces looking program up on PATH.
	have func(context.Context) bool
}

// pgbouncerTools are what both recipes need: a C compiler, make, and
// libevent's development files found by pkg-config.
var pgbouncerTools = []tool{
	{program: "cc", pkg: "gcc", why: "a C compiler", have: func(context.Context) bool { return onPath("gcc") || onPath("cc") }},
	{program: "make", pkg: "make"},
	{program: "pkg-config", pkg: "pkg-config"},
	{program: "libevent", pkg: "libevent-dev", why: "its development files, found by pkg-config", have: func(ctx context.Context) bool {
		return onPath("pkg-config") && exec.CommandContext(ctx, "pkg-config", "--exists", "libevent").Run() == nil
	}},
}

// pgbouncerAutogen are what a git checkout's autogen.sh needs besides.
var pgbouncerAutogen = []tool{
	{program: "autoconf", pkg: "autoconf"},
	{program: "aclocal", pkg: "automake"},
	{program: "libtoolize", pkg: "libtool"},
}

func onPath(program string) bool {
	_, err := exec.LookPath(program)
	return err == nil
}

// needsBuild says the target is built from source (src=).
func (a PgBouncerArg) needsBuild() bool { return a.Source != nil }

// what is the target's build: the recipe its tree takes, once every
// program that recipe needs is found. A missing one is an error naming
// each with its Debian package, before anything builds.
func (a PgBouncerArg) what(spec Spec, _ *opening) (build.Spec, string, error) {
	ctx := context.Background()
	src := *a.Source
	hasConfigure, err := build.HasFile(ctx, src, "configure")
	if err != nil {
		return nil, "", err
	}
	run, need, doing := pgbouncerRelease, pgbouncerTools, fmt.Sprintf("building pgbouncer from %s", src)
	if !hasConfigure {
		if ok, _ := build.HasFile(ctx, src, "autogen.sh"); !ok {
			return nil, "", fmt.Errorf("pgbouncer from %s: its tree has neither configure nor autogen.sh: is it a pgbouncer tree?", src)
		}
		run, need = pgbouncerGit, append(append([]tool(nil), pgbouncerTools...), pgbouncerAutogen...)
		doing += ", a git checkout's tree (no configure: ./autogen.sh makes it),"
	}
	if err := missingTools(ctx, need, doing); err != nil {
		return nil, "", err
	}
	return build.Command{Name: "pgbouncer for " + pgbouncerLabel(spec), Source: src, Run: run}, src.String(), nil
}

// pgbouncerLabel names a target's pgbouncer in build lines.
func pgbouncerLabel(spec Spec) string {
	if spec.Name == "" {
		return "the pooler"
	}
	return spec.Name
}

// missingTools is nil when every tool is there, else one error naming
// what is missing and the packages that install it.
func missingTools(ctx context.Context, tools []tool, doing string) error {
	var missing, pkgs []string
	for _, t := range tools {
		have := t.have
		if have == nil {
			have = func(context.Context) bool { return onPath(t.program) }
		}
		if have(ctx) {
			continue
		}
		name := t.program
		if t.why != "" {
			name += " (" + t.why + ")"
		}
		missing = append(missing, name)
		pkgs = append(pkgs, t.pkg)
	}
	if len(missing) == 0 {
		return nil
	}
	list := strings.Join(missing, ", ")
	if n := len(missing); n > 1 {
		list = strings.Join(missing[:n-1], ", ") + " and " + missing[n-1]
	}
	return fmt.Errorf("%s needs %s, not installed here (Debian: apt-get install %s)", doing, list, strings.Join(pkgs, " "))
}
