// Package symtab names the functions of an ELF file (an executable, a
// shared library, an extension's module) by address, from its debug file
// where one is installed (by build id under /usr/lib/debug/.build-id, or
// by its .gnu_debuglink), else its own symbol table, else its dynamic
// symbol table, and says which of them it read: a stripped file named only
// from its dynamic symbols leaves its static functions without a name.
package symtab

import (
	"bytes"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Where a file's names come from (Info.Source).
const (
	// SourceDebug: a separate debug file's symbol table (Info.DebugFile),
	// every function named.
	SourceDebug = "debug file"
	// SourceSymtab: the file's own symbol table, every function named.
	SourceSymtab = "symbol table"
	// SourceDynsym: the dynamic symbol table alone (a stripped file with
	// no debug file installed): exported functions are named, static ones
	// are not.
	SourceDynsym = "dynamic symbols"
	// SourceNone: no symbol at all, or a file that could not be read
	// (Info.Err).
	SourceNone = "none"
)

// DebugRoot is where debug files are installed (Debian's -dbgsym and -dbg
// packages, and most distributions').
const DebugRoot = "/usr/lib/debug"

// Info is what a file's names come from.
type Info struct {
	Path      string
	BuildID   string // hex, "" when the file has none
	Debuglink string // the debug file's name its .gnu_debuglink gives, "" when none
	Source    string
	// DebugFile is the debug file read (SourceDebug); Looked the debug
	// files looked for, when none was found.
	DebugFile string
	Looked    []string
	// Err is why the file could not be read (SourceNone).
	Err string
}

// Stripped says whether the file's static functions have no name: only
// its dynamic symbols (or none) could be read.
func (i Info) Stripped() bool { return i.Source == SourceDynsym || i.Source == SourceNone }

// Table names the functions of one file.
type Table struct {
	Info
	funcs []fn // by address
}

type fn struct {
	start, end uint64
	name       string
}

// Open reads the names of the file at path: from its debug file, its
// symbol table or its dynamic symbols, the first that has functions. A
// file that cannot be read is a Table that names nothing, with Info.Err.
func Open(path string) *Table {
	return open(path, DebugRoot)
}

func open(path, root string) *Table {
	t := &Table{Info: Info{Path: path, Source: SourceNone}}
	f, err := elf.Open(path)
	if err != nil {
		t.Err = err.Error()
		return t
	}
	defer f.Close()
	t.BuildID = buildID(f)
	t.Debuglink = debuglink(f)
	for _, cand := range debugCandidates(path, t.BuildID, t.Debuglink, root) {
		df, err := elf.Open(cand)
		if err != nil {
			t.Looked = append(t.Looked, cand)
			continue
		}
		// A debug file of another build would name the wrong functions.
		if id := buildID(df); t.BuildID != "" && id != "" && id != t.BuildID {
			df.Close()
			t.Looked = append(t.Looked, cand)
			continue
		}
		syms, _ := df.Symbols()
		df.Close()
		if t.funcs = functions(syms); len(t.funcs) > 0 {
			t.Source, t.DebugFile, t.Looked = SourceDebug, cand, nil
			return t
		}
		t.Looked = append(t.Looked, cand)
	}
	if syms, err := f.Symbols(); err == nil {
		if t.funcs = functions(syms); len(t.funcs) > 0 {
			t.Source = SourceSymtab
			return t
		}
	}
	if syms, err := f.DynamicSymbols(); err == nil {
		if t.funcs = functions(syms); len(t.funcs) > 0 {
			t.Source = SourceDynsym
		}
	}
	return t
}

// Name is the function at address addr (the file's virtual address, as
// perf script prints a frame's), and whether one is known there.
func (t *Table) Name(addr uint64) (string, bool) {
	i := sort.Search(len(t.funcs), func(i int) bool { return t.funcs[i].start > addr }) - 1
	if i < 0 || addr >= t.funcs[i].end {
		return "", false
	}
	return t.funcs[i].name, true
}

// functions are syms' functions by address, each ending where its size
// says (or, with no size, where the next begins).
func functions(syms []elf.Symbol) []fn {
	var out []fn
	for _, s := range syms {
		typ := elf.ST_TYPE(s.Info)
		if (typ != elf.STT_FUNC && typ != elf.STT_GNU_IFUNC) || s.Value == 0 || s.Section == elf.SHN_UNDEF {
			continue
		}
		name := s.Name
		if i := strings.Index(name, "@"); i > 0 { // versioned dynamic symbols: memcpy@@GLIBC_2.14
			name = name[:i]
		}
		out = append(out, fn{start: s.Value, end: s.Value + s.Size, name: name})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].start != out[j].start {
			return out[i].start < out[j].start
		}
		return out[i].end > out[j].end // the larger of two aliases first
	})
	// One function per address (aliases: the first, the largest), and a
	// function without a size ends where the next begins.
	dedup := out[:0]
	for _, f := range out {
		if len(dedup) > 0 && dedup[len(dedup)-1].start == f.start {
			continue
		}
		dedup = append(dedup, f)
	}
	for i := range dedup {
		if dedup[i].end == dedup[i].start && i+1 < len(dedup) {
			dedup[i].end = dedup[i+1].start
		}
	}
	return dedup
}

