package build_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/build"
)

// A commit whose tree has a submodule (an upstream pgbouncer's lib,
// libusual) exports with the submodule's files at the commit the tree
// records, which git archive alone leaves out; a clone whose submodule is
// not checked out is refused in one line saying what to run, before
// anything builds.
func TestExportSubmodule(t *testing.T) {
	ctx := context.Background()
	sub := gitRepo(t, map[string]string{"usual/x.h": "#define X 1\n"})
	top := gitRepo(t, map[string]string{"configure": "#!/bin/sh\n"})
	runGit(t, top, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "lib")
	runGit(t, top, "commit", "-q", "-m", "lib")
	runGit(t, top, "tag", "v1")
	// The submodule moves on; the tag keeps the commit it recorded.
	writeFiles(t, sub, map[string]string{"usual/x.h": "#define X 2\n"})
	runGit(t, sub, "commit", "-q", "-a", "-m", "two")
	runGit(t, filepath.Join(top, "lib"), "fetch", "-q")

	dst := t.TempDir()
	if _, err := build.Export(ctx, build.Source{Path: top, Rev: "v1"}, dst, nil); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "lib", "usual", "x.h")); err != nil || string(b) != "#define X 1\n" {
		t.Errorf("lib/usual/x.h = %q, %v; want the recorded commit's", b, err)
	}
	for rel, want := range map[string]bool{"configure": true, "lib/usual/x.h": false, "autogen.sh": false} {
		if got, err := build.HasFile(ctx, build.Source{Path: top, Rev: "v1"}, rel); err != nil || got != want {
			t.Errorf("HasFile(%s) = %v, %v; want %v", rel, got, err, want)
		}
	}

	clone := filepath.Join(t.TempDir(), "clone")
	runGit(t, top, "clone", "-q", top, clone)
	_, err := build.Export(ctx, build.Source{Path: clone, Rev: "v1"}, t.TempDir(), nil)
	if err == nil || !strings.Contains(err.Error(), "lib is a git submodule") || !strings.Contains(err.Error(), "submodule update --init") {
		t.Errorf("a clone without its submodule: %v; want it named with the command that checks it out", err)
	}
}
