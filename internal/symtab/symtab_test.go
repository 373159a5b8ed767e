package symtab

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/pgscale/pgscale/internal/testenv"
)

const source = `
static int __attribute__((noinline)) hidden_work(int x) { int s = 0; for (int i = 0; i < x; i++) s += i * x; return s; }
int exported_entry(int x) { return hidden_work(x) + 1; }
`

// build compiles a shared library (an extension's module is one) with a
// build id, and returns its path.
func build(t *testing.T, dir string) string {
	t.Helper()
	testenv.NeedProgram(t, "gcc", "Debian: apt-get install gcc")
	testenv.NeedProgram(t, "objcopy", "Debian: apt-get install binutils")
	src := filepath.Join(dir, "mod.c")
	if err := os.WriteFile(src, []byte(source), 0o644); err != nil {
		t.Fatal(err)
	}
	so := filepath.Join(dir, "mod.so")
	run(t, "gcc", "-O1", "-g", "-shared", "-fPIC", "-Wl,--build-id", "-o", so, src)
	return so
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

// addr is the address of function name in the file at path, from its own
// symbol table (before it is stripped).
func addr(t *testing.T, path, name string) uint64 {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == name {
			return s.Value + 1 // inside it, as a return address is
		}
	}
	t.Fatalf("%s has no %s", path, name)
	return 0
}

func TestSources(t *testing.T) {
	dir := t.TempDir()
	so := build(t, dir)
	hidden, entry := addr(t, so, "hidden_work"), addr(t, so, "exported_entry")
	root := filepath.Join(dir, "debug")

	check := func(tb *Table, source string, hiddenNamed bool) {
		t.Helper()
		if tb.Source != source {
			t.Errorf("%s: source %q, want %q (%+v)", tb.Path, tb.Source, source, tb.Info)
		}
		if n, ok := tb.Name(entry); !ok || n != "exported_entry" {
			t.Errorf("%s: exported function named %q %v", tb.Path, n, ok)
		}
		if n, ok := tb.Name(hidden); ok != hiddenNamed || (ok && n != "hidden_work") {
			t.Errorf("%s: static function named %q %v, want named %v", tb.Path, n, ok, hiddenNamed)
		}
	}
	// Unstripped: its own symbol table names both.
	tb := open(so, root)
	check(tb, SourceSymtab, true)
	if tb.BuildID == "" || tb.Stripped() {
		t.Errorf("build id %q, stripped %v", tb.BuildID, tb.Stripped())
	}

	// Stripped, its debug file apart and linked by .gnu_debuglink in
	// .debug beside it: named from the debug file.
	linked := filepath.Join(dir, "linked.so")
	debug := filepath.Join(dir, ".debug", "linked.so.debug")
	if err := os.MkdirAll(filepath.Dir(debug), 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, "objcopy", "--only-keep-debug", so, debug)
	run(t, "objcopy", "--strip-all", "--add-gnu-debuglink="+debug, so, linked)
	tb = open(linked, root)
	check(tb, SourceDebug, true)
	if tb.DebugFile != debug || tb.Debuglink != "linked.so.debug" {
		t.Errorf("debug file %q, debuglink %q", tb.DebugFile, tb.Debuglink)
	}

	// Stripped with no debug file: the dynamic symbols name the exported
	// function only, and the table says where it looked.
	bare := filepath.Join(dir, "bare.so")
	run(t, "objcopy", "--strip-all", so, bare)
	tb = open(bare, root)
	check(tb, SourceDynsym, false)
	if !tb.Stripped() || len(tb.Looked) != 1 || tb.Looked[0] != filepath.Join(root, ".build-id", tb.BuildID[:2], tb.BuildID[2:]+".debug") {
		t.Errorf("stripped %v, looked for %v", tb.Stripped(), tb.Looked)
	}

	// The same stripped file with its debug file installed by build id.
	byID := filepath.Join(root, ".build-id", tb.BuildID[:2], tb.BuildID[2:]+".debug")
	if err := os.MkdirAll(filepath.Dir(byID), 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, "cp", debug, byID)
	check(open(bare, root), SourceDebug, true)

	// Not an ELF file: named nothing, and why.
	tb = open(src(dir), root)
	if tb.Source != SourceNone || tb.Err == "" {
		t.Errorf("a C file: %+v", tb.Info)
	}
}

func src(dir string) string { return filepath.Join(dir, "mod.c") }

func TestParseAddr(t *testing.T) {
	for in, want := range map[string]uint64{"3fa2b5": 0x3fa2b5, "0x000000000044a690": 0x44a690, "ffffffff813aecd3": 0xffffffff813aecd3} {
		if got, err := ParseAddr(in); err != nil || got != want {
			t.Errorf("ParseAddr(%q) = %x, %v", in, got, err)
		}
	}
	if _, err := ParseAddr("[unknown]"); err == nil {
		t.Error("[unknown] read as an address")
	}
}
