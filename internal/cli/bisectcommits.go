package cli

import (
	"context"
	"strings"

	"github.com/pgscale/pgscale/internal/build"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/usage"
)

// bisectCommits resolves good and bad in the repository holding dir and
// returns good, then every commit after it up to bad along bad's
// first-parent line, with their subjects. Revisions that do not resolve,
// a good end that is not an ancestor of the bad one, and ends one commit
// apart are usage errors.
func bisectCommits(ctx context.Context, dir, good, bad string) ([]result.BisectCommit, error) {
	resolve := func(flag, rev string) (string, error) {
		h, err := build.Git(ctx, dir, "rev-parse", "--verify", "--end-of-options", rev+"^{commit}")
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
	if _, err := build.Git(ctx, dir, "merge-base", "--is-ancestor", g, b); err != nil {
		return nil, usage.Errorf("--good %s (%s) is not an ancestor of --bad %s (%s): bisect walks the commits from good to bad", good, g[:7], bad, b[:7])
	}
	out, err := build.Git(ctx, dir, "log", "--first-parent", "--reverse", "--format=%H%x00%s", g+".."+b)
	if err != nil {
		return nil, err
	}
	subject, err := build.Git(ctx, dir, "log", "-1", "--format=%s", g)
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
