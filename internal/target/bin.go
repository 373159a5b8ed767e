// Package target says where the server is: an existing server named by a
// connection string, or an ephemeral cluster started from locally installed
// server binaries. It starts, health-checks, stops and cleans up.
package target

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// ErrNoBinaries says no PostgreSQL server binaries were found.
var ErrNoBinaries = errors.New("no PostgreSQL server binaries found")

// FindBinDir finds the directory holding initdb and postgres. It looks, in
// order, at flagDir (--pg-bin), $PGSCALE_PG_BIN, `pg_config --bindir`, the
// newest /usr/lib/postgresql/*/bin, and PATH.
func FindBinDir(flagDir string) (string, error) {
	var tried []string
	try := func(dir, from string) bool {
		if dir == "" {
			return false
		}
		tried = append(tried, from)
		return hasServer(dir)
	}
	if flagDir != "" {
		if try(flagDir, "--pg-bin "+flagDir) {
			return flagDir, nil
		}
		return "", fmt.Errorf("%w in --pg-bin %s (it needs initdb and postgres)", ErrNoBinaries, flagDir)
	}
	if env := os.Getenv("PGSCALE_PG_BIN"); try(env, "$PGSCALE_PG_BIN="+env) {
		return env, nil
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		if dir := strings.TrimSpace(string(out)); try(dir, "pg_config --bindir") {
			return dir, nil
		}
	} else {
		tried = append(tried, "pg_config (not found)")
	}
	if dir := newestDebianBinDir(); try(dir, dir) {
		return dir, nil
	}
	tried = append(tried, "/usr/lib/postgresql/*/bin")
	if p, err := exec.LookPath("postgres"); err == nil {
		if dir := filepath.Dir(p); try(dir, "PATH") {
			return dir, nil
		}
	}
	tried = append(tried, "PATH")
	return "", fmt.Errorf("%w (searched %s); install them (Debian: apt-get install postgresql) or name a directory with --pg-bin",
		ErrNoBinaries, strings.Join(dedupe(tried), ", "))
}

func hasServer(dir string) bool {
	for _, name := range []string{"initdb", "postgres"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}

// newestDebianBinDir returns the /usr/lib/postgresql/N/bin with the highest N.
func newestDebianBinDir() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return majorOf(dirs[i]) > majorOf(dirs[j]) })
	for _, d := range dirs {
		if hasServer(d) {
			return d
		}
	}
	return ""
}

func majorOf(binDir string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(binDir)), 64)
	return v
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

var versionRE = regexp.MustCompile(`(\d+)(?:\.(\d+))?`)

// ServerVersion returns the version printed by `postgres --version` in binDir,
// e.g. "15.18", and its major number.
func ServerVersion(binDir string) (string, int, error) {
	out, err := exec.Command(filepath.Join(binDir, "postgres"), "--version").Output()
	if err != nil {
		return "", 0, fmt.Errorf("run %s --version: %w", filepath.Join(binDir, "postgres"), err)
	}
	m := versionRE.FindStringSubmatch(string(out))
	if m == nil {
		return "", 0, fmt.Errorf("cannot read a version from %q", strings.TrimSpace(string(out)))
	}
	major, _ := strconv.Atoi(m[1])
	return m[0], major, nil
}

// PkgLibDir returns the directory holding the server's loadable modules.
func PkgLibDir(binDir string) string {
	if out, err := exec.Command(filepath.Join(binDir, "pg_config"), "--pkglibdir").Output(); err == nil {
		return strings.TrimSpace(string(out))
	}
	return filepath.Join(filepath.Dir(binDir), "lib")
}

// HasModule reports whether the server in binDir can load the named module
// (e.g. "pg_wait_sampling").
func HasModule(binDir, name string) bool {
	_, err := os.Stat(filepath.Join(PkgLibDir(binDir), name+".so"))
	return err == nil
}
