package layers_test

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
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
	{"internal/micro", true, drivers},
	{"internal/flame", true, drivers},
	{"internal/report", true, drivers},
	{"internal/report/html", true, drivers},
	// The CLI wires flags to runners and renderers: it neither drives
	// the load, nor samples the server, nor talks to it.
	{"internal/cli", false, []string{module + "internal/engine", module + "internal/probe", "github.com/jackc/pgx/"}},
	// The load engine and what it runs sit below where the server is and
	// what runs an experiment: they reach neither targets (nor, through
	// them, builds, YAML and /proc), nor runners, probes or agents.
	{"internal/engine", true, above},
	{"internal/metrics", true, above},
	{"internal/script", true, above},
	// The probes sample what a runner asks them to; they never run one.
	{"internal/probe", true, []string{module + "internal/rig", module + "internal/step", module + "internal/schedule/", module + "internal/experiment",
		module + "internal/agent", module + "internal/cli", module + "internal/suite"}},
	// The typed experiment is a value made at the edge: it reaches
	// nothing that runs it.
	{"internal/experiment", true, []string{module + "internal/rig", module + "internal/step", module + "internal/schedule/", module + "internal/probe",
		module + "internal/agent", module + "internal/cli", module + "internal/suite"}},
	// A step runs on the engine what the rig gives it: it knows no
	// targets (it imports none), and nothing of what drives it.
	{"internal/step", false, []string{module + "internal/target", module + "internal/experiment", module + "internal/workload"}},
	{"internal/step", true, []string{module + "internal/rig", module + "internal/schedule/", module + "internal/cli", module + "internal/suite"}},
	// The rig owns what runs; the schedules drive it, never the other
	// way, and it never reaches the edge.
	{"internal/rig", true, []string{module + "internal/schedule/", module + "internal/cli", module + "internal/suite"}},
	// A schedule is a room of its own: sweep, ab and microbench reach no
	// other (cells and bisect build on ab and sweep, microbench), and no
	// schedule reaches the edge.
	{"internal/schedule/sweep", false, []string{module + "internal/schedule/"}},
	{"internal/schedule/ab", false, []string{module + "internal/schedule/"}},
	{"internal/schedule/microbench", false, []string{module + "internal/schedule/"}},
	{"internal/schedule/bisect", true, []string{module + "internal/schedule/cells", module + "internal/schedule/microbench", module + "internal/cli"}},
	{"internal/schedule/cells", true, []string{module + "internal/schedule/bisect", module + "internal/cli"}},
	// The analysis is below the renderers: it computes what they lay out
	// and never reaches them.
	{"internal/stats", true, renderers},
	{"internal/compare", true, renderers},
	{"internal/diagnose", true, renderers},
	{"internal/trend", true, renderers},
	{"internal/micro", true, renderers},
	{"internal/flame", true, renderers},
	// Micro-benchmarks' analysis runs nothing: the schedule is
	// schedule/microbench; nor does the reading of profiles.
	{"internal/micro", true, running},
	{"internal/flame", true, running},
	// The renderers lay out result files and the analysis: they run
	// nothing, so they reach no target, build, engine, probe, runner,
	// agent, suite or store (nor the command line).
	{"internal/report", true, running},
	{"internal/report/html", true, running},
	// They lay out a finished value: no file is opened nor a profile
	// parsed there (internal/flame reads the profiles for the analysis).
	{"internal/report", false, noReading},
	{"internal/report/html", false, noReading},
	// The single mechanisms sit below all that use them: one
	// child-process package, one migrator, one load config, one view of
	// the watched server, the probes' options and the connection-error
	// classes reach none of their users.
	{"internal/proc", true, users},
	{"internal/migrate", true, users},
	{"internal/load", true, users},
	{"internal/watch", true, users},
	{"internal/probeopt", true, users},
	{"internal/connerr", true, users},
	{"internal/symtab", true, users},
	// The probes' names and ranks are a leaf every layer may import: the
	// probe, its options, its evidence and its views are registered
	// under it, so it reaches none of them (nor anything of pgscale's).
	{"internal/probeid", true, []string{module}},
}

