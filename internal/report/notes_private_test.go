package report

import (
	"errors"
	"slices"
	"testing"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/stats"
)

// With several candidates a note one of them alone has names it (a direct
// target lacks the pooler's measures that p16 has); a note every one has
// is said once, as it is.
func TestNotesNameTheirCandidate(t *testing.T) {
	few := errors.New("tps@c=32: 4 rounds are too few for the distribution-free cross-check")
	left := errors.New("pooler-cpu/txn@c=32: rounds [1 2 3 4] left out: a value is zero, negative or not finite")
	r := &compare.Comparison{Baseline: "p4", Candidates: []string{"direct", "p16"}, Verdicts: []stats.Verdict{
		{Warnings: []error{few, left}}, {Warnings: []error{few}}}}
	got := reportNotes(r)
	want := []string{few.Error(), "direct against p4: " + left.Error()}
	if !slices.Equal(got, want) {
		t.Errorf("notes %q, want %q", got, want)
	}
}
