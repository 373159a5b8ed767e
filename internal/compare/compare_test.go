package compare_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/compare/comparetest"
	"github.com/pgscale/pgscale/internal/stats"
)

// The headline names every failing measure, in the pooler bot's words;
// with 4 rounds a measure far past its bound cannot fail (the
// signed-rank test's interval needs 6), and the headline says what would
// decide it.
func TestHeadline(t *testing.T) {
	rep := comparetest.Compare(t, comparetest.Files(t, comparetest.TwoSides(), []int{1, 2}, 8), "tps=-5%")
	h := rep.Headline()
	if !strings.HasPrefix(h, "Compared patch with master: failed: 1 of 2 bounded measures past its bound: tps@c=1 -") || !strings.HasSuffix(h, ", bound -5%") {
		t.Errorf("headline %q", h)
	}
	rep = comparetest.Compare(t, comparetest.Files(t, comparetest.TwoSides(), []int{1, 2}, 4), "tps=-5%")
	if h := rep.Headline(); !strings.HasPrefix(h, "Compared patch with master: inconclusive: 1 of 2 bounded measures undecided: tps@c=1 -") ||
		!strings.Contains(h, "about 6 rounds would decide it") || rep.Outcome() != stats.Inconclusive {
		t.Errorf("headline %q", h)
	}
	rep = comparetest.Compare(t, comparetest.Files(t, comparetest.TwoSides(), []int{1, 2}, 6), "tps=-15%")
	if h := rep.Headline(); h != "Compared patch with master: passed: all 2 bounded measures within their bounds" || rep.Outcome() != stats.Pass {
		t.Errorf("headline %q", h)
	}
	rep = comparetest.Compare(t, comparetest.Files(t, comparetest.TwoSides(), []int{1, 2}, 6))
	if h := rep.Headline(); !strings.HasPrefix(h, "Compared patch with master: no bounds given: ") || strings.Contains(h, "within") || rep.Outcome() != stats.NoBound {
		t.Errorf("headline %q", h)
	}
}

// The paired change is the geometric mean of the per-round ratios,
// computed here by hand: ratios 0.90, 0.91, 0.89, 0.905, 0.90, 0.91.
func TestPairedChangeIsGeometricMeanOfRatios(t *testing.T) {
	rep := comparetest.Compare(t, comparetest.Files(t, comparetest.TwoSides(), []int{1, 2}, 6))
	a := rep.Rows[0].Cells[0].Assessment
	if a.Measure.Key() != "tps@c=1" {
		t.Fatalf("first row is %s", a.Measure.Key())
	}
	// exp(mean(ln r)) - 1 with r = .90 .91 .89 .905 .90 .91 = -0.097527
	want := -0.097527
	if d := a.Change - want; d > 1e-5 || d < -1e-5 {
		t.Errorf("change %.6f, want %.6f", a.Change, want)
	}
}
func TestBoundErrors(t *testing.T) {
	for _, b := range []string{"tps=+5%", "nosuch=-5%", "tps@c=3=-5%"} {
		bs, err := stats.ParseBounds([]string{b})
		if err != nil {
			t.Fatal(err)
		}
		err = compare.CheckBounds([]int{1, 2}, bs, stats.Options{})
		var be *stats.BoundError
		if !errors.As(err, &be) {
			t.Errorf("CheckBounds(%s) = %v, want a *stats.BoundError", b, err)
		}
	}
	bs, _ := stats.ParseBounds([]string{"tps@c=2=-5%", "client-cpu/txn=+10%"})
	if err := compare.CheckBounds([]int{1, 2}, bs, stats.Options{}); err != nil {
		t.Errorf("good bounds rejected: %v", err)
	}
}
