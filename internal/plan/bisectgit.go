package plan

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/pgscale/pgscale/internal/proc"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/syncio"
	"github.com/pgscale/pgscale/internal/usage"
)

// git runs git on the repository holding dir and returns its standard
// output, trimmed; a failure says git's first line of error. The
// environment's repository overrides are left out, and the repository is
// trusted whoever owns it, as internal/build trusts it.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	var stderr syncio.Buffer
	env := []string{}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_CEILING_DIRECTORIES":
			continue
		}
		env = append(env, kv)
	}
	out, err := proc.Output(ctx, proc.Spec{Name: "git " + args[0], Path: "git",
		Args: append([]string{"-c", "safe.directory=*", "-C", dir}, args...), Env: env, Stderr: &stderr})
	if err != nil {
		if msg, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n"); msg != "" {
			return "", fmt.Errorf("git %s: %s", args[0], msg)
		}
		return "", fmt.Errorf("git %s: %w", args[0], err)
	}
	return strings.TrimSpace(out), nil
}

// bisectCommits resolves good and bad in the repository holding dir and
// returns good, then every commit after it up to bad along bad's
// first-parent line, with their subjects. Revisions that do not resolve,
// a good end that is not an ancestor of the bad one, and ends one commit
// apart are usage errors.
func bisectCommits(ctx context.Context, dir, good, bad string) ([]result.BisectCommit, error) {
	resolve := func(flag, rev string) (string, error) {
		h, err := git(ctx, dir, "rev-parse", "--verify", "--end-of-options", rev+"^{commit}")
		if err != nil {
			return "", usage.Errorf("%s %s: no such commit in %s (%v)", flag, rev, dir, err)
		}
		return h, nil
	}
	g, err := resolve("--good", good)
	if err != nil {
		return nil, err
	}
	b, err := resolve("--bad", bad)
	if err != nil {
		return nil, err
	}
	if g == b {
		return nil, usage.Errorf("--good %s and --bad %s are the same commit %s: nothing to bisect", good, bad, g[:7])
	}
	if _, err := git(ctx, dir, "merge-base", "--is-ancestor", g, b); err != nil {
		return nil, usage.Errorf("--good %s (%s) is not an ancestor of --bad %s (%s): bisect walks the commits from good to bad", good, g[:7], bad, b[:7])
	}
	out, err := git(ctx, dir, "log", "--first-parent", "--reverse", "--format=%H%x00%s", g+".."+b)
	if err != nil {
		return nil, err
	}
	subject, err := git(ctx, dir, "log", "-1", "--format=%s", g)
	if err != nil {
		return nil, err
	}
	commits := []result.BisectCommit{{Hash: g, Subject: subject}}
	for _, line := range strings.Split(out, "\n") {
		h, s, ok := strings.Cut(line, "\x00")
		if ok {
			commits = append(commits, result.BisectCommit{Hash: h, Subject: s})
		}
	}
	if commits[len(commits)-1].Hash != b {
		return nil, usage.Errorf("--good %s is not on the first-parent line of --bad %s: bisect walks that line (git log --first-parent)", good, bad)
	}
	if len(commits) < 3 {
		return nil, usage.Errorf("--bad %s is the commit right after --good %s: it is the one (nothing between them to bisect)", bad, good)
	}
	return commits, nil
}

// diffStat is git diff --stat of commit against parent, within dir (the
// source's directory, when it is inside a larger repository).
func diffStat(ctx context.Context, dir, parent, commit string) string {
	out, err := git(ctx, dir, "diff", "--stat", parent, commit, "--", ".")
	if err != nil {
		return err.Error()
	}
	return out
}

// BisectCommits resolves a bisect's ends in the repository holding dir
// and returns the commits bisect walks from good to bad, or the usage
// error it would refuse them with: pgscale history bisect checks the
// commits a store recorded before it starts anything.
func BisectCommits(ctx context.Context, dir, good, bad string) ([]result.BisectCommit, error) {
	return bisectCommits(ctx, dir, good, bad)
}
