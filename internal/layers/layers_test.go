package layers_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/pgscale/pgscale/"

// drivers are the import paths, or their prefixes ending in "/", of
// database drivers and of database/sql, which every driver plugs into.
var drivers = []string{
	"database/sql",
	"database/sql/driver",
	"github.com/jackc/pgx/",
	"modernc.org/sqlite",
	"modernc.org/sqlite/",
	"github.com/lib/pq",
	"github.com/mattn/go-sqlite3",
}

// rules are the boundaries: a package, whether the rule covers everything
// it depends on (go list -deps) or only what it imports itself, and the
// import paths (or prefixes ending in "/") it must not reach.
var rules = []struct {
	pkg    string
	deps   bool
	forbid []string
}{
	// The analysis and the renderers read result files and history
	// values; they never reach a database.
	{"internal/stats", true, drivers},
	{"internal/compare", true, drivers},
	{"internal/diagnose", true, drivers},
	{"internal/trend", true, drivers},
	{"internal/report", true, drivers},
	{"internal/report/html", true, drivers},
	// The CLI wires flags to runners and renderers: it neither drives
	// the load, nor samples the server, nor talks to it.
	{"internal/cli", false, []string{module + "internal/engine", module + "internal/probe", "github.com/jackc/pgx/"}},
}

// pkg is what go list -json says of a package.
type pkg struct {
	ImportPath string
	Dir        string
	Imports    []string
	Module     *struct{ Dir string }
}

// TestBoundaries checks every rule against go list -deps -json and names,
// for each breach, the chain of imports that makes it.
func TestBoundaries(t *testing.T) {
	args := []string{"list", "-deps", "-json=ImportPath,Dir,Imports,Module"}
	for _, r := range rules {
		args = append(args, module+r.pkg)
	}
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	graph := map[string][]string{}
	dirs := map[string]bool{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list: %v", err)
		}
		graph[p.ImportPath] = p.Imports
		if strings.HasPrefix(p.ImportPath, module) {
			dirs[p.Dir], dirs[p.Module.Dir] = true, true
		}
	}
	// go test caches a passing result by the files the test opened, and
	// go list's reading is not the test's: listing the directories of
	// pgscale's packages and of go.mod makes a change to any of their
	// files run the test again.
	for d := range dirs {
		if _, err := os.ReadDir(d); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range rules {
		root := module + r.pkg
		if _, ok := graph[root]; !ok {
			t.Errorf("%s: go list does not list it", r.pkg)
			continue
		}
		for _, chain := range breaches(graph, root, r.deps, r.forbid) {
			c := trim(chain)
			t.Errorf("%s must not reach %s: %s", r.pkg, c[len(c)-1], strings.Join(c, " → "))
		}
	}
}

// breaches returns, for every forbidden package root reaches (through
// its own imports alone, unless deps), the shortest chain of imports from
// root to it.
func breaches(graph map[string][]string, root string, deps bool, forbid []string) [][]string {
	parent := map[string]string{root: ""}
	queue := []string{root}
	var out [][]string
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, imp := range graph[p] {
			if _, seen := parent[imp]; seen {
				continue
			}
			parent[imp] = p
			if forbidden(imp, forbid) {
				chain := []string{imp}
				for q := p; q != ""; q = parent[q] {
					chain = append(chain, q)
				}
				slices.Reverse(chain)
				out = append(out, chain)
				continue
			}
			if deps {
				queue = append(queue, imp)
			}
		}
	}
	return out
}

func forbidden(path string, forbid []string) bool {
	for _, f := range forbid {
		if path == f || strings.HasSuffix(f, "/") && strings.HasPrefix(path, f) {
			return true
		}
	}
	return false
}

// trim drops the module path from the packages of a chain.
func trim(chain []string) []string {
	out := make([]string, len(chain))
	for i, p := range chain {
		out[i] = strings.TrimPrefix(p, module)
	}
	return out
}

// The checker itself: on a made-up graph it finds a driver two imports
// down with deps, only a direct import without, and stops at the first
// forbidden package of a chain.
func TestBreaches(t *testing.T) {
	graph := map[string][]string{
		"a":            {"b", "c"},
		"b":            {"database/sql", "e"},
		"c":            {"github.com/jackc/pgx/v5"},
		"database/sql": {"d"},
		"e":            {"b"},
	}
	got := breaches(graph, "a", true, drivers)
	want := [][]string{{"a", "c", "github.com/jackc/pgx/v5"}, {"a", "b", "database/sql"}}
	slices.SortFunc(got, func(x, y []string) int { return strings.Compare(strings.Join(x, " "), strings.Join(y, " ")) })
	slices.SortFunc(want, func(x, y []string) int { return strings.Compare(strings.Join(x, " "), strings.Join(y, " ")) })
	if !slices.EqualFunc(got, want, slices.Equal[[]string]) {
		t.Errorf("with deps: %v, want %v", got, want)
	}
	if got := breaches(graph, "a", false, drivers); len(got) != 0 {
		t.Errorf("imports alone: %v, want none", got)
	}
	if got := breaches(graph, "b", false, drivers); len(got) != 1 || got[0][1] != "database/sql" {
		t.Errorf("b's imports: %v, want database/sql", got)
	}
}
