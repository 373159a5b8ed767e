package integration_test

import (
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/target"
)

// The help of every command that takes --target names every registered
// kind of target, and run's help the poolers --pooler can start.
func TestHelpNamesEveryTargetKind(t *testing.T) {
	trackTime(t)
	for _, cmd := range []string{"ab", "suite"} {
		code, out, stderr := pgscale(t, cmd, "--help")
		if code != 0 {
			t.Fatalf("%s --help: exit %d: %s", cmd, code, stderr)
		}
		for _, k := range target.Kinds() {
			if !strings.Contains(out, "NAME="+string(k)+":") {
				t.Errorf("%s --help does not name kind %s:\n%s", cmd, k, out)
			}
		}
	}
	code, out, stderr := pgscale(t, "run", "--help")
	if code != 0 || strings.Count(out, target.PoolerForms()) < 2 {
		t.Errorf("run --help (exit %d, %s) does not name %q in its text and --pooler's:\n%s", code, stderr, target.PoolerForms(), out)
	}
}
