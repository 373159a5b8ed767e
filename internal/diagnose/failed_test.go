package diagnose_test

import (
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/result"
)

// failedStep is a step in which every client stopped on a script's error
// before completing a transaction, on a machine that other processes kept
// busy: the figures a verdict would read say cpu-bound.
func failedStep(clients int) result.Step {
	s := step(clients, 0, 1.0, 0, 0.3, 2, map[string]int64{"Client:ClientRead": 3})
	s.Summary.TPS, s.Summary.Transactions = 0, 0
	s.Complete, s.Reason = false, "the client stopped on an error"
	s.Errors = []result.Error{{Kind: "other", Count: 1,
		Message: `div.sql:3: ERROR: division by zero (SQLSTATE 22012), running "SELECT 1/0"`}}
	return s
}

// A step that completed no transaction gets no bottleneck: its verdict is
// failed, and the detail and the paragraph say what failed.
func TestNothingCompletedIsNoBottleneck(t *testing.T) {
	d := diagnose.Sweep(&result.File{Steps: []result.Step{failedStep(1)}})
	v := d.Steps[0]
	want := `no transaction completed: the client stopped on an error: div.sql:3: ERROR: division by zero (SQLSTATE 22012), running "SELECT 1/0"`
	if v.Verdict != diagnose.Failed || v.Detail != want {
		t.Errorf("verdict %s (%s), want failed (%s)", v.Verdict, v.Detail, want)
	}
	if !strings.HasPrefix(d.Paragraph, "One step, 1 client: "+want+". With nothing measured, no bottleneck is judged") {
		t.Errorf("paragraph %q: want what failed", d.Paragraph)
	}
	for _, not := range []string{"CPU-bound", "saturated", "Caution"} {
		if strings.Contains(d.Paragraph, not) {
			t.Errorf("paragraph %q says %q of a step that did nothing", d.Paragraph, not)
		}
	}
}

// A sweep whose last step failed is diagnosed on the steps that measured,
// and says the failed one apart.
func TestLastStepFailed(t *testing.T) {
	ok := step(2, 30000, 0.95, 14, 5, 0.1, map[string]int64{"CPU": 500, "Client:ClientRead": 500})
	d := diagnose.Sweep(&result.File{Steps: []result.Step{ok, failedStep(4)}})
	if d.Steps[0].Verdict != diagnose.CPUBound || d.Steps[1].Verdict != diagnose.Failed {
		t.Fatalf("verdicts %s, %s: want cpu-bound, failed", d.Steps[0].Verdict, d.Steps[1].Verdict)
	}
	for _, want := range []string{"At 2 clients the machine's CPU is saturated", "At 4 clients no transaction completed: the client stopped on an error: div.sql:3:"} {
		if !strings.Contains(d.Paragraph, want) {
			t.Errorf("paragraph %q\nwant %q", d.Paragraph, want)
		}
	}
	if strings.Contains(d.Paragraph, "cut short") {
		t.Errorf("paragraph %q: the failed step is said once, as failed", d.Paragraph)
	}
}
