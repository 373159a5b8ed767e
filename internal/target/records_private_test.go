package target

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/build"
)

// An extension's record names the commit this target resolved, not the one
// its cached build was first made from: two commits of one tree share a
// build (and its manifest), and history bisect reads the record's commit.
func TestExtensionRecordsTheCommitResolved(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	git("commit", "-q", "--allow-empty", "-m", "first")
	first := git("rev-parse", "HEAD")
	git("commit", "-q", "--allow-empty", "-m", "second, the same tree")
	second := git("rev-parse", "HEAD")
	m := &build.Manifest{Extensions: []build.ExtensionRecord{{Name: "x", Source: build.SourceRecord{Path: dir, Rev: first[:7], Commit: first}}}}
	got := extensionRecords(context.Background(), m, []build.Extension{{Source: build.Source{Path: dir, Rev: "HEAD"}}})
	if len(got) != 1 || got[0].Commit != second || got[0].Source != dir+"@HEAD" || got[0].Tree == "" {
		t.Errorf("record %+v, want commit %s (HEAD), not the manifest's %s", got, second[:7], first[:7])
	}
}
