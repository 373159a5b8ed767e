package store_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/secret"
	"github.com/pgscale/pgscale/internal/store"
)

func TestDefaultLocation(t *testing.T) {
	t.Setenv(store.EnvLocation, "")
	t.Setenv("XDG_DATA_HOME", "/data")
	if l, _ := store.DefaultLocation(); l != "/data/pgscale/history.db" {
		t.Errorf("with XDG_DATA_HOME: %q", l)
	}
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("HOME", "/home/ci")
	if l, _ := store.DefaultLocation(); l != "/home/ci/.local/share/pgscale/history.db" {
		t.Errorf("without XDG_DATA_HOME: %q", l)
	}
	dir := t.TempDir()
	t.Setenv(store.EnvLocation, filepath.Join(dir, "team.db"))
	if l, _ := store.DefaultLocation(); l != filepath.Join(dir, "team.db") {
		t.Errorf("with %s: %q", store.EnvLocation, l)
	}
	// Open("") goes there.
	s, err := store.Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Kind() != store.SQLite || s.Location() != filepath.Join(dir, "team.db") {
		t.Errorf("opened %v %q", s.Kind(), s.Location())
	}
	if _, err := os.Stat(filepath.Join(dir, "team.db")); err != nil {
		t.Error(err)
	}
}

// Store locations are redacted by the same rules as everything else: a
// file path that happens to hold "password=" is not a connection string.
func TestLocationRedacted(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://bench:hunter2@db:5432/history":           "postgres://bench:xxxxx@db:5432/history",
		"postgresql://bench@db/history?password=hunter2":     "postgresql://bench@db/history?password=xxxxx",
		"host=db user=bench password=hunter2 dbname=history": "host=db user=bench password=xxxxx dbname=history",
		"host=db password='hunter 2' dbname=history":         "host=db password=xxxxx dbname=history",
		"host=db dbname=history":                             "host=db dbname=history",
		"/var/lib/pgscale/password=hunter2/history.db":       "/var/lib/pgscale/password=hunter2/history.db", // a file path, shown as given
		"postgres://bench@db/history":                        "postgres://bench@db/history",
	} {
		if got := secret.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFingerprint(t *testing.T) {
	base := result.Environment{Hostname: "runner-1", OS: "linux/amd64", Kernel: "6.1.0-18-amd64", CPUModel: "AMD  EPYC 7B13",
		CPUs: 2, MemoryMB: 24105, GoVersion: "go1.26.8", GOMAXPROCS: 2}
	m := store.FingerprintOf(base)
	if !regexp.MustCompile(`^[0-9a-f]{12}$`).MatchString(m.Fingerprint) {
		t.Errorf("fingerprint %q", m.Fingerprint)
	}
	if s := m.String(); s != "AMD EPYC 7B13, 2 CPUs, 24 GiB, linux/amd64, kernel 6" {
		t.Errorf("String() = %q", s)
	}
	same := base
	same.Hostname, same.Kernel, same.MemoryMB, same.GoVersion, same.GOMAXPROCS = "runner-2", "6.6.3", 23600, "go1.27", 1
	if got := store.FingerprintOf(same); got != m {
		t.Errorf("same machine, another host name, kernel minor, Go: %+v, want %+v", got, m)
	}
	for name, change := range map[string]func(*result.Environment){
		"cpus":   func(e *result.Environment) { e.CPUs = 4 },
		"model":  func(e *result.Environment) { e.CPUModel = "Intel Xeon" },
		"memory": func(e *result.Environment) { e.MemoryMB = 15800 },
		"kernel": func(e *result.Environment) { e.Kernel = "5.10.0" },
		"arch":   func(e *result.Environment) { e.OS = "linux/arm64" },
	} {
		e := base
		change(&e)
		if store.FingerprintOf(e).Fingerprint == m.Fingerprint {
			t.Errorf("another %s, same fingerprint", name)
		}
	}
}

func TestCommitFromEnv(t *testing.T) {
	env := map[string]string{"GIT_COMMIT": "jenkins", "CI_COMMIT_SHA": " gitlab\n"}
	if c, v := store.CommitFromEnv(func(k string) string { return env[k] }); c != "gitlab" || v != "CI_COMMIT_SHA" {
		t.Errorf("got %q from %s", c, v)
	}
	env["GITHUB_SHA"] = "github"
	if c, _ := store.CommitFromEnv(func(k string) string { return env[k] }); c != "github" {
		t.Errorf("got %q, want GITHUB_SHA first", c)
	}
	if c, v := store.CommitFromEnv(func(string) string { return "" }); c != "" || v != "" {
		t.Errorf("no CI: %q from %q", c, v)
	}
}

func TestGitCommit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	ctx := context.Background()
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.invalid"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if _, err := store.GitCommit(ctx, dir); err == nil || !strings.Contains(err.Error(), "not a git repository") {
		t.Errorf("outside a work tree: %v", err)
	}
	git("init", "-q")
	os.WriteFile(filepath.Join(dir, "f"), []byte("1"), 0o644)
	git("add", "f")
	git("commit", "-q", "-m", "one")
	head := git("rev-parse", "HEAD")
	os.MkdirAll(filepath.Join(dir, "bin"), 0o755)
	if c, err := store.GitCommit(ctx, filepath.Join(dir, "bin")); err != nil || c != head {
		t.Errorf("clean tree: %q, %v; want %s", c, err, head)
	}
	os.WriteFile(filepath.Join(dir, "untracked"), []byte("x"), 0o644)
	if c, _ := store.GitCommit(ctx, dir); c != head {
		t.Errorf("with an untracked file: %q, want %s", c, head)
	}
	os.WriteFile(filepath.Join(dir, "f"), []byte("2"), 0o644)
	if c, _ := store.GitCommit(ctx, dir); c != head+"-dirty" {
		t.Errorf("modified tree: %q, want %s-dirty", c, head)
	}
}
