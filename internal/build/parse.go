package build

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// ParseSource reads PATH[@REV][+PATCH...], the form a source takes in a
// target spec. A leading "~/" is the home directory. REV starts at the first
// "@" whose left side is an existing directory, so a path may hold "@" and a
// revision may be "HEAD@{1}"; patches follow "+" signs.
func ParseSource(s string) (Source, error) {
	if s == "" {
		return Source{}, errors.New("empty source: want PATH[@REV][+PATCH...]")
	}
	var src Source
	if isDir(expandHome(s)) {
		src.Path = expandHome(s)
		return src, nil
	}
	parts := strings.Split(s, "+")
	head := parts[0]
	for _, p := range parts[1:] {
		if p == "" {
			return Source{}, errors.New("source " + s + ": an empty patch name after +")
		}
		src.Patches = append(src.Patches, expandHome(p))
	}
	// The first @ after an existing directory; else the last @ that does
	// not open a reflog selector such as @{1}.
	at, last := -1, -1
	for i := 0; i < len(head); i++ {
		if head[i] != '@' {
			continue
		}
		if isDir(expandHome(head[:i])) {
			at = i
			break
		}
		if !strings.HasPrefix(head[i:], "@{") {
			last = i
		}
	}
	if at < 0 {
		at = last
	}
	src.Path = expandHome(head)
	if at >= 0 {
		src.Path, src.Rev = expandHome(head[:at]), head[at+1:]
	}
	if src.Path == "" {
		return Source{}, errors.New("source " + s + ": no path before @")
	}
	return src, nil
}

func expandHome(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return p
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
