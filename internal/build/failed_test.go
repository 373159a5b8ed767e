package build_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/build"
)

// A failed build is remembered beside its log (failed/KEY.json: when, which
// phase, the log); Build tries the key again whenever it is asked, and a
// build of the key that succeeds forgets the failure and its log. An
// interrupted build is not remembered.
func TestCommandCachedFailure(t *testing.T) {
	repo := gitRepo(t, hello)
	b := privateBuilder(t)
	ctx := context.Background()
	// The command fails until a file outside the tree (so outside the
	// key) exists: the same key first fails, then builds.
	flag := filepath.Join(t.TempDir(), "ready")
	spec := build.Command{Name: "flaky", Source: build.Source{Path: repo, Rev: "HEAD"}, Run: "test -e " + flag + " || { echo not ready; exit 3; }; make"}
	if f, err := b.Failed(ctx, spec); err != nil || f != nil {
		t.Fatalf("before any build: failure %+v, %v; want none", f, err)
	}
	before := time.Now().UTC()
	_, err := b.Build(ctx, spec)
	var be *build.Error
	if !errors.As(err, &be) || be.Phase != build.PhaseBuild {
		t.Fatalf("got %v, want a build-phase *Error", err)
	}
	f, err := b.Failed(ctx, spec)
	if err != nil || f == nil {
		t.Fatalf("the failure was not remembered: %+v, %v", f, err)
	}
	if f.Key != be.Key || f.Phase != build.PhaseBuild || f.Log != be.Log || f.Name != "flaky" || f.When.Before(before.Add(-time.Second)) ||
		!strings.Contains(f.Err, "exit status 3") || !strings.Contains(strings.Join(f.Tail, "\n"), "not ready") {
		t.Errorf("remembered %+v, want key %s, phase build, log %s, the exit and the tail", f, be.Key, be.Log)
	}
	if want := filepath.Join(b.Cache, "failed", be.Key+".json"); !exists(want) || !exists(be.Log) {
		t.Errorf("want %s beside the log %s", want, be.Log)
	}
	if ae := f.AsError(); ae.Phase != be.Phase || ae.Log != be.Log || !strings.Contains(ae.Error(), "build failed") {
		t.Errorf("as an error: %v", ae)
	}

	// Asked again, Build tries again (and fails again: still remembered).
	if _, err := b.Build(ctx, spec); !errors.As(err, &be) {
		t.Fatalf("second build: %v, want a failure", err)
	}
	if f2, _ := b.Failed(ctx, spec); f2 == nil || f2.When.Before(f.When) {
		t.Errorf("the second failure is not remembered: %+v", f2)
	}

	// The same key builds: the failure and its log are forgotten.
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	bld, err := b.Build(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if f, err := b.Failed(ctx, spec); err != nil || f != nil {
		t.Errorf("after a build that succeeded: failure %+v, %v; want none", f, err)
	}
	if exists(filepath.Join(b.Cache, "failed", bld.Key+".json")) || exists(filepath.Join(b.Cache, "failed", bld.Key+".log")) {
		t.Errorf("failed/%s.json or .log left after the key built", bld.Key)
	}

	// An interrupted build is no failure of the tree.
	slow := build.Command{Name: "slow", Source: build.Source{Path: repo, Rev: "HEAD"}, Run: "sleep 30; make"}
	cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	if _, err := b.Build(cctx, slow); err == nil {
		t.Fatal("the interrupted build succeeded")
	}
	if f, err := b.Failed(ctx, slow); err != nil || f != nil {
		t.Errorf("an interrupted build was remembered as failed: %+v, %v", f, err)
	}
	assertNoScratch(t, b.Cache)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