// running is what runs an experiment, which the renderers must not reach.
var running = []string{
	module + "internal/target", module + "internal/build", module + "internal/engine", module + "internal/probe",
	module + "internal/rig", module + "internal/step", module + "internal/schedule/", module + "internal/experiment",
	module + "internal/agent", module + "internal/suite", module + "internal/store", module + "internal/cli",
}

// noReading is what a renderer would read files with: the file system,
// and pprof's parser.
var noReading = []string{"os", "io/fs", "github.com/google/pprof/"}

// users are the packages that use the single mechanisms (internal/proc,
// migrate, load, watch, probeopt, connerr, symtab), which must not reach them.
var users = append([]string{module + "internal/report", module + "internal/report/"}, running...)

// above are what the engine and its parts must not reach: where the
// server is, what runs an experiment, the server-side evidence, the
// commands.
var above = []string{
	module + "internal/target", module + "internal/build", module + "internal/rig", module + "internal/step", module + "internal/schedule/",
	module + "internal/experiment", module + "internal/probe", module + "internal/agent", module + "internal/cli", module + "internal/suite",
	module + "internal/store", module + "internal/report", module + "internal/report/",
}

// renderers are the formats: they lay out the analysis.
var renderers = []string{module + "internal/report", module + "internal/report/"}

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

// cliTests are the packages whose tests may run the command line
// in-process: its own, and the end-to-end ones that exist to run it.
var cliTests = []string{
	"internal/cli", "internal/cli/disturbtest", "internal/integration", "internal/doccheck", "internal/diagnose/catalogue", "internal/agent",
}

// Nothing imports the CLI but main: it is the top of the graph. A test
// runs it in-process only in the end-to-end packages above, so that the
// tests of a layer (the HTML report's) link neither the CLI nor what it
// links (SQLite).
func TestNothingImportsCLI(t *testing.T) {
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports,TestImports,XTestImports", module+"...").Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	cli := module + "internal/cli"
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath                         string
			Imports, TestImports, XTestImports []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list: %v", err)
		}
		name := strings.TrimPrefix(p.ImportPath, module)
		if slices.Contains(p.Imports, cli) && name != "cmd/pgscale" {
			t.Errorf("%s imports internal/cli: only cmd/pgscale may", name)
		}
		if (slices.Contains(p.TestImports, cli) || slices.Contains(p.XTestImports, cli)) && !slices.Contains(cliTests, name) {
			t.Errorf("%s's tests import internal/cli: run the layer's own API, or put the test in an end-to-end package (%s)", name, strings.Join(cliTests, ", "))
		}
	}
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

// hub is how many other internal packages a package may import: a
// package that imports more is where every change collides (DESIGN.md,
// "Experiments, rigs, schedules"). The command line is the one exception:
// it wires them all.
const hub = 12

// No package but the command line imports more than hub internal
// packages.
func TestNoHub(t *testing.T) {
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", module+"...").Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list: %v", err)
		}
		name := strings.TrimPrefix(p.ImportPath, module)
		if name == "internal/cli" {
			continue
		}
		var internal []string
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, module+"internal/") {
				internal = append(internal, strings.TrimPrefix(imp, module))
			}
		}
		if len(internal) > hub {
			t.Errorf("%s imports %d internal packages, more than %d: %s", name, len(internal), hub, strings.Join(internal, ", "))
		}
	}
}

