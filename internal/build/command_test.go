package build_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/build"
)

// gitRepo makes a git repository in a temporary directory with files
// committed, and returns its path.
func gitRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, files)
	runGit(t, dir, "init", "-q")
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-q", "-m", "first")
	return dir
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(body, "#!") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
}

func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// hello is a C program whose output is in a header, so a change to the
// header is a change to the program.
var hello = map[string]string{
	"hello.c":    "#include <stdio.h>\n#include \"msg.h\"\nint main(void) { puts(MSG); return 0; }\n",
	"msg.h":      "#define MSG \"hello\"\n",
	"Makefile":   "hello: hello.c msg.h\n\t$(CC) -O2 -o hello hello.c\n",
	"sub/run.sh": "#!/bin/sh\nexec \"$(dirname \"$0\")/../hello\"\n",
}

func privateBuilder(t *testing.T) *build.Builder {
	return &build.Builder{Cache: t.TempDir(), Progress: func(e build.Event) {
		if e.Done {
			t.Logf("%s %s: %s in %s", e.Name, e.Key[:8], e.Phase, e.Elapsed)
		}
	}}
}

func output(t *testing.T, prog string) string {
	t.Helper()
	out, err := exec.Command(prog).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", prog, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestCommandBuildsTreeAndCaches(t *testing.T) {
	repo := gitRepo(t, hello)
	b := privateBuilder(t)
	ctx := context.Background()
	spec := build.Command{Name: "hello", Source: build.Source{Path: repo, Rev: "HEAD"}, Run: "make"}
	first, err := b.Build(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if first.Cached {
		t.Error("first build says cached")
	}
	if got := output(t, filepath.Join(first.Dir, "sub", "run.sh")); got != "hello" {
		t.Errorf("built program says %q, want hello", got)
	}
	m := first.Manifest
	if m.Kind != build.KindCommand || m.Keep != build.KeepTree || m.Command != "make" || m.Source.Mode != build.ModeCommit {
		t.Errorf("manifest: %+v", m)
	}
	if tree := runGit(t, repo, "rev-parse", "HEAD^{tree}"); m.Source.Tree != tree {
		t.Errorf("manifest tree %s, git says %s", m.Source.Tree, tree)
	}
	if _, err := os.Stat(filepath.Join(first.Root, "build.log")); err != nil {
		t.Error(err)
	}
	second, err := b.Build(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if !second.Cached || second.Key != first.Key || second.Root != first.Root {
		t.Errorf("second build: cached %v key %s root %s; want the first's %s %s", second.Cached, second.Key, second.Root, first.Key, first.Root)
	}
	if st := runGit(t, repo, "status", "--porcelain", "--ignored"); st != "" {
		t.Errorf("the checkout changed:\n%s", st)
	}
}

// The working tree as it is on disk is built, uncommitted and untracked
// files included, ignored ones not, and the checkout is not touched.
func TestCommandWorktree(t *testing.T) {
	files := map[string]string{".gitignore": "*.o\nhello\n"}
	for k, v := range hello {
		files[k] = v
	}
	repo := gitRepo(t, files)
	b := privateBuilder(t)
	ctx := context.Background()
	key := func(rev string) string {
		k, err := b.Key(ctx, build.Command{Source: build.Source{Path: repo, Rev: rev}, Run: "make"})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	head := key("HEAD")
	if wt := key(""); wt != head {
		t.Errorf("a clean working tree's key %s differs from HEAD's %s", wt, head)
	}
	writeFiles(t, repo, map[string]string{"junk.o": "ignored"})
	if wt := key(""); wt != head {
		t.Errorf("an ignored file changed the working tree's key")
	}
	writeFiles(t, repo, map[string]string{"msg.h": "#define MSG \"changed\"\n"})
	changed := key("")
	if changed == head {
		t.Fatal("an uncommitted change left the key as HEAD's")
	}
	writeFiles(t, repo, map[string]string{"NOTES": "untracked"})
	untracked := key("")
	if untracked == changed {
		t.Error("an untracked file left the key unchanged")
	}
	before := runGit(t, repo, "status", "--porcelain", "--ignored")
	bld, err := b.Build(ctx, build.Command{Source: build.Source{Path: repo}, Run: "make"})
	if err != nil {
		t.Fatal(err)
	}
	if bld.Key != untracked || bld.Manifest.Source.Mode != build.ModeWorktree {
		t.Errorf("built key %s mode %s, want %s worktree", bld.Key, bld.Manifest.Source.Mode, untracked)
	}
	if got := output(t, filepath.Join(bld.Dir, "hello")); got != "changed" {
		t.Errorf("working-tree build says %q, want the uncommitted change's \"changed\"", got)
	}
	if _, err := os.Stat(filepath.Join(bld.Dir, "junk.o")); err == nil {
		t.Error("an ignored file was copied into the build")
	}
	if after := runGit(t, repo, "status", "--porcelain", "--ignored"); after != before {
		t.Errorf("the checkout changed:\nbefore\n%s\nafter\n%s", before, after)
	}
	if _, err := os.Stat(filepath.Join(repo, "hello")); err == nil {
		t.Error("the build wrote into the checkout")
	}
}

// A plain directory (no git) hashes to the tree git would make of it, so an
// unpacked tarball of a commit shares its builds.
func TestCommandPlainDirectory(t *testing.T) {
	repo := gitRepo(t, hello)
	plain := t.TempDir()
	writeFiles(t, plain, hello)
	b := privateBuilder(t)
	ctx := context.Background()
	k1, err := b.Key(ctx, build.Command{Source: build.Source{Path: repo, Rev: "HEAD"}, Run: "make"})
	if err != nil {
		t.Fatal(err)
	}
	bld, err := b.Build(ctx, build.Command{Source: build.Source{Path: plain}, Run: "make"})
	if err != nil {
		t.Fatal(err)
	}
	if bld.Key != k1 || bld.Manifest.Source.Mode != build.ModeDir {
		t.Errorf("plain directory: key %s mode %s; want the commit's key %s, mode dir", bld.Key, bld.Manifest.Source.Mode, k1)
	}
}

func TestCommandKeepPrefix(t *testing.T) {
	repo := gitRepo(t, hello)
	b := privateBuilder(t)
	bld, err := b.Build(context.Background(), build.Command{
		Source: build.Source{Path: repo, Rev: "HEAD"},
		Run:    `make && mkdir -p "$PREFIX/bin" && cp hello "$PREFIX/bin/"`,
		Keep:   build.KeepPrefix,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := output(t, filepath.Join(bld.Dir, "bin", "hello")); got != "hello" {
		t.Errorf("installed program says %q", got)
	}
	if _, err := os.Stat(filepath.Join(bld.Dir, "hello.c")); err == nil {
		t.Error("keep prefix kept the tree")
	}
	_, err = b.Build(context.Background(), build.Command{Source: build.Source{Path: repo, Rev: "HEAD"}, Run: "make", Keep: build.KeepPrefix})
	var be *build.Error
	if !errors.As(err, &be) || be.Phase != build.PhaseBuild {
		t.Errorf("a command that installs nothing: %v, want a build-phase *Error", err)
	}
}

// A patch is applied to the copy, and its bytes are part of the key.
func TestCommandPatches(t *testing.T) {
	repo := gitRepo(t, hello)
	patches := t.TempDir()
	good := filepath.Join(patches, "good.patch")
	writeFiles(t, patches, map[string]string{
		"good.patch": "--- a/msg.h\n+++ b/msg.h\n@@ -1 +1 @@\n-#define MSG \"hello\"\n+#define MSG \"patched\"\n",
		"bad.patch":  "--- a/msg.h\n+++ b/msg.h\n@@ -1 +1 @@\n-#define MSG \"nothing like this\"\n+#define MSG \"patched\"\n",
	})
	b := privateBuilder(t)
	ctx := context.Background()
	src := build.Source{Path: repo, Rev: "HEAD", Patches: []string{good}}
	bld, err := b.Build(ctx, build.Command{Source: src, Run: "make"})
	if err != nil {
		t.Fatal(err)
	}
	if got := output(t, filepath.Join(bld.Dir, "hello")); got != "patched" {
		t.Errorf("patched build says %q", got)
	}
	if p := bld.Manifest.Source.Patches; len(p) != 1 || p[0].Path != good || len(p[0].SHA256) != 64 {
		t.Errorf("manifest patches %+v", p)
	}
	plain, _ := b.Key(ctx, build.Command{Source: build.Source{Path: repo, Rev: "HEAD"}, Run: "make"})
	if plain == bld.Key {
		t.Error("the patch did not change the key")
	}
	src.Patches = []string{filepath.Join(patches, "bad.patch")}
	_, err = b.Build(ctx, build.Command{Name: "bad", Source: src, Run: "make"})
	var be *build.Error
	if !errors.As(err, &be) || be.Phase != build.PhasePatch {
		t.Fatalf("a patch that does not apply: %v, want a patch-phase *Error", err)
	}
	if be.Name != "bad" || be.Log == "" || len(be.Tail) == 0 {
		t.Errorf("error %+v: want the name, the log and its tail", be)
	}
	t.Logf("%v\n%s", be, strings.Join(be.Tail, "\n"))
	if bld, _ := b.Lookup(ctx, build.Command{Source: src, Run: "make"}); bld != nil {
		t.Error("the failed build is in the cache")
	}
	assertNoScratch(t, b.Cache)
}

func TestCommandFailureCachesNothing(t *testing.T) {
	repo := gitRepo(t, hello)
	b := privateBuilder(t)
	ctx := context.Background()
	spec := build.Command{Name: "fails", Source: build.Source{Path: repo, Rev: "HEAD"}, Run: "echo the last words; exit 3"}
	_, err := b.Build(ctx, spec)
	var be *build.Error
	if !errors.As(err, &be) || be.Phase != build.PhaseBuild {
		t.Fatalf("got %v, want a build-phase *Error", err)
	}
	if !strings.Contains(strings.Join(be.Tail, "\n"), "the last words") {
		t.Errorf("tail %q lacks the command's output", be.Tail)
	}
	if log, err := os.ReadFile(be.Log); err != nil || !strings.Contains(string(log), "the last words") {
		t.Errorf("log %s: %v", be.Log, err)
	}
	if !strings.Contains(be.Error(), "build fails: build failed") || !strings.Contains(be.Error(), be.Log) {
		t.Errorf("message %q", be.Error())
	}
	if ents, _ := build.List(b.Cache); len(ents) != 0 {
		t.Errorf("cache holds %d builds after a failure", len(ents))
	}
	assertNoScratch(t, b.Cache)
}

// Two builders of one key: the second waits for the first and uses its
// build; the command runs once.
func TestCommandConcurrentSameKey(t *testing.T) {
	repo := gitRepo(t, hello)
	count := filepath.Join(t.TempDir(), "count")
	spec := build.Command{Source: build.Source{Path: repo, Rev: "HEAD"}, Run: "echo x >> " + count + "; sleep 1; make"}
	cache := t.TempDir()
	var wg sync.WaitGroup
	builds := make([]*build.Build, 2)
	errs := make([]error, 2)
	for i := range builds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := &build.Builder{Cache: cache}
			builds[i], errs[i] = b.Build(context.Background(), spec)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if builds[0].Root != builds[1].Root || builds[0].Cached == builds[1].Cached {
		t.Errorf("roots %s %s, cached %v %v: want one build, made once and found once", builds[0].Root, builds[1].Root, builds[0].Cached, builds[1].Cached)
	}
	if b, _ := os.ReadFile(count); string(b) != "x\n" {
		t.Errorf("the command ran %d times", strings.Count(string(b), "x"))
	}
}

func TestCommandCancel(t *testing.T) {
	repo := gitRepo(t, hello)
	b := privateBuilder(t)
	ctx, cancel := context.WithCancel(context.Background())
	b.Progress = func(e build.Event) {
		if e.Phase == build.PhaseBuild && !e.Done {
			time.AfterFunc(300*time.Millisecond, cancel)
		}
	}
	start := time.Now()
	_, err := b.Build(ctx, build.Command{Source: build.Source{Path: repo, Rev: "HEAD"}, Run: "sleep 60 & sleep 60; make"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("cancel took %s", took)
	}
	if ents, _ := build.List(b.Cache); len(ents) != 0 {
		t.Errorf("cache holds %d builds after a cancel", len(ents))
	}
	assertNoScratch(t, b.Cache)
}

// assertNoScratch checks that no build left a scratch directory, and that
// no process runs in one.
func assertNoScratch(t *testing.T, cache string) {
	t.Helper()
	tmp := filepath.Join(cache, "tmp")
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("scratch left in %s: %v", tmp, ents)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cwd")
	for _, p := range procs {
		if cwd, err := os.Readlink(p); err == nil && strings.HasPrefix(cwd, tmp+"/") {
			t.Errorf("process %s still runs in %s", filepath.Base(filepath.Dir(p)), cwd)
		}
	}
}

func TestListPrune(t *testing.T) {
	repo := gitRepo(t, hello)
	b := privateBuilder(t)
	ctx := context.Background()
	var keys []string
	for _, run := range []string{"make", "make hello", "make && true"} {
		bld, err := b.Build(ctx, build.Command{Source: build.Source{Path: repo, Rev: "HEAD"}, Run: run})
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, bld.Key)
	}
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(filepath.Join(b.Cache, keys[0], "used"), old, old); err != nil {
		t.Fatal(err)
	}
	ents, err := build.List(b.Cache)
	if err != nil || len(ents) != 3 {
		t.Fatalf("list: %d entries, %v", len(ents), err)
	}
	for _, e := range ents {
		if e.Size == 0 || e.Manifest == nil || e.Created.IsZero() || e.LastUsed.IsZero() {
			t.Errorf("entry %+v", e)
		}
	}
	if ents[2].Key != keys[0] {
		t.Errorf("least recently used is %s, want %s", ents[2].Key, keys[0])
	}
	gone, err := build.Prune(b.Cache, build.PruneOptions{UnusedFor: 24 * time.Hour})
	if err != nil || len(gone) != 1 || gone[0].Key != keys[0] {
		t.Errorf("prune unused for a day: %v %v", gone, err)
	}
	gone, err = build.Prune(b.Cache, build.PruneOptions{Unreferenced: true, Keep: keys[1:2]})
	if err != nil || len(gone) != 1 || gone[0].Key != keys[2] {
		t.Errorf("prune unreferenced: %v %v", gone, err)
	}
	if _, err := build.Prune(b.Cache, build.PruneOptions{All: true}); err != nil {
		t.Error(err)
	}
	if ents, _ := build.List(b.Cache); len(ents) != 0 {
		t.Errorf("%d builds after prune all", len(ents))
	}
}

func TestParseSource(t *testing.T) {
	dir := t.TempDir()
	at := filepath.Join(dir, "a@b")
	os.Mkdir(at, 0o755)
	for _, c := range []struct {
		in   string
		want build.Source
	}{
		{dir, build.Source{Path: dir}},
		{dir + "@main", build.Source{Path: dir, Rev: "main"}},
		{dir + "@HEAD@{1}", build.Source{Path: dir, Rev: "HEAD@{1}"}},
		{at, build.Source{Path: at}},
		{at + "@v1+x.patch+y.patch", build.Source{Path: at, Rev: "v1", Patches: []string{"x.patch", "y.patch"}}},
		{"/nowhere@fp21", build.Source{Path: "/nowhere", Rev: "fp21"}},
		{"/nowhere+p", build.Source{Path: "/nowhere", Patches: []string{"p"}}},
	} {
		got, err := build.ParseSource(c.in)
		if err != nil || got.String() != c.want.String() {
			t.Errorf("ParseSource(%q) = %q, %v; want %q", c.in, got.String(), err, c.want.String())
		}
	}
	for _, bad := range []string{"", "/x+", "@rev"} {
		if _, err := build.ParseSource(bad); err == nil {
			t.Errorf("ParseSource(%q) succeeded", bad)
		}
	}
}

// ccache is used when it is there but is no part of the key.
func TestKeyIgnoresCCache(t *testing.T) {
	repo := gitRepo(t, hello)
	spec := build.Command{Source: build.Source{Path: repo, Rev: "HEAD"}, Run: "make"}
	with, err := (&build.Builder{Cache: t.TempDir()}).Key(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	without, err := (&build.Builder{Cache: t.TempDir(), NoCCache: true}).Key(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if with != without {
		t.Errorf("key with ccache %s, without %s", with, without)
	}
}
