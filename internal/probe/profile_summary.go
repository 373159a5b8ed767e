package probe

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/pprof/profile"

	"github.com/pgscale/pgscale/internal/proc"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/symtab"
)

// maxProfileFunctions is how many functions a profile's summary keeps
// with their objects (result.Profile.Functions), most own samples first.
const maxProfileFunctions = 25

// summarize keeps the profile's top functions for the result file, and
// its work (every process but the probes' own backends) by the object and
// the function on the CPU, each object with where its names came from.
func summarize(prof *profile.Profile, file string, syms *objectSymbols) *result.Profile {
	self, total := map[string]int64{}, map[string]int64{}
	type fnKey struct{ name, object string }
	wSelf, wTotal := map[fnKey]int64{}, map[fnKey]int64{}
	objSelf, objUnnamed := map[string]int64{}, map[string]int64{}
	var n, work int64
	for _, s := range prof.Sample {
		c := s.Value[0]
		n += c
		inWork := len(s.Label["backend_type"]) == 0 || s.Label["backend_type"][0] != KindProbe
		if inWork {
			work += c
		}
		seen := map[string]bool{}
		seenW := map[fnKey]bool{}
		for i, l := range s.Location {
			name := l.Line[0].Function.Name
			obj := ""
			if l.Mapping != nil {
				obj = l.Mapping.File
			}
			if i == 0 {
				self[name] += c
				if inWork {
					wSelf[fnKey{name, obj}] += c
					objSelf[obj] += c
					if unnamed(name) {
						objUnnamed[obj] += c
					}
				}
			}
			if !seen[name] {
				seen[name] = true
				total[name] += c
			}
			if k := (fnKey{name, obj}); inWork && !seenW[k] {
				seenW[k] = true
				wTotal[k] += c
			}
		}
	}
	out := &result.Profile{File: file, Samples: n, Work: work}
	for name, c := range self {
		out.Top = append(out.Top, result.ProfileFunc{Function: name, Self: c, Total: total[name]})
	}
	sortProfileFuncs(out.Top)
	if len(out.Top) > 15 {
		out.Top = out.Top[:15]
	}
	for k, c := range wSelf {
		out.Functions = append(out.Functions, result.ProfileFunc{Function: k.name, Object: k.object, Self: c, Total: wTotal[k]})
	}
	sortProfileFuncs(out.Functions)
	if len(out.Functions) > maxProfileFunctions {
		out.Functions = out.Functions[:maxProfileFunctions]
	}
	for obj, c := range objSelf {
		o := result.ProfileObject{Object: obj, Self: c, Unnamed: objUnnamed[obj]}
		if syms != nil && strings.HasPrefix(obj, "/") {
			o.Symbols = syms.symbols(obj, o.Unnamed > 0)
		}
		out.Objects = append(out.Objects, o)
	}
	sort.Slice(out.Objects, func(i, j int) bool {
		a, b := out.Objects[i], out.Objects[j]
		return a.Self > b.Self || a.Self == b.Self && a.Object < b.Object
	})
	return out
}

func sortProfileFuncs(fs []result.ProfileFunc) {
	sort.Slice(fs, func(i, j int) bool {
		if fs[i].Self != fs[j].Self {
			return fs[i].Self > fs[j].Self
		}
		if fs[i].Function != fs[j].Function {
			return fs[i].Function < fs[j].Function
		}
		return fs[i].Object < fs[j].Object
	})
}

// callgrindAddr is how callgrind names a function no symbol names: its
// address.
var callgrindAddr = regexp.MustCompile(`^0x[0-9a-fA-F]+$`)

// unnamed says whether a profile's function name is no name: perf's
// frames no symbol names ("[postgres]", ParsePerfScript) or callgrind's
// ("0x000000000044a690").
func unnamed(name string) bool {
	return strings.HasPrefix(name, "[") && strings.HasSuffix(name, "]") || callgrindAddr.MatchString(name)
}

// objectSymbols says, once per file, where its function names come from
// (symtab) and, for a file with unnamed functions, which package
// installed it (dpkg), so that the report can name what would name them.
type objectSymbols struct {
	names symtab.Cache
	mu    sync.Mutex
	pkgs  map[string][2]string
}

func (o *objectSymbols) symbols(path string, wantPackage bool) *result.Symbols {
	t := o.names.Table(path)
	s := &result.Symbols{Source: t.Source, BuildID: t.BuildID, DebugFile: t.DebugFile, Error: t.Err}
	if t.Stripped() {
		s.Looked = t.Looked
	}
	if wantPackage && t.Stripped() {
		pkg := o.pkg(path, t.BuildID)
		s.Package, s.PackageVersion = pkg[0], pkg[1]
	}
	return s
}

// pkg is the package that installed the file at path and its version
// (dpkg), or of the file it is a copy of: a copy of the installed server
// (a build cache's .../install/usr/lib/postgresql/15/bin/postgres) is
// the file at the same path under / when that has the same build id.
func (o *objectSymbols) pkg(path, id string) [2]string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if p, ok := o.pkgs[path]; ok {
		return p
	}
	if o.pkgs == nil {
		o.pkgs = map[string][2]string{}
	}
	var found [2]string
	for _, cand := range packageCandidates(path) {
		if cand != path && id != "" && o.names.Table(cand).BuildID != id {
			continue
		}
		if p := dpkgOwner(cand); p != "" {
			found = [2]string{p, dpkgVersion(p)}
			break
		}
	}
	o.pkgs[path] = found
	return found
}

// packageCandidates are the paths a package may list the file at path
// under: itself, its other name across a merged /usr (/lib and /usr/lib),
// and for a copy in a tree that mirrors / (an "install" directory), the
// original's.
func packageCandidates(path string) []string {
	out := []string{path}
	if real, err := filepath.EvalSymlinks(path); err == nil && real != path {
		out = append(out, real)
	}
	if i := strings.LastIndex(path, "/install/usr/"); i >= 0 {
		out = append(out, path[i+len("/install"):])
	}
	for _, p := range append([]string(nil), out...) {
		if rest, ok := strings.CutPrefix(p, "/usr/lib/"); ok {
			out = append(out, "/lib/"+rest)
		}
	}
	return out
}

func dpkgOwner(path string) string {
	if _, err := os.Stat(path); err != nil {
		return ""
	}
	out, err := proc.Output(context.Background(), proc.Spec{Name: "dpkg-query", Path: "dpkg-query", Args: []string{"-S", path}, Timeout: 10 * time.Second})
	if err != nil {
		return ""
	}
	// "postgresql-15: /usr/lib/postgresql/15/bin/postgres"; a file of
	// several packages lists them all ("a, b: path"): the first.
	pkgs, _, ok := strings.Cut(strings.TrimSpace(out), ": ")
	if !ok {
		return ""
	}
	first, _, _ := strings.Cut(pkgs, ", ")
	first, _, _ = strings.Cut(first, ":") // an architecture qualifier: libc6:amd64
	return first
}

func dpkgVersion(pkg string) string {
	out, err := proc.Output(context.Background(), proc.Spec{Name: "dpkg-query", Path: "dpkg-query", Args: []string{"-W", "-f", "${Version}", pkg}, Timeout: 10 * time.Second})
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}