// buildID is the file's GNU build id in hex, "" when it has none.
func buildID(f *elf.File) string {
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOTE {
			continue
		}
		b, err := s.Data()
		if err != nil {
			continue
		}
		for len(b) >= 12 {
			namesz := f.ByteOrder.Uint32(b[0:4])
			descsz := f.ByteOrder.Uint32(b[4:8])
			typ := f.ByteOrder.Uint32(b[8:12])
			nameEnd := 12 + align4(namesz)
			descEnd := nameEnd + align4(descsz)
			if uint64(len(b)) < uint64(descEnd) || uint64(len(b)) < uint64(nameEnd)+uint64(descsz) {
				break
			}
			name := bytes.TrimRight(b[12:12+namesz], "\x00")
			if typ == 3 && string(name) == "GNU" { // NT_GNU_BUILD_ID
				return hex.EncodeToString(b[nameEnd : nameEnd+descsz])
			}
			b = b[descEnd:]
		}
	}
	return ""
}

func align4(n uint32) uint32 { return (n + 3) &^ 3 }

// debuglink is the name in the file's .gnu_debuglink section, "" when it
// has none.
func debuglink(f *elf.File) string {
	s := f.Section(".gnu_debuglink")
	if s == nil {
		return ""
	}
	b, err := s.Data()
	if err != nil {
		return ""
	}
	if i := bytes.IndexByte(b, 0); i > 0 {
		return string(b[:i])
	}
	return ""
}

// debugCandidates are the debug files of a file, in the order GDB looks
// for them: by build id under root/.build-id, then by its debuglink beside
// it, in .debug beside it, and under root at its directory.
func debugCandidates(path, id, link, root string) []string {
	var out []string
	if len(id) > 2 {
		out = append(out, filepath.Join(root, ".build-id", id[:2], id[2:]+".debug"))
	}
	if link != "" {
		dir := filepath.Dir(path)
		if real, err := filepath.EvalSymlinks(path); err == nil {
			dir = filepath.Dir(real)
		}
		out = append(out, filepath.Join(dir, link), filepath.Join(dir, ".debug", link), filepath.Join(root, dir, link))
	}
	return out
}

// Cache keeps each file's table, read once; safe for concurrent use.
type Cache struct {
	mu     sync.Mutex
	tables map[string]*Table
}

// Table is path's table, read on first use.
func (c *Cache) Table(path string) *Table {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tables == nil {
		c.tables = map[string]*Table{}
	}
	t, ok := c.tables[path]
	if !ok {
		t = Open(path)
		c.tables[path] = t
	}
	return t
}

// Name is the function at addr in the file at path, and whether one is
// known there.
func (c *Cache) Name(path string, addr uint64) (string, bool) {
	return c.Table(path).Name(addr)
}

// ParseAddr reads a frame's address as perf script prints it: hex, with
// or without 0x.
func ParseAddr(s string) (uint64, error) {
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
	if err != nil {
		return 0, fmt.Errorf("frame address %q: %w", s, err)
	}
	return v, nil
}