// belowEdge are the packages below the command line: the typed
// experiment, the rig, a step, the schedules, the workload, where the
// server is and its builds, the agents, the disturbances, the engine, the
// connection errors and the analysis. They are handed values and speak of
// no flag (issue 45): a mistake is found and worded at the edge, or
// returned as a typed error the edge words, and what the run says of a
// flag mid-run is worded by the edge and given to it
// (experiment.Data.SetupName, Recreate, MakeTables; ab.Spec.OneLayout;
// workload.OptionError; target.SpecError and the other typed errors of
// target, target.Words, build.CacheDirError; agent.OptionError,
// NoRunError; disturb.SpecError; load.RawLimitError; connerr.Remedy,
// worded for where the connection string came from). The analysis names a
// remedy by a typed value (diagnose.Remedy) that the renderers word
// (report/remedy), and the command line hands their words to it
// (compare.Options.Say) for the sentences it makes. One a line, to merge.
var belowEdge = []string{
	"internal/experiment",
	"internal/rig",
	"internal/step",
	"internal/schedule/...",
	"internal/workload",
	"internal/compare/...",
	"internal/diagnose/...",
	"internal/micro",
	"internal/stats",
	"internal/store",
	"internal/trend",
	"internal/flame",
	"internal/result",
	"internal/observe",
	"internal/watch",
	"internal/metrics",
	"internal/txnlog",
	"internal/migrate",
	"internal/load",
	"internal/script",
	"internal/symtab",
	"internal/secret",
	"internal/syncio",
	"internal/prose",
	"internal/usage",
	"internal/probeid",
	"internal/agent/...",
	"internal/disturb/...",
	"internal/engine/...",
	"internal/connerr/...",
	"internal/proc",
	"internal/target/...",
	"internal/build/...",
}

// otherPrograms are the options of the programs run below the edge,
// which are not pgscale's flags: per file, the words allowed in its
// string literals, and why.
var otherPrograms = []struct {
	file  string
	words []string
	why   string
}{
	{"internal/schedule/microbench/count.go",
		[]string{"--tool", "--trace-children", "--separate-threads", "--dump-line", "--dump-instr", "--dump-after", "--dump-before", "--callgrind-out-file"},
		"valgrind's options, on the command line of the callgrind a counted micro-benchmark runs under"},
	{"internal/schedule/bisect/step.go", []string{"--stat"}, "git diff's, for a culprit's diffstat"},
	{"internal/compare/comparetest/comparetest.go", []string{"--tool"},
		"valgrind's, among the options a counted test file records it ran with"},
	{"internal/micro/format_bmf.go", []string{"--format"}, "bencher run's, in the help of the format it writes"},
	{"internal/micro/format_gbench.go", []string{"--benchmark"},
		"Google Benchmark's --benchmark_format, _filter, _min_time and _repetitions, in its format's help and on the command line of a counted benchmark (the finder reads the word up to its underscore)"},
	{"internal/micro/format_libtest.go", []string{"--output-format"}, "criterion's, in the help of the format it writes"},
	{"internal/micro/format_pytest.go", []string{"--benchmark-json"}, "pytest-benchmark's, in the help of the format it writes"},
	{"internal/store/commit.go", []string{"--porcelain", "--untracked-files"}, "git status's, to see whether a tree has changes"},
	{"internal/target/cluster.go", []string{"--auth", "--locale", "--no-sync", "--no-instructions"}, "initdb's, making an ephemeral cluster"},
	{"internal/target/find.go", []string{"--bindir", "--version", "--pkglibdir"}, "pg_config's and postgres's, finding the server binaries, their version and modules"},
	{"internal/target/kind_src.go", []string{"--enable-debug", "--disable-cassert", "--verify"},
		"configure's defaults, said in the src: kind's help, and git rev-parse's, finding a commit's tree"},
	{"internal/target/pgbouncer.go", []string{"--version"}, "pgbouncer's, reading its version"},
	{"internal/target/pgbouncer_build.go", []string{"--without-openssl", "--exists"}, "pgbouncer's configure's, in its default build commands, and pkg-config's, finding libevent"},
	{"internal/target/replica.go", []string{"--no-sync"}, "pg_basebackup's, making a replica"},
	{"internal/target/samedata.go", []string{"--reflink"}, "cp's, copying a data directory"},
	{"internal/target/valgrind.go",
		[]string{"--version", "--tool", "--instr-atstart", "--trace-children", "--vgdb", "--vgdb-prefix", "--callgrind-out-file", "--dump-line", "--collect-systime", "--pid", "--max-invoke-ms"},
		"valgrind's and vgdb's, running a server under callgrind and controlling it"},
	{"internal/build/command.go", []string{"--version"}, "a build command's tools', recorded in the manifest"},
	{"internal/build/extension.go", []string{"--version", "--pkglibdir", "--sharedir", "--name-only"},
		"a build command's tools', pg_config's, finding where an extension installs, and git ls-tree's"},
	{"internal/build/installed.go", []string{"--version", "--sharedir", "--pkglibdir"}, "postgres's and pg_config's, of the installed server"},
	{"internal/build/patch.go", []string{"--whitespace", "--dry-run", "--batch", "--forward", "--no-backup-if-mismatch"}, "git apply's and patch's, applying a patch"},
	{"internal/build/postgres.go", []string{"--prefix", "--version", "--quiet", "--destdir", "--buildtype", "--enable-debug", "--disable-cassert", "--without-", "--without"},
		"configure's, meson's and postgres's, building PostgreSQL"},
	{"internal/build/source.go", []string{"--show-toplevel", "--show-prefix", "--verify", "--end-of-options", "--cached", "--others", "--exclude-standard"},
		"git rev-parse's and git ls-files', reading a source tree"},
	{"internal/build/toolchain.go", []string{"--version", "--exists"}, "the compiler's and pkg-config's, finding the toolchain"},
	{"internal/build/tree.go", []string{"--init", "--recursive", "--show-toplevel", "--format"}, "git submodule's, git rev-parse's and git archive's, exporting a tree"},
	{"internal/build/buildtest/buildtest.go", []string{"--verify"}, "git rev-parse's, finding a fixture's tag"},
}

