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

// ErrNoPgBouncer says no pgbouncer executable was found.
var ErrNoPgBouncer = errors.New("pgbouncer not found")

// place is one place a program may be found.
type place struct {
	// label names it in the error that lists where a search looked.
	label string
	// at is where: a directory or a file, as the search's has wants; ""
	// when the place has nothing (pg_config not installed, a variable
	// not set).
	at func() string
	// named says the user named it (a flag, a variable): the program must
	// be there, and the search ends there with an error when it is not;
	// when it is not named at all (at is ""), the search goes on without
	// listing it.
	named bool
}

// search looks for a program in places, in order, and returns the first
// where has finds it; not found, its error wraps notFound and lists the
// places looked at, then fix: how to install the program or name it.
func search(notFound error, has func(string) bool, fix string, places ...place) (string, error) {
	var tried []string
	for _, p := range places {
		at := p.at()
		switch {
		case at != "" && has(at):
			return at, nil
		case at != "" && p.named:
			return "", fmt.Errorf("%w at %s", notFound, p.label)
		case at != "" || !p.named:
			tried = append(tried, p.label)
		}
	}
	return "", fmt.Errorf("%w (searched %s); %s", notFound, strings.Join(dedupe(tried), ", "), fix)
}

// namedPlace is a place the user named as label, or no place when value
// is "".
func namedPlace(label, value string) place {
	return place{label: label, at: func() string { return value }, named: true}
}

// FindBinDir finds the directory holding initdb and postgres. It looks, in
// order, at dir (the one named: --pg-bin's, a bin: target's, a build's),
// $PGSCALE_PG_BIN, `pg_config --bindir`, the newest
// /usr/lib/postgresql/*/bin, and PATH. Its error calls the directory named
// and how to name one as w.PGBin says.
func FindBinDir(dir string, w Words) (string, error) {
	label, fix := dir+" (it needs initdb and postgres)", "install them (Debian: apt-get install postgresql)"
	if w.PGBin != "" {
		label, fix = w.PGBin+" "+label, fix+" or name a directory with "+w.PGBin
	}
	places := []place{namedPlace(label, dir)}
	if env := os.Getenv("PGSCALE_PG_BIN"); env != "" {
		places = append(places, place{label: "$PGSCALE_PG_BIN=" + env, at: func() string { return env }})
	}
	return search(ErrNoBinaries, hasServer, fix, append(places,
		place{label: "pg_config --bindir", at: pgConfigBinDir},
		place{label: "/usr/lib/postgresql/*/bin", at: newestDebianBinDir},
		place{label: "PATH", at: func() string {
			if p := lookPath("postgres"); p != "" {
				return filepath.Dir(p)
			}
			return ""
		}})...)
}

// FindPgBouncer finds the pgbouncer executable: path when given, otherwise
// $PGSCALE_PGBOUNCER, PATH and the system directories (/usr/sbin, where
// Debian's package puts it, is often not on a user's PATH).
func FindPgBouncer(path string) (string, error) {
	return findProgram("pgbouncer", path, "PGSCALE_PGBOUNCER", ErrNoPgBouncer,
		"install it (Debian: apt-get install pgbouncer) or name it with $PGSCALE_PGBOUNCER")
}

// findProgram finds executable name: at path when given, else where
// environment variable env says when it is set, else on PATH or in
// /usr/sbin, /usr/local/sbin or /usr/local/bin.
func findProgram(name, path, env string, notFound error, fix string) (string, error) {
	places := []place{namedPlace(path, path), namedPlace("$"+env+"="+os.Getenv(env), os.Getenv(env)),
		{label: "PATH", at: func() string { return lookPath(name) }}}
	for _, dir := range []string{"/usr/sbin", "/usr/local/sbin", "/usr/local/bin"} {
		places = append(places, place{label: dir, at: func() string { return filepath.Join(dir, name) }})
	}
	return search(notFound, isExecutable, fix, places...)
}

// lookPath is the executable name on PATH, or "".
func lookPath(name string) string {
	p, _ := exec.LookPath(name)
	return p
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// pgConfigBinDir is what `pg_config --bindir` prints, or "" without
// pg_config.
func pgConfigBinDir() string {
	out, err := exec.Command("pg_config", "--bindir").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
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
