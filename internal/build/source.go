package build

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Source is a source tree at a revision, with patches applied in order.
type Source struct {
	// Path is a git repository (or a directory inside one) or a plain
	// directory such as an unpacked release tarball.
	Path string
	// Rev is any revision git understands. Empty means the tree as it is
	// on disk: for a git repository its tracked files and its untracked
	// files that are not ignored, uncommitted changes included.
	Rev string
	// Patches are patch files applied in order, each with git apply or,
	// when that fails, patch -p1.
	Patches []string
}

// String returns the source as PATH[@REV][+PATCH...].
func (s Source) String() string {
	var b strings.Builder
	b.WriteString(s.Path)
	if s.Rev != "" {
		b.WriteString("@" + s.Rev)
	}
	for _, p := range s.Patches {
		b.WriteString("+" + p)
	}
	return b.String()
}

// Source modes, as recorded in a manifest.
const (
	// ModeCommit is a git revision, exported with git archive.
	ModeCommit = "commit"
	// ModeWorktree is a git working tree as it is on disk.
	ModeWorktree = "worktree"
	// ModeDir is a plain directory, not in a git repository.
	ModeDir = "dir"
)

// SourceRecord says which source a build was made from.
type SourceRecord struct {
	Path string `json:"path"`
	Rev  string `json:"rev,omitempty"`
	// Mode is ModeCommit, ModeWorktree or ModeDir.
	Mode string `json:"mode"`
	// Commit is the commit Rev resolved to, or for a working tree the
	// commit it was checked out at; empty for a plain directory.
	Commit string `json:"commit,omitempty"`
	// Tree is git's hash of the tree (for a working tree or a plain
	// directory computed the same way over its files).
	Tree    string        `json:"tree"`
	Patches []PatchRecord `json:"patches,omitempty"`
}

// PatchRecord is one patch of a build: its path and the SHA-256 of its bytes.
type PatchRecord struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// resolved is a source whose content has been identified: what the key and
// the manifest need, and how to export it.
type resolved struct {
	rec     SourceRecord
	repo    string // top of the git repository (commit, worktree)
	treeish string // what git archive exports (commit)
	files   []string
	patches [][]byte
	// subs are a commit's submodules, each checked out in the repository
	// (git archive leaves them empty: export adds their files).
	subs []submodule
}

// ResolveSource identifies src's content as a build of it would, without
// building or copying anything: its mode, the commit REV resolves to (for a
// working tree the commit checked out), its tree hash and its patches'.
func ResolveSource(ctx context.Context, src Source) (SourceRecord, error) {
	r, err := resolveSource(ctx, src)
	if err != nil {
		return SourceRecord{}, err
	}
	return r.rec, nil
}

// resolveSource identifies src's content without copying it.
func resolveSource(ctx context.Context, src Source) (*resolved, error) {
	if src.Path == "" {
		return nil, errors.New("no source path")
	}
	path, err := filepath.Abs(src.Path)
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", src.Path, err)
	}
	if fi, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("source: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("source %s: not a directory", path)
	}
	r := &resolved{rec: SourceRecord{Path: path, Rev: src.Rev}}
	for _, p := range src.Patches {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("patch: %w", err)
		}
		abs, _ := filepath.Abs(p)
		sum := sha256.Sum256(b)
		r.rec.Patches = append(r.rec.Patches, PatchRecord{Path: abs, SHA256: hex.EncodeToString(sum[:])})
		r.patches = append(r.patches, b)
	}

	top, gitErr := Git(ctx, path, "rev-parse", "--show-toplevel")
	if gitErr != nil {
		if src.Rev != "" {
			return nil, fmt.Errorf("source %s@%s: not a git repository: %w", path, src.Rev, gitErr)
		}
		r.rec.Mode = ModeDir
		if r.files, err = walkFiles(path); err != nil {
			return nil, fmt.Errorf("source %s: %w", path, err)
		}
		if r.rec.Tree, err = hashTree(path, r.files, nil); err != nil {
			return nil, fmt.Errorf("source %s: %w", path, err)
		}
		return r, nil
	}
	r.repo = top
	prefix, err := Git(ctx, path, "rev-parse", "--show-prefix")
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", path, err)
	}
	if src.Rev != "" {
		r.rec.Mode = ModeCommit
		commit, err := Git(ctx, path, "rev-parse", "--verify", "--end-of-options", src.Rev+"^{commit}")
		if err != nil {
			return nil, fmt.Errorf("source %s: no revision %q: %w", path, src.Rev, err)
		}
		r.rec.Commit = commit
		r.treeish = commit + ":" + prefix
		if r.rec.Tree, err = Git(ctx, path, "rev-parse", "--verify", r.treeish); err != nil {
			return nil, fmt.Errorf("source %s@%s: %w", path, src.Rev, err)
		}
		if r.subs, err = r.submodules(ctx); err != nil {
			return nil, err
		}
		return r, nil
	}
	r.rec.Mode = ModeWorktree
	r.rec.Commit, _ = Git(ctx, path, "rev-parse", "--verify", "-q", "HEAD")
	if r.files, err = worktreeFiles(ctx, path); err != nil {
		return nil, fmt.Errorf("source %s: %w", path, err)
	}
	if r.rec.Tree, err = hashTree(path, r.files, nil); err != nil {
		return nil, fmt.Errorf("source %s: %w", path, err)
	}
	return r, nil
}

