package build

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// toolchain is the C compiler and whether ccache wraps it.
type toolchain struct {
	cc       string // the compiler, without ccache
	identity string // its --version line and target
	ccache   string // ccache's path, or empty
}

// ccEnv is the CC a build uses: ccache in front of the compiler when ccache
// is there.
func (t toolchain) ccEnv() string {
	if t.ccache != "" {
		return t.ccache + " " + t.cc
	}
	return t.cc
}

// findToolchain picks the compiler (cc if set, else gcc, else cc, as
// PostgreSQL's configure would) and asks it who it is. ccache is looked up
// only to be used, never for the identity, so having it does not change a
// key.
func findToolchain(ctx context.Context, cc string, noCCache bool) (toolchain, error) {
	if cc == "" {
		cc = "cc"
		if _, err := exec.LookPath("gcc"); err == nil {
			cc = "gcc"
		}
	}
	if _, err := exec.LookPath(cc); err != nil {
		return toolchain{}, fmt.Errorf("no C compiler: %w", err)
	}
	ver, err := toolVersion(ctx, cc, "--version")
	if err != nil {
		return toolchain{}, err
	}
	machine, _ := toolVersion(ctx, cc, "-dumpmachine")
	t := toolchain{cc: cc, identity: ver}
	if machine != "" {
		t.identity += " (" + machine + ")"
	}
	if !noCCache {
		t.ccache, _ = exec.LookPath("ccache")
	}
	return t, nil
}

// toolVersion returns the first line of a tool's answer to arg.
func toolVersion(ctx context.Context, tool, arg string) (string, error) {
	cmd := exec.CommandContext(ctx, tool, arg)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", tool, arg, err)
	}
	return strings.TrimSpace(firstLine(string(out))), nil
}

// hasHeader says whether the compiler finds a header.
func hasHeader(ctx context.Context, cc, header string) bool {
	cmd := exec.CommandContext(ctx, cc, "-E", "-x", "c", "-o", os.DevNull, "-")
	cmd.Stdin = strings.NewReader("#include <" + header + ">\n")
	return cmd.Run() == nil
}

// hasPkgConfig says whether pkg-config knows all the modules.
func hasPkgConfig(ctx context.Context, modules ...string) bool {
	if _, err := exec.LookPath("pkg-config"); err != nil {
		return false
	}
	return exec.CommandContext(ctx, "pkg-config", append([]string{"--exists"}, modules...)...).Run() == nil
}

// buildEnv is the environment a build's commands run in: the caller's,
// without what would change a build behind the key's back (compiler and
// flag variables, make's and PGXS's), in the C locale so logs read the same
// everywhere, and with ccache told that the scratch directory's name does
// not matter, so builds of other keys hit its cache.
func buildEnv(scratch string, t toolchain) []string {
	env := cleanEnv(os.Environ(),
		"CC", "CXX", "CPP", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "LIBS", "LDLIBS",
		"MAKEFLAGS", "MFLAGS", "GNUMAKEFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "DESTDIR",
		"PG_CONFIG", "PGXS", "USE_PGXS", "PREFIX", "LANG", "LC_ALL", "LANGUAGE",
		"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CEILING_DIRECTORIES")
	env = append(env, "LC_ALL=C")
	if t.ccache != "" {
		env = append(env, "CCACHE_BASEDIR="+scratch, "CCACHE_NOHASHDIR=true")
	}
	return env
}
