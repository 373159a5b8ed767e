package store_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/store"
)

// AddFiles gives each file the label and commit of its target, else the
// ones for every target, else finds the commit in the CI environment;
// reads a file whose bytes are not given; and on a failure returns what
// it stored before it.
func TestAddFiles(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "history.db"))
	dir := t.TempDir()
	var pending []store.Pending
	for i, name := range []string{"x", "y", "z"} {
		f, _ := variant(t, time.Duration(i)*time.Minute, 1000+float64(i))
		f.Target.Name = name
		raw := encode(t, f)
		p := store.Pending{Path: filepath.Join(dir, name+".json"), File: f, Raw: raw}
		if name == "z" { // read from its path, decoded there
			if err := os.WriteFile(p.Path, raw, 0o644); err != nil {
				t.Fatal(err)
			}
			p.Raw, p.File, p.Workload = nil, nil, "suite cell"
		}
		pending = append(pending, p)
	}
	env := map[string]string{"CI_COMMIT_SHA": "5eed5eed"}
	added, err := s.AddFiles(ctx, pending, store.AddOptions{
		Labels:  map[string]string{"y": "patched", "": "main"},
		Commits: map[string]string{"x": "0123abc"},
		Getenv:  func(v string) string { return env[v] },
	})
	if err != nil || len(added) != 3 {
		t.Fatalf("%d added: %v", len(added), err)
	}
	for i, want := range []struct{ path, label, commit, from, workload string }{
		{pending[0].Path, "main", "0123abc", "", ""},
		{pending[1].Path, "patched", "5eed5eed", "$CI_COMMIT_SHA", ""},
		{pending[2].Path, "main", "5eed5eed", "$CI_COMMIT_SHA", "suite cell"},
	} {
		a := added[i]
		if a.Path != want.path || a.Label != want.label || a.Meta.Commit != want.commit || a.CommitFrom != want.from ||
			a.Meta.Workload != want.workload || a.Duplicate || a.Points == 0 {
			t.Errorf("file %d: %+v, want %+v", i, a, want)
		}
	}
	// Again, with a missing file last: the two before it are duplicates,
	// returned with the error.
	pending[2].Path = filepath.Join(dir, "missing.json")
	added, err = s.AddFiles(ctx, pending, store.AddOptions{})
	if err == nil || !strings.Contains(err.Error(), "missing.json") || len(added) != 2 || !added[0].Duplicate || !added[1].Duplicate {
		t.Errorf("a missing file: %d added, %v", len(added), err)
	}
}

// A server built from source is recorded under the commit it was built
// from, before git or the CI environment: -dirty for a changed working
// tree, + a hash of the patches for a patched build.
func TestBuildCommit(t *testing.T) {
	const c = "19c5574e961a89af64d861be900f1423b8847b7f"
	p := []result.BuildPatch{{Path: "/tmp/a.patch", SHA256: strings.Repeat("ab", 32)}}
	for _, tc := range []struct {
		b    *result.Build
		want string
	}{
		{nil, ""},
		{&result.Build{Mode: "dir"}, ""},
		{&result.Build{Commit: c}, c},
		{&result.Build{Commit: c, Dirty: true}, c + "-dirty"},
		{&result.Build{Commit: c, Patches: p}, c + "+"},
	} {
		got := store.BuildCommit(tc.b)
		if got != tc.want && !(strings.HasSuffix(tc.want, "+") && strings.HasPrefix(got, tc.want) && len(got) == len(tc.want)+8) {
			t.Errorf("BuildCommit(%+v) = %q, want %q", tc.b, got, tc.want)
		}
	}
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "history.db"))
	f, _ := variant(t, 0, 1000)
	f.Target.Build = &result.Build{Source: "/src/pg@fp21", Path: "/src/pg", Rev: "fp21", Mode: "commit", Commit: c, Tree: "ce80d5ce",
		System: "autoconf", Configure: []string{"--enable-debug"}, Compiler: "gcc", Key: strings.Repeat("6957044d", 4)}
	added, err := s.AddFiles(ctx, []store.Pending{{Path: "r.json", File: f, Raw: encode(t, f)}},
		store.AddOptions{Git: true, Getenv: func(string) string { return "5eed5eed" }})
	if err != nil || len(added) != 1 || added[0].Meta.Commit != c || added[0].CommitFrom != "the build of /src/pg@fp21" {
		t.Errorf("added %+v: %v", added, err)
	}
}
