package build

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// Entry is one build in the cache, as List sees it.
type Entry struct {
	Key string
	// Root is the entry's directory.
	Root     string
	Manifest *Manifest
	// Size is the bytes of its files, leaving out those hard-linked to
	// other files (an installed server's, mirrored).
	Size     int64
	Created  time.Time
	LastUsed time.Time
}

// List returns the builds in the cache dir, the most recently used first.
// A missing cache is an empty one.
func List(dir string) ([]Entry, error) {
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("build cache: %w", err)
	}
	var out []Entry
	for _, e := range ents {
		if !e.IsDir() || !isKey(e.Name()) {
			continue
		}
		root := filepath.Join(dir, e.Name())
		m, err := ReadManifest(root)
		if err != nil {
			continue
		}
		en := Entry{Key: e.Name(), Root: root, Manifest: m, Created: m.Created, LastUsed: m.Created}
		if fi, err := os.Stat(filepath.Join(root, usedFile)); err == nil {
			en.LastUsed = fi.ModTime()
		}
		filepath.WalkDir(root, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				// A file hard-linked to another (the installed server's, in
				// its copy) takes no space of the build's own.
				if fi, err := d.Info(); err == nil && !hardLinked(fi) {
					en.Size += fi.Size()
				}
			}
			return nil
		})
		out = append(out, en)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].LastUsed.After(out[j].LastUsed) })
	return out, nil
}

// isKey says whether a name is a cache key: 32 lower-case hex digits.
func isKey(name string) bool {
	if len(name) != 32 {
		return false
	}
	for _, c := range name {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// PruneOptions says which builds Prune removes: every build with All, those
// not used for UnusedFor, and with Unreferenced every build not in Keep.
// A build in Keep is never removed, nor the server build it was made from.
type PruneOptions struct {
	All          bool
	UnusedFor    time.Duration
	Unreferenced bool
	Keep         []string
}

// Prune removes builds from the cache dir and returns them. It also removes
// what interrupted builds left behind, and with All the logs of failed
// builds. A build being made is never touched; a build a running target
// uses can be, so prune between runs.
func Prune(dir string, opt PruneOptions) ([]Entry, error) {
	ents, err := List(dir)
	if err != nil {
		return nil, err
	}
	keep := map[string]bool{}
	for _, k := range opt.Keep {
		keep[k] = true
	}
	for _, e := range ents {
		if keep[e.Key] && e.Manifest.Base != "" {
			keep[e.Manifest.Base] = true
		}
	}
	now := time.Now()
	var removed []Entry
	var errs []string
	for _, e := range ents {
		if keep[e.Key] {
			continue
		}
		if !(opt.All || opt.Unreferenced || opt.UnusedFor > 0 && now.Sub(e.LastUsed) > opt.UnusedFor) {
			continue
		}
		if err := removeEntry(dir, e.Key); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		removed = append(removed, e)
	}
	// Scratch directories whose builder is gone, and with All failed logs.
	scratch, _ := os.ReadDir(filepath.Join(dir, tmpDir))
	for _, d := range scratch {
		key, _, _ := strings.Cut(d.Name(), "-")
		if unlock, ok := tryLock(dir, key); ok {
			os.RemoveAll(filepath.Join(dir, tmpDir, d.Name()))
			unlock()
		}
	}
	if opt.All {
		failed, _ := os.ReadDir(filepath.Join(dir, failedDir))
		for _, f := range failed {
			os.Remove(filepath.Join(dir, failedDir, f.Name()))
		}
	}
	if len(errs) > 0 {
		return removed, fmt.Errorf("prune: %s", strings.Join(errs, "; "))
	}
	return removed, nil
}

// removeEntry takes a build out of the cache at once (a rename), then
// deletes its files; a build whose key is locked is being made and stays.
func removeEntry(dir, key string) error {
	if err := os.MkdirAll(filepath.Join(dir, locksDir), 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, tmpDir), 0o755); err != nil {
		return err
	}
	unlock, ok := tryLock(dir, key)
	if !ok {
		return fmt.Errorf("%s is locked by a build", key)
	}
	defer unlock()
	gone := filepath.Join(dir, tmpDir, key+"-pruned")
	os.RemoveAll(gone)
	if err := os.Rename(filepath.Join(dir, key), gone); err != nil {
		return err
	}
	return os.RemoveAll(gone)
}

// hardLinked says a file has other names too.
func hardLinked(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink > 1
}
