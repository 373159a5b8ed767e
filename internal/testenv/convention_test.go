package testenv_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const testenvPath = "github.com/pgscale/pgscale/internal/testenv"

// One tiering convention: outside this package no Go file calls
// testing.Short (a test says it is the full suite's with testenv.Slow,
// Simulation or Browser), and testenv.Short is called from a TestMain
// (or a function of its *testing.M) alone. Two conventions had grown side by side (testenv.Slow and raw
// testing.Short, with skips worded each its own way).
func TestOneTieringConvention(t *testing.T) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || filepath.Dir(path) == filepath.Join(root, "internal", "testenv") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		names := importNames(f)
		for _, decl := range f.Decls {
			fn, isFunc := decl.(*ast.FuncDecl)
			inTestMain := isFunc && takesM(fn, names)
			ast.Inspect(decl, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "Short" {
					return true
				}
				x, ok := sel.X.(*ast.Ident)
				if !ok {
					return true
				}
				rel, _ := filepath.Rel(root, path)
				where := rel + ":" + strconv.Itoa(fset.Position(call.Pos()).Line)
				switch names[x.Name] {
				case "testing":
					t.Errorf("%s: testing.Short(); a test of the full suite alone calls testenv.Slow(t) (or Simulation, Browser) first, a TestMain testenv.Short()", where)
				case testenvPath:
					if !inTestMain {
						t.Errorf("%s: testenv.Short() outside a TestMain (a function of a *testing.M); a test calls testenv.Slow(t) (or Simulation, Browser)", where)
					}
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d Go files under %s: not the module", files, root)
	}
}

// takesM reports whether fn has a *testing.M parameter: TestMain, or a
// helper that runs its tests, which has no t to skip.
func takesM(fn *ast.FuncDecl, names map[string]string) bool {
	for _, p := range fn.Type.Params.List {
		star, ok := p.Type.(*ast.StarExpr)
		if !ok {
			continue
		}
		if sel, ok := star.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "M" {
			if x, ok := sel.X.(*ast.Ident); ok && names[x.Name] == "testing" {
				return true
			}
		}
	}
	return false
}

// importNames maps the names a file refers to its imports by to their paths.
func importNames(f *ast.File) map[string]string {
	names := map[string]string{}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = path
	}
	return names
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for ; dir != "/"; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
	}
	t.Fatal("no go.mod above the test's directory")
	return ""
}
