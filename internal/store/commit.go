package store

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// commitVariables are the CI environment variables that name the commit
// being built, in the order CommitFromEnv tries them.
var commitVariables = []string{
	"GITHUB_SHA",          // GitHub Actions (on pull_request: the merge commit)
	"CI_COMMIT_SHA",       // GitLab CI, Woodpecker
	"BUILDKITE_COMMIT",    // Buildkite
	"CIRCLE_SHA1",         // CircleCI
	"TRAVIS_COMMIT",       // Travis CI
	"BITBUCKET_COMMIT",    // Bitbucket Pipelines
	"DRONE_COMMIT_SHA",    // Drone
	"BUILD_SOURCEVERSION", // Azure Pipelines
	"GIT_COMMIT",          // Jenkins (git plugin)
}

// CommitFromEnv returns the commit a CI job builds, from the first of its
// well-known variables that getenv finds set (GITHUB_SHA, CI_COMMIT_SHA,
// BUILDKITE_COMMIT, CIRCLE_SHA1, TRAVIS_COMMIT, BITBUCKET_COMMIT,
// DRONE_COMMIT_SHA, BUILD_SOURCEVERSION, GIT_COMMIT), and that variable's
// name; "" when none is set. Pass os.Getenv.
func CommitFromEnv(getenv func(string) string) (commit, variable string) {
	for _, v := range commitVariables {
		if c := strings.TrimSpace(getenv(v)); c != "" {
			return c, v
		}
	}
	return "", ""
}

// GitCommit returns the commit checked out in the git work tree holding
// dir (git -C DIR rev-parse HEAD), with "-dirty" appended when tracked
// files differ from it (git -C DIR status --porcelain --untracked-files=no).
// It fails when dir is not in a work tree or git is not installed.
func GitCommit(ctx context.Context, dir string) (string, error) {
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return "", fmt.Errorf("%s: no git commit: %w", dir, gitError(err))
	}
	commit := strings.TrimSpace(string(out))
	status, err := exec.CommandContext(ctx, "git", "-C", dir, "status", "--porcelain", "--untracked-files=no").Output()
	if err != nil {
		return "", fmt.Errorf("%s: git status: %w", dir, gitError(err))
	}
	if len(strings.TrimSpace(string(status))) > 0 {
		commit += "-dirty"
	}
	return commit, nil
}

// gitError puts git's own first line of complaint into err.
func gitError(err error) error {
	if ee, ok := err.(*exec.ExitError); ok {
		if line, _, _ := strings.Cut(strings.TrimSpace(string(ee.Stderr)), "\n"); line != "" {
			return fmt.Errorf("%s", line)
		}
	}
	return err
}
