package micro_test

import (
	"io/fs"
	"os"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/pgscale/pgscale/internal/micro"
)

// criterionTree is testdata/criterion as criterion writes target/criterion:
// every benchmark's files written at now, but old/gone's, an hour
// before (a benchmark of an earlier run that did not run this time).
func criterionTree(t *testing.T, now time.Time) fstest.MapFS {
	t.Helper()
	m := fstest.MapFS{}
	err := fs.WalkDir(os.DirFS("testdata/criterion"), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile("testdata/criterion/" + p)
		if err != nil {
			return err
		}
		mod := now
		if strings.HasPrefix(p, "old/") {
			mod = now.Add(-time.Hour)
		}
		m[p] = &fstest.MapFile{Data: b, ModTime: mod}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// criterion's results: the slope as ns/op where criterion fitted one,
// else the mean; the median; a throughput; the field names of criterion
// 0.3 and later and the capitalised ones of its book's older example;
// base/ and the report left alone, a benchmark from an earlier run left
// out.
func TestCriterionFormat(t *testing.T) {
	f, err := micro.LookupFormat("criterion")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	ss, err := f.Tree(criterionTree(t, now), now.Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	want := `Fibonacci/Recursive ns/op=19275.5 median-ns/op=19107.9
fib/20 ns/op=31912.7 median-ns/op=31890.3
parse/big ns/op=1.23457e+06 median-ns/op=1.22988e+06 MB/s=849.347^
`
	if got := show(ss); got != want {
		t.Errorf("got\n%swant\n%s", got, want)
	}
	// A benchmark whose estimates.json is missing or broken is an error
	// naming it.
	tree := criterionTree(t, now)
	tree["fib/20/new/estimates.json"].Data = []byte("{")
	if _, err := f.Tree(tree, now.Add(-time.Minute)); err == nil || !strings.Contains(err.Error(), "criterion's results, fib/20/new: estimates.json: unexpected end of JSON input") {
		t.Errorf("broken estimates.json: %v", err)
	}
	delete(tree, "fib/20/new/estimates.json")
	if _, err := f.Tree(tree, now.Add(-time.Minute)); err == nil || !strings.Contains(err.Error(), "fib/20/new/estimates.json") {
		t.Errorf("no estimates.json: %v", err)
	}
}
