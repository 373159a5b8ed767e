package target

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A search returns the first place that has the program, stops at a place
// the user named that lacks it, and otherwise lists where it looked and
// how to fix it.
func TestSearch(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "prog")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	errNone := errors.New("prog not found")
	at := func(label, path string) place { return place{label: label, at: func() string { return path }} }
	got, err := search(errNone, isExecutable, "install it", at("nowhere", ""), at("tmp", filepath.Join(dir, "other")), at("dir", prog))
	if err != nil || got != prog {
		t.Errorf("search = %q, %v; want %s", got, err, prog)
	}
	_, err = search(errNone, isExecutable, "install it", namedPlace("", ""), namedPlace("--prog /x", "/x"), at("dir", prog))
	if !errors.Is(err, errNone) || err.Error() != "prog not found at --prog /x" {
		t.Errorf("a named place without it: %v", err)
	}
	_, err = search(errNone, isExecutable, "install it", namedPlace("", ""), at("PATH", ""), at("/usr/sbin", "/no/such"), at("PATH", ""))
	if !errors.Is(err, errNone) || err.Error() != "prog not found (searched PATH, /usr/sbin); install it" {
		t.Errorf("nowhere: %v", err)
	}
	t.Setenv("PATH", dir)
	if got, err := findProgram("prog", "", "PGSCALE_NO_SUCH_VARIABLE", errNone, "install it"); err != nil || got != prog {
		t.Errorf("findProgram on PATH = %q, %v", got, err)
	}
	t.Setenv("PGSCALE_NO_SUCH_VARIABLE", "/no/such/prog")
	if _, err := findProgram("prog", "", "PGSCALE_NO_SUCH_VARIABLE", errNone, "install it"); err == nil ||
		!strings.Contains(err.Error(), "at $PGSCALE_NO_SUCH_VARIABLE=/no/such/prog") {
		t.Errorf("findProgram with a variable naming nothing: %v", err)
	}
}
