// Package golden holds the one golden-file convention of pgscale's tests:
// output is compared with testdata/NAME.golden; `go test -update` rewrites
// the golden files from the output; a mismatch writes testdata/NAME.got
// beside the golden file, to diff and, once right, to accept with -update.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// updateFlag is the test binary's flag that rewrites the golden files.
const updateFlag = "update"

// RegisterFlag defines -update on the test binary's command line. Call it
// from the TestMain of each package whose tests use Check, before m.Run.
func RegisterFlag() {
	flag.Bool(updateFlag, false, "rewrite testdata/*.golden from the output")
}

// Check compares got with testdata/name.golden.
func Check(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	gotPath := filepath.Join("testdata", name+".got")
	if updating(t) {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		os.Remove(gotPath)
		return
	}
	want, err := os.ReadFile(path)
	if err == nil && bytes.Equal(got, want) {
		os.Remove(gotPath)
		return
	}
	if werr := os.WriteFile(gotPath, got, 0o644); werr != nil {
		t.Fatal(werr)
	}
	if err != nil {
		t.Errorf("%v (output written to %s; go test -update creates it)", err, gotPath)
		return
	}
	t.Errorf("%s differs from %s (diff them; go test -update accepts)", gotPath, path)
}

// updating reports whether the test binary was run with -update; it fails
// the test when the binary does not define the flag.
func updating(t testing.TB) bool {
	t.Helper()
	f := flag.Lookup(updateFlag)
	if f == nil {
		t.Fatal("golden: this test binary has no -update flag; call golden.RegisterFlag() from the package's TestMain")
	}
	return f.Value.String() == "true"
}
