package build

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// HasFile reports whether src's tree holds a file at rel, a path relative
// to the tree with forward slashes (not inside a submodule), before its
// patches: at its revision for a commit, its files on disk otherwise. It
// builds nothing; a recipe reads it to choose its commands (a release
// tarball's configure, or a git checkout's autogen.sh).
func HasFile(ctx context.Context, src Source, rel string) (bool, error) {
	r, err := resolveSource(ctx, src)
	if err != nil {
		return false, err
	}
	return r.has(ctx, rel), nil
}

// submodule is a git submodule of a commit's tree: its path in the tree
// and the commit the tree records for it.
type submodule struct{ path, commit string }

// submodules lists the commit's submodules (gitlinks), each checked to be
// exportable: checked out in the repository with the commit the tree
// records, since git archive leaves a submodule's directory empty (an
// upstream pgbouncer's lib, libusual). A commit without .gitmodules has
// none, and costs one git call.
func (r *resolved) submodules(ctx context.Context) ([]submodule, error) {
	if !r.has(ctx, ".gitmodules") {
		return nil, nil
	}
	out, err := gitCmd(ctx, r.repo, "ls-tree", "-r", "-z", r.treeish).Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-tree %s: %w", r.treeish, err)
	}
	prefix := r.treeish[strings.Index(r.treeish, ":")+1:]
	var subs []submodule
	for _, entry := range strings.Split(string(out), "\x00") {
		meta, path, ok := strings.Cut(entry, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 || f[0] != "160000" {
			continue
		}
		s := submodule{path: path, commit: f[2]}
		dir := filepath.Join(r.repo, filepath.FromSlash(prefix+path))
		if gitCmd(ctx, dir, "cat-file", "-e", s.commit+"^{commit}").Run() != nil || !isRepoTop(ctx, dir) {
			return nil, fmt.Errorf("source %s@%s: %s is a git submodule (commit %.10s) that is not checked out there, and git archive leaves it empty: run git -C %s submodule update --init --recursive",
				r.rec.Path, r.rec.Rev, path, s.commit, r.repo)
		}
		subs = append(subs, s)
	}
	return subs, nil
}

// isRepoTop says dir is the top of a git repository of its own (a
// submodule's checkout), not a directory of the repository around it.
func isRepoTop(ctx context.Context, dir string) bool {
	top, err := Git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return false
	}
	a, err1 := filepath.EvalSymlinks(top)
	b, err2 := filepath.EvalSymlinks(dir)
	return err1 == nil && err2 == nil && a == b
}

// exportSubmodules writes each submodule's files at its recorded commit
// into its directory under dst, and theirs in turn.
func (r *resolved) exportSubmodules(ctx context.Context, dst string, subs []submodule) error {
	prefix := r.treeish[strings.Index(r.treeish, ":")+1:]
	for _, s := range subs {
		repo := filepath.Join(r.repo, filepath.FromSlash(prefix+s.path))
		sub := &resolved{rec: SourceRecord{Path: repo, Rev: s.commit, Mode: ModeCommit, Commit: s.commit},
			repo: repo, treeish: s.commit + ":"}
		into := filepath.Join(dst, filepath.FromSlash(s.path))
		if err := os.MkdirAll(into, 0o755); err != nil {
			return err
		}
		if err := archive(ctx, repo, sub.treeish, into); err != nil {
			return fmt.Errorf("submodule %s: %w", s.path, err)
		}
		nested, err := sub.submodules(ctx)
		if err != nil {
			return err
		}
		if err := sub.exportSubmodules(ctx, into, nested); err != nil {
			return err
		}
	}
	return nil
}

// archive writes git archive's tar of treeish in repo into dst.
func archive(ctx context.Context, repo, treeish, dst string) error {
	arch := gitCmd(ctx, repo, "archive", "--format=tar", treeish)
	untar := exec.CommandContext(ctx, "tar", "-x", "-f", "-", "-C", dst)
	pipe, err := arch.StdoutPipe()
	if err != nil {
		return err
	}
	untar.Stdin = pipe
	var aErr, tErr bytes.Buffer
	arch.Stderr, untar.Stderr = &aErr, &tErr
	if err := arch.Start(); err != nil {
		return fmt.Errorf("git archive: %w", err)
	}
	if err := untar.Run(); err != nil {
		arch.Process.Kill()
		arch.Wait()
		return fmt.Errorf("tar -x: %w: %s", err, strings.TrimSpace(tErr.String()))
	}
	if err := arch.Wait(); err != nil {
		return fmt.Errorf("git archive %s: %w: %s", treeish, err, strings.TrimSpace(aErr.String()))
	}
	return nil
}