// flagWord is a long option named in a string: --word, not inside
// another word (a--b) nor git's bare --.
var flagWord = regexp.MustCompile(`(?:^|[^\w-])(--[a-z][a-z0-9-]*)`)

// flagWords are the long options text names.
func flagWords(text string) []string {
	var out []string
	for _, m := range flagWord.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// No string literal of a package below the edge names a flag (its test
// files, which may spell a command line as data, aside): a message that
// does was worded in the wrong place.
func TestNoFlagWordsBelowTheEdge(t *testing.T) {
	args := []string{"list", "-json=ImportPath,Dir,GoFiles,CgoFiles"}
	for _, p := range belowEdge {
		args = append(args, module+p)
	}
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	used := map[string]bool{}
	files := 0
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath, Dir   string
			GoFiles, CgoFiles []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list: %v", err)
		}
		// The directory is read so that a file added to it runs the test
		// again (go test caches by the files the test opened).
		if _, err := os.ReadDir(p.Dir); err != nil {
			t.Fatal(err)
		}
		rel := strings.TrimPrefix(p.ImportPath, module)
		for _, name := range append(p.GoFiles, p.CgoFiles...) {
			files++
			file := rel + "/" + name
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				text, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatalf("%s: %v", fset.Position(lit.Pos()), err)
				}
				for _, w := range flagWords(text) {
					if allowed(file, w) {
						used[file+" "+w] = true
						continue
					}
					t.Errorf("%s:%d names the flag %s in %s: word it at the edge (internal/cli), or return a typed error the edge words",
						file, fset.Position(lit.Pos()).Line, w, lit.Value)
				}
				return true
			})
		}
	}
	if files == 0 {
		t.Fatal("go list found no files below the edge")
	}
	for _, o := range otherPrograms {
		for _, w := range o.words {
			if !used[o.file+" "+w] {
				t.Errorf("%s no longer names %s (%s): drop it from otherPrograms", o.file, w, o.why)
			}
		}
	}
}

// allowed says file may name w: another program's option.
func allowed(file, w string) bool {
	for _, o := range otherPrograms {
		if o.file == file && slices.Contains(o.words, w) {
			return true
		}
	}
	return false
}

// The finder itself: options wherever a word starts, with or without a
// value, and not git's bare -- nor a dash inside a word.
func TestFlagWords(t *testing.T) {
	for text, want := range map[string][]string{
		"or pass --init": {"--init"},
		"(--rounds auto:N) or (--count instructions)": {"--rounds", "--count"},
		"--tool=callgrind":                            {"--tool"},
		"diff --stat a b -- .":                        {"--stat"},
		"-- .":                                        nil,
		"a--b, x-y, -t, -T 10":                        nil,
		"\"--reshuffle 2\"":                           {"--reshuffle"},
	} {
		if got := flagWords(text); !slices.Equal(got, want) {
			t.Errorf("flagWords(%q) = %q, want %q", text, got, want)
		}
	}
}