// export writes the source's files into dst (which exists and is empty).
// For a working tree or a plain directory it hashes what it copies and
// fails if that is no longer the content the key was made from.
func (r *resolved) export(ctx context.Context, dst string) error {
	if r.rec.Mode == ModeCommit {
		if err := archive(ctx, r.repo, r.treeish, dst); err != nil {
			return err
		}
		return r.exportSubmodules(ctx, dst, r.subs)
	}
	tree, err := hashTree(r.rec.Path, r.files, func(rel string, mode fs.FileMode, data []byte, link string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		p := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if mode&fs.ModeSymlink != 0 {
			return os.Symlink(link, p)
		}
		return os.WriteFile(p, data, mode.Perm())
	})
	if err != nil {
		return fmt.Errorf("copy %s: %w", r.rec.Path, err)
	}
	if tree != r.rec.Tree {
		return fmt.Errorf("%s changed while it was being built; build again", r.rec.Path)
	}
	return nil
}

// worktreeFiles lists a working tree's tracked files and its untracked files
// that are not ignored, relative to dir, sorted. Tracked files deleted on
// disk are left out by hashTree.
func worktreeFiles(ctx context.Context, dir string) ([]string, error) {
	out, err := gitCmd(ctx, dir, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %w", err)
	}
	seen := map[string]bool{}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" && !seen[f] {
			seen[f] = true
			files = append(files, f)
		}
	}
	// A submodule is listed as its directory: take its files.
	var all []string
	for _, f := range files {
		fi, err := os.Lstat(filepath.Join(dir, f))
		if err == nil && fi.IsDir() {
			sub, err := walkFiles(filepath.Join(dir, f))
			if err != nil {
				return nil, err
			}
			for _, s := range sub {
				all = append(all, filepath.ToSlash(filepath.Join(f, s)))
			}
			continue
		}
		all = append(all, f)
	}
	sort.Strings(all)
	return all, nil
}

// walkFiles lists the files and symbolic links under dir, relative to it
// with forward slashes, sorted, leaving out .git directories.
func walkFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" && p != dir {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() || d.Type()&fs.ModeSymlink != 0 {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

// gitCmd is git run on the repository at dir, with the environment's
// repository overrides removed. It trusts the repository whoever owns it:
// the user named it to be built, which runs its code anyway.
func gitCmd(ctx context.Context, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "safe.directory=*", "-C", dir}, args...)...)
	cmd.Env = cleanEnv(os.Environ(), "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_CEILING_DIRECTORIES")
	return cmd
}

// git runs a git command at dir and returns its trimmed output.
func Git(ctx context.Context, dir string, args ...string) (string, error) {
	var stderr bytes.Buffer
	cmd := gitCmd(ctx, dir, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return "", fmt.Errorf("git %s: %s", args[0], firstLine(msg))
		}
		return "", fmt.Errorf("git %s: %w", args[0], err)
	}
	return strings.TrimSpace(string(out)), nil
}

// cleanEnv returns env without the named variables.
func cleanEnv(env []string, names ...string) []string {
	out := env[:0:0]
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, n := range names {
			if name == n {
				drop = true
				break
			}
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// Export writes src's files into dst, an empty directory, as a build of it
// would copy them (git archive of a revision; a working tree's tracked and
// untracked files that are not ignored), with its patches applied (their
// output appended to log, which may be nil), and returns what it exported.
// It is for commands that run in a tree at a revision rather than build it
// (micro-benchmarks).
func Export(ctx context.Context, src Source, dst string, log *os.File) (SourceRecord, error) {
	r, err := resolveSource(ctx, src)
	if err != nil {
		return SourceRecord{}, err
	}
	if err := r.export(ctx, dst); err != nil {
		return SourceRecord{}, err
	}
	if len(r.patches) > 0 {
		if log == nil {
			if log, err = os.OpenFile(os.DevNull, os.O_WRONLY, 0); err != nil {
				return SourceRecord{}, err
			}
			defer log.Close()
		}
		if err := applyPatches(ctx, &session{name: src.String(), log: log, env: os.Environ()}, dst, r); err != nil {
			return SourceRecord{}, err
		}
	}
	return r.rec, nil
}
