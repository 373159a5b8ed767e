package build

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestMergeMesonArgs(t *testing.T) {
	got := mergeMesonArgs([]string{"--buildtype=debugoptimized", "-Dcassert=false", "-Dicu=disabled"}, []string{"-Dcassert=true", "--buildtype=release", "-Dfoo=1"})
	want := []string{"-Dicu=disabled", "-Dcassert=true", "--buildtype=release", "-Dfoo=1"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestTailLines(t *testing.T) {
	var b strings.Builder
	b.WriteString("x.c:1:2: error: expected ';'\n")
	for i := 0; i < 30; i++ {
		b.WriteString("make[2]: line\n")
	}
	tail := tailLines(b.String(), 20)
	if len(tail) != 22 || tail[0] != "x.c:1:2: error: expected ';'" || tail[1] != "..." {
		t.Errorf("tail %q", tail)
	}
	if got := tailLines("a\nb\n", 20); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("short tail %q", got)
	}
	if got := tailLines("", 20); got != nil {
		t.Errorf("empty tail %q", got)
	}
}

func TestReadConstants(t *testing.T) {
	dir := t.TempDir()
	h := filepath.Join(dir, "src/include/storage/proc.h")
	os.MkdirAll(filepath.Dir(h), 0o755)
	os.WriteFile(h, []byte("/* x */\n#define\t\tFP_LOCK_SLOTS_PER_BACKEND 21\n#define FP_LOCK_SLOTS_PER_GROUP 16\n"), 0o644)
	if got := readConstants(dir); got["FP_LOCK_SLOTS_PER_BACKEND"] != 21 || len(got) != 1 {
		t.Errorf("got %v", got)
	}
	// PostgreSQL 18 sizes the fast path at run time: no constant.
	os.WriteFile(h, []byte("#define FastPathLockSlotsPerBackend() \\\n\t(FP_LOCK_SLOTS_PER_GROUP * FastPathLockGroupsPerBackend)\n"), 0o644)
	if got := readConstants(dir); got != nil {
		t.Errorf("got %v, want none", got)
	}
}
