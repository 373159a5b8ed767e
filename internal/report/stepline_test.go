package report_test

import (
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/result"
)

// A step whose clients all stopped on an error completed nothing and
// failed nothing as pgbench counts failures (those a retry could save):
// its line says the aborted ones, so that "0 failed" does not read as
// nothing wrong.
func TestStepLineSaysAborted(t *testing.T) {
	s := result.Step{Clients: 2, ElapsedS: 0.1, Summary: result.Summary{Aborted: 2}}
	if line := report.StepLine(s); !strings.Contains(line, "0 failed, 2 aborted (2 of 2 stopped on an error)") {
		t.Errorf("%s", line)
	}
	s.Summary = result.Summary{Transactions: 100, TPS: 1000}
	if line := report.StepLine(s); strings.Contains(line, "aborted") {
		t.Errorf("nothing aborted: %s", line)
	}
}
