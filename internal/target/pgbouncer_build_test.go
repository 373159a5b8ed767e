package target_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/build/buildtest"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
)

// pathWith makes a directory holding only the named programs (links to
// where they are), for PATH, so a test sees a machine without the others.
func pathWith(t *testing.T, programs ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, p := range programs {
		at, err := exec.LookPath(p)
		if err != nil {
			t.Skipf("%s is not installed", p)
		}
		if err := os.Symlink(at, filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A pgbouncer built from source in one word: its recipe read from its
// tree (a release tarball's configure; a git checkout's autogen.sh), its
// prerequisites checked before anything builds and each missing one named
// with its Debian package, and its build key the same as a proxy
// definition's of the same tree and command, so either finds the other's
// build. Nothing is built: about a second.
func TestPgBouncerFromSource(t *testing.T) {
	repo := buildtest.PgBouncerSource(t)
	ctx := context.Background()
	opt := target.ClusterOptions{BuildCache: t.TempDir()}

	// The fixture's base is Debian's release tarball: configure is there.
	fromSrc, err := target.ParseSpec("p=pgbouncer:src=" + repo + "@base")
	if err != nil {
		t.Fatal(err)
	}
	def := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(def, []byte("build:\n  source: "+repo+"@base\n  run: ./configure --without-openssl && make\ncommand: \"{{build}}/pgbouncer {{dir}}/p.ini\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fromDef, err := target.ParseSpec("p=proxy:" + def)
	if err != nil {
		t.Fatal(err)
	}
	k1, err1 := target.BuildKey(ctx, fromSrc, opt)
	k2, err2 := target.BuildKey(ctx, fromDef, opt)
	if err1 != nil || err2 != nil || k1 != k2 {
		t.Errorf("keys: pgbouncer:src= %s (%v), a proxy definition of the same tree %s (%v): want one key", k1, err1, k2, err2)
	}
	if st, err := target.BuildStatus(ctx, fromSrc, opt); err != nil || !strings.Contains(st, "not in the build cache") {
		t.Errorf("BuildStatus: %q, %v", st, err)
	}

	// A git checkout has no configure: autogen.sh needs autoconf,
	// automake and libtool, which a machine without them is told of.
	clone := filepath.Join(t.TempDir(), "pgbouncer")
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", clone, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	if out, err := exec.Command("git", "clone", "-q", "--no-checkout", repo, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	git("checkout", "-q", "base")
	git("rm", "-q", "configure", "doc/pgbouncer.1", "doc/pgbouncer.5")
	git("commit", "-q", "-m", "as a git checkout: no configure, no manual pages")
	git("tag", "checkout")

	t.Setenv("PATH", pathWith(t, "git", "tar", "gcc", "make", "pkg-config"))
	checkout, err := target.ParseSpec("p=pgbouncer:src=" + clone + "@checkout")
	if err != nil {
		t.Fatal(err)
	}
	_, err = target.BuildStatus(ctx, checkout, opt)
	want := "target p: building pgbouncer from " + clone + "@checkout, a git checkout's tree (no configure: ./autogen.sh makes it), needs autoconf, aclocal and libtoolize, not installed here (Debian: apt-get install autoconf automake libtool)"
	if err == nil || !usage.Is(err) || err.Error() != want {
		t.Errorf("a git checkout without autoconf:\n got %v\nwant %s", err, want)
	}
	// Without pkg-config, libevent's files cannot be found either.
	t.Setenv("PATH", pathWith(t, "git", "tar", "gcc", "make"))
	_, err = target.BuildStatus(ctx, fromSrc, opt)
	if err == nil || !strings.Contains(err.Error(), "needs pkg-config and libevent (its development files, found by pkg-config), not installed here (Debian: apt-get install pkg-config libevent-dev)") {
		t.Errorf("without pkg-config: %v", err)
	}
}

// The balancing variant of a pooler pgscale knows is derived from its
// spec (the same build and settings, balance=round-robin), and refuses a
// workload that writes; a proxy definition has none pgscale can derive.
func TestBalanced(t *testing.T) {
	p, err := target.ParseSpec("base=pgbouncer:src=/src/pgbouncer@v1.25.1+/tmp/a.patch,default_pool_size=4,of='settings:replicas=1'")
	if err != nil {
		t.Fatal(err)
	}
	if p.ReadOnly() {
		t.Error("a pgbouncer that does not balance is read-only")
	}
	b, err := p.Balanced()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "base=pgbouncer:of='settings:replicas=1',src=/src/pgbouncer@v1.25.1+/tmp/a.patch,balance=round-robin,default_pool_size=4"; got != want {
		t.Errorf("Balanced: %s\nwant %s", got, want)
	}
	if !b.ReadOnly() {
		t.Error("a balancing pgbouncer is not read-only")
	}
	again, err := target.ParseSpec(b.String())
	if err != nil || again.String() != b.String() {
		t.Errorf("Balanced's String reads back as %v, %v", again, err)
	}
	px, err := target.ParseSpec("base=proxy:../../examples/proxy/pgbouncer.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := px.Balanced(); err == nil || !strings.Contains(err.Error(), "pgscale derives that of pgbouncer: (its own pgbouncer) only, not of proxy:") {
		t.Errorf("a proxy definition's balancing variant: %v", err)
	}
}

// pgscale's own items of a pgbouncer: target are checked as it is read,
// each mistake one line: a balance it does not know, a source twice, and
// pgbouncer 1.24's load_balance_hosts given as a [pgbouncer] setting.
func TestPgBouncerItems(t *testing.T) {
	for spec, want := range map[string]string{
		"p=pgbouncer:balance=random":                    "balance=random: want balance=round-robin",
		"p=pgbouncer:src=/a@x,src=/b@y":                 "src= is given twice",
		"p=pgbouncer:load_balance_hosts=round-robin":    "load_balance_hosts is a [databases] option of pgbouncer 1.24 and later, not a [pgbouncer] setting: give balance=round-robin",
		"p=pgbouncer:src=":                              "src=: empty source",
		"p=pgbouncer:pool_mode=session,balance=round-r": "balance=round-r: want",
	} {
		_, err := target.ParseSpec(spec)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v\nwant one line with %q", spec, err, want)
		}
	}
}
