package golden_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/pgscale/pgscale/internal/golden"
)

func TestMain(m *testing.M) {
	golden.RegisterFlag()
	os.Exit(m.Run())
}

// A match passes and leaves no .got; a mismatch fails and writes .got;
// -update rewrites the golden file and removes the .got.
func TestCheck(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join("testdata", "out.txt.golden")
	got := filepath.Join("testdata", "out.txt.got")
	if err := os.WriteFile(want, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if failed(func(t testing.TB) { golden.Check(t, "out.txt", []byte("one\n")) }) {
		t.Error("a match failed")
	}
	if _, err := os.Stat(got); err == nil {
		t.Error("a match left a .got file")
	}
	if !failed(func(t testing.TB) { golden.Check(t, "out.txt", []byte("two\n")) }) {
		t.Error("a mismatch passed")
	}
	if b, _ := os.ReadFile(got); string(b) != "two\n" {
		t.Errorf(".got holds %q", b)
	}
	if err := flag.Set("update", "true"); err != nil {
		t.Fatal(err)
	}
	defer flag.Set("update", "false")
	if failed(func(t testing.TB) { golden.Check(t, "out.txt", []byte("two\n")) }) {
		t.Error("-update failed")
	}
	if b, _ := os.ReadFile(want); string(b) != "two\n" {
		t.Errorf("after -update the golden file holds %q", b)
	}
	if _, err := os.Stat(got); err == nil {
		t.Error("-update left the .got file")
	}
}

// failed runs f with a testing.TB that records a failure instead of
// failing this test, and reports whether f failed.
func failed(f func(t testing.TB)) bool {
	r := &recorder{}
	f(r)
	return r.failed
}

// recorder is a testing.TB that records Errorf and Fatal; Check calls no
// other method but Helper.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatal(...any)          { r.failed = true }
