package integration_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/cli"
)

func TestReportCommand(t *testing.T) {
	trackTime(t)
	dir := filepath.Join("..", "report", "testdata")
	for _, tc := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"report", filepath.Join(dir, "hot-row.json"), filepath.Join(dir, "version1.json")}, 0, "lock-bound"},
		{[]string{"report", "--format", "markdown", filepath.Join(dir, "partitions.json")}, 0, "fast-path slots exhausted"},
		{[]string{"report", filepath.Join(dir, "no-such-file.json")}, 2, ""},
		{[]string{"report", "--format", "html", filepath.Join(dir, "sleep.json")}, 0, "<!DOCTYPE html>"},
		{[]string{"report", "--format", "pdf", filepath.Join(dir, "sleep.json")}, 2, ""},
		{[]string{"report", "--format", "verdict", filepath.Join(dir, "sleep.json")}, 2, ""},
		{[]string{"report"}, 2, ""},
	} {
		var stdout, stderr bytes.Buffer
		code := cli.Main(tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stdout.String(), tc.out) {
			t.Errorf("pgscale %v: exit %d (want %d), stdout lacks %q?\n%s%s", tc.args, code, tc.code, tc.out, stdout.String(), stderr.String())
		}
	}
}
