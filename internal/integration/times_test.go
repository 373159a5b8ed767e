package integration_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// testTimes are the tests' times, as each ends.
var testTimes struct {
	mu sync.Mutex
	of []testTime
}

type testTime struct {
	name    string
	took    time.Duration
	skipped bool
}

// trackTime records how long t takes, for the table printTimes writes.
func trackTime(t *testing.T) {
	start := time.Now()
	t.Cleanup(func() {
		testTimes.mu.Lock()
		testTimes.of = append(testTimes.of, testTime{t.Name(), time.Since(start), t.Skipped()})
		testTimes.mu.Unlock()
	})
}

// printTimes writes the tests' times, slowest first, to stdout (shown by
// go test -v) and to the file $PGSCALE_TEST_TIMES names (.ci/run prints
// it after the tests).
func printTimes() {
	testTimes.mu.Lock()
	ts := slices.Clone(testTimes.of)
	testTimes.mu.Unlock()
	slices.SortFunc(ts, func(a, b testTime) int { return int(b.took - a.took) })
	var b strings.Builder
	var total time.Duration
	for _, t := range ts {
		total += t.took
	}
	fmt.Fprintf(&b, "internal/integration: %d tests, %s\n", len(ts), total.Round(time.Second))
	for _, t := range ts {
		mark := ""
		if t.skipped {
			mark = " (skipped)"
		}
		fmt.Fprintf(&b, "%8.1fs  %s%s\n", t.took.Seconds(), t.name, mark)
	}
	fmt.Print(b.String())
	if path := os.Getenv("PGSCALE_TEST_TIMES"); path != "" {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "PGSCALE_TEST_TIMES: %v\n", err)
		}
	}
}

// Every test of the package is in the times table: one without trackTime
// (nine were, 250 s of CI's suite) is time nobody sees.
func TestEveryTestTracksItsTime(t *testing.T) {
	trackTime(t)
	fset := token.NewFileSet()
	files, _ := filepath.Glob("*_test.go")
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Name.Name == "TestMain" || fn.Name.Name == "TestHogChild" {
				continue
			}
			tracked := false
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok {
					if id, ok := c.Fun.(*ast.Ident); ok && id.Name == "trackTime" {
						tracked = true
					}
				}
				return !tracked
			})
			if !tracked {
				t.Errorf("%s: %s does not call trackTime", fset.Position(fn.Pos()), fn.Name.Name)
			}
		}
	}
}
