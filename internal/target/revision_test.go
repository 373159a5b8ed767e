package target_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
)

// A target as a result file recorded it is made ready to bisect between
// the commits of two recorded runs: the source built at those commits
// loses its revision, every other source written without one is pinned
// at the commit its build recorded; a target of one source takes commits
// from elsewhere (--commit, CI); one built from nothing is refused.
func TestBisectBetween(t *testing.T) {
	const (
		pgA, pgB = "1111111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "2222222bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
		exA, exB = "3333333ccccccccccccccccccccccccccccccccc", "4444444ddddddddddddddddddddddddddddddddd"
	)
	rec := func(pg, ext string) result.Target {
		b := &result.Build{Commit: pg}
		if ext != "" {
			b.Extensions = []result.BuildExtension{{Commit: ext}}
		}
		return result.Target{Build: b}
	}
	for _, tc := range []struct {
		spec          string
		before, after result.Target
		good, bad     string
		want, what    string
		err           string
	}{
		// The extension moved, the server is pinned where it was built.
		{spec: "src:/pg,ext=/ext", before: rec(pgA, exA), after: rec(pgA, exB), good: exA, bad: exB[:7],
			want: "src:/pg@" + pgA + ",ext=/ext", what: "the extension /ext"},
		// The server moved; the extension keeps its revision.
		{spec: "src:/pg,ext=/ext@v1", before: rec(pgA, exA), after: rec(pgB, exA), good: pgA[:10], bad: pgB,
			want: "src:/pg,ext=/ext@v1", what: "the server"},
		// Revisions given in the spec: the moving source's is dropped.
		{spec: "src:/pg@" + pgB, before: rec(pgA, ""), after: rec(pgB, ""), good: pgA, bad: pgB,
			want: "src:/pg", what: "the server"},
		// The installed server's extension, recorded under the CI's commits.
		{spec: "settings:,ext=/ext", before: result.Target{Build: &result.Build{Extensions: []result.BuildExtension{{}}}},
			after: result.Target{}, good: "5555555", bad: "6666666", want: "settings:ext=/ext", what: "the extension /ext"},
		// A pgbouncer built from its tree at two commits.
		{spec: "pgbouncer:src=/pgb@" + pgB + ",balance=round-robin", before: result.Target{Pooler: &result.Pooler{Build: &result.PoolerBuild{Commit: pgA}}},
			after: result.Target{Pooler: &result.Pooler{Build: &result.PoolerBuild{Commit: pgB}}}, good: pgA, bad: pgB,
			want: "pgbouncer:src=/pgb,balance=round-robin", what: "pgbouncer's tree"},
		{spec: "settings:", good: pgA, bad: pgB, err: "was not built from source"},
		{spec: "bin:/usr/lib/postgresql/15/bin", good: pgA, bad: pgB, err: "was not built from source"},
		{spec: "src:/pg,ext=/ext", before: rec(pgA, exA), after: rec(pgA, exA), good: "7777777", bad: "8888888",
			err: "no source of it was built at 7777777 and 8888888 (the server at 1111111 and 1111111; the extension /ext at 3333333 and 3333333)"},
	} {
		spec, err := target.ParseSpec("x=" + tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		spec.Name = ""
		got, rev, err := target.BisectBetween(spec, tc.before, tc.after, tc.good, tc.bad)
		if tc.err != "" {
			if err == nil || !usage.Is(err) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want a usage error saying %q", tc.spec, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.spec, err)
			continue
		}
		if got.String() != tc.want || rev.Label() != tc.what {
			t.Errorf("%s: %s bisecting %s, want %s bisecting %s", tc.spec, got, rev.Label(), tc.want, tc.what)
		}
	}
}

// The spec a result file records has no A/B name and absolute paths.
func TestSpecRecorded(t *testing.T) {
	t.Chdir("/tmp")
	spec, err := target.ParseSpec("a=src:pg@v1+fix.patch,ext=ext")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := spec.Recorded(), "src:/tmp/pg@v1+/tmp/fix.patch,ext=/tmp/ext"; got != want {
		t.Errorf("recorded %q, want %q", got, want)
	}
}

// A proxy's build goes into the build cache the options name (--build-cache),
// as a src: target's does, not the default one; a failed one is
// remembered there and said before it is tried again.
func TestProxyBuildUsesTheBuildCache(t *testing.T) {
	repo := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"commit", "-q", "--allow-empty", "-m", "first"}} {
		if out, err := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	def := func(run string) target.Spec {
		t.Helper()
		s, err := target.ParseSpec(`p=proxy:{"command": "{{build}}/prog {{dir}}", "build": {"source": "` + repo + `@HEAD", "run": "` + run + `"}}`)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	cache := t.TempDir()
	opt := target.ClusterOptions{BuildCache: cache}
	var said []string
	log := func(s string) { said = append(said, s) }
	bld, err := target.BuildAt(context.Background(), def("touch prog"), opt, log)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(bld.Root, cache+"/") {
		t.Errorf("the proxy was built into %s, not the cache named, %s", bld.Root, cache)
	}
	bad := def("echo no; exit 3")
	if _, err := target.BuildAt(context.Background(), bad, opt, log); err == nil {
		t.Fatal("a build command that fails built")
	}
	if f, err := target.FailedBuild(context.Background(), bad, opt); err != nil || f == nil || f.Phase != "build" {
		t.Fatalf("the failure is not remembered in %s: %+v, %v", cache, f, err)
	}
	said = nil
	target.BuildAt(context.Background(), bad, opt, log)
	if !strings.Contains(strings.Join(said, "\n"), "failed at") || !strings.Contains(strings.Join(said, "\n"), "building it again") {
		t.Errorf("building it again does not say the last failure:\n%s", strings.Join(said, "\n"))
	}
}
