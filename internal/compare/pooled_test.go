package compare_test

import (
	"testing"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/compare/comparetest"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
)

// Pooling three stored runs makes one unpaired side of all their complete
// steps: the same comparison as one file holding those steps.
func TestPool(t *testing.T) {
	base := comparetest.Files(t, comparetest.TwoSides(), []int{1, 2}, 6)[0].File
	var runs []*result.File
	for i := range 3 {
		f := *base
		f.Steps = append([]result.Step(nil), base.Steps[4*i:4*i+4]...) // rounds 2i+1, 2i+2 at c=1, 2
		runs = append(runs, &f)
	}
	runs[1].Steps[0].Complete, runs[1].Steps[0].Reason = false, "cut short"
	runs[2].Complete, runs[2].Reason = false, "interrupted"
	p := compare.Pool("main@c1", runs)
	if p.Name != "main@c1" || p.File.AB != nil || len(p.File.Steps) != 11 || p.File.Complete || p.File.Reason != "interrupted" {
		t.Fatalf("pooled: name %s, ab %v, %d steps, complete %v (%s); want 11 steps, no A/B block, incomplete", p.Name, p.File.AB, len(p.File.Steps), p.File.Complete, p.File.Reason)
	}
	for _, s := range p.File.Steps {
		if s.Round != 0 || !s.Complete {
			t.Errorf("pooled step round %d complete %v", s.Round, s.Complete)
		}
	}
	if base.Steps[0].Round != 1 {
		t.Error("pooling changed the runs' own steps")
	}
	cand := comparetest.Files(t, comparetest.TwoSides(), []int{1, 2}, 6)[1]
	c, err := compare.Compare([]compare.Input{p, cand}, compare.Options{Unpaired: true})
	if err != nil {
		t.Fatal(err)
	}
	if c.Method != stats.Independent || c.Rows[0].Base.N != 5 || c.Rows[4].Base.N != 6 {
		t.Errorf("method %v, %d and %d baseline values at c=1 and c=2; want unpaired, 5 and 6", c.Method, c.Rows[0].Base.N, c.Rows[4].Base.N)
	}
}
