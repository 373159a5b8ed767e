package target

import (
	"path/filepath"
	"strings"
)

// RebaseSpec returns a target spec with every relative path in it taken
// relative to dir instead of the working directory: a bin: directory, a
// proxy: definition's file, a src: tree and its patches, every ext=
// tree and its patches, and a pgbouncer:'s src= tree and its patches. It is how a suite file's targets mean the same
// wherever the command runs. A spec holding a {{template}} (filled in
// later from --param), an inline proxy definition, or any other kind is
// returned as it is; so is a spec that does not split into NAME=KIND:.
func RebaseSpec(spec, dir string) string {
	if dir == "" || strings.Contains(spec, "{{") {
		return spec
	}
	name, rest, ok := strings.Cut(spec, "=")
	if !ok {
		return spec
	}
	return name + "=" + rebaseUnnamed(rest, dir)
}

// rebaseUnnamed is RebaseSpec of a target without a name: KIND:ARG.
func rebaseUnnamed(spec, dir string) string {
	if dir == "" || strings.Contains(spec, "{{") {
		return spec
	}
	kind, arg, ok := strings.Cut(spec, ":")
	if !ok {
		return spec
	}
	items, err := splitItems(arg)
	if err != nil {
		return spec
	}
	pathDone := false // the kind's own path: bin:'s DIR, proxy:'s FILE, src:'s tree
	for i, it := range items {
		k, v, isKV := strings.Cut(it, "=")
		k = strings.TrimSpace(k)
		switch {
		case isKV && (k == "ext" && (Kind(kind) == Src || Kind(kind) == Settings) || k == "src" && Kind(kind) == Pooled):
			items[i] = k + "=" + rebaseItem(v, func(s string) string { return rebaseSource(s, dir) })
		case pathDone || isKV && !(Kind(kind) == Src && !isSrcOption(it)):
		case Kind(kind) == Bin, Kind(kind) == ProxyKind && !strings.HasPrefix(it, "{"):
			items[i], pathDone = rebaseItem(it, func(p string) string { return rebasePath(p, dir) }), true
		case Kind(kind) == Src:
			items[i], pathDone = rebaseItem(it, func(s string) string { return rebaseSource(s, dir) }), true
		}
	}
	return kind + ":" + strings.Join(items, ",")
}

// rebaseItem applies f to an item's value, keeping single quotes around
// it (and adding them where the new value holds a comma).
func rebaseItem(item string, f func(string) string) string {
	v := strings.TrimSpace(item)
	quoted := len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\''
	v = f(unquote(v))
	if quoted || strings.Contains(v, ",") {
		return "'" + v + "'"
	}
	return v
}

// rebasePath is p relative to dir when it is relative (~/ is the home
// directory, as everywhere).
func rebasePath(p, dir string) string {
	if p == "" || filepath.IsAbs(p) || strings.HasPrefix(p, "~/") {
		return p
	}
	return filepath.Join(dir, p)
}

// rebaseSource rebases PATH[@REV][+PATCH...]: the tree (with its @REV,
// which a join keeps) and each patch.
func rebaseSource(s, dir string) string {
	parts := strings.Split(s, "+")
	parts[0] = rebasePath(parts[0], dir)
	for i := 1; i < len(parts); i++ {
		parts[i] = rebasePath(parts[i], dir)
	}
	return strings.Join(parts, "+")
}
