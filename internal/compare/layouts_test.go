package compare_test

import (
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/compare/comparetest"
	"github.com/pgscale/pgscale/internal/stats"
)

// The files of a reshuffled run are compared over their layouts: the
// layout test, one value per layout, and the same change as the
// geometric mean of the per-round ratios (layouts of equal size).
func TestCompareOverLayouts(t *testing.T) {
	inputs := comparetest.Files(t, comparetest.TwoSides(), []int{1, 2}, 6)
	comparetest.Layouts(inputs, 6, 2, true)
	rep := comparetest.Compare(t, inputs)
	if rep.Layouts != 3 || rep.Reshuffle != 2 || rep.Rounds != 6 {
		t.Fatalf("%d layouts, reshuffle %d, %d rounds; want 3, 2, 6", rep.Layouts, rep.Reshuffle, rep.Rounds)
	}
	a := rep.Rows[0].Cells[0].Assessment
	if a.Test != stats.LayoutTest || a.N1 != 3 || a.LayoutDetail == nil || a.LayoutDetail.Rounds != 6 {
		t.Errorf("tps@c=1: test %q over %d values (detail %+v); want the layout test over 3 layouts", a.Test, a.N1, a.LayoutDetail)
	}
	if d := a.Change - -0.097527; d > 1e-5 || d < -1e-5 {
		t.Errorf("change %.6f, want the geometric mean of the ratios, -0.097527", a.Change)
	}
	for _, n := range rep.Notes {
		if strings.Contains(n, "kept for the whole run") {
			t.Errorf("a reshuffled run is said to have kept its clusters: %s", n)
		}
	}

	// One layout recorded for two ephemeral targets: paired by round, and
	// a note that the interval does not cover their clusters' difference.
	inputs = comparetest.Files(t, comparetest.TwoSides(), []int{1, 2}, 6)
	comparetest.Layouts(inputs, 6, 6, false)
	rep = comparetest.Compare(t, inputs)
	if rep.Layouts != 0 || rep.Rows[0].Cells[0].Assessment.Test != stats.PairedTest ||
		!strings.Contains(strings.Join(rep.Notes, "\n"), "clusters of their own, kept for the whole run") {
		t.Errorf("one layout: %d layouts, test %q, notes %q", rep.Layouts, rep.Rows[0].Cells[0].Assessment.Test, rep.Notes)
	}
	// A candidate on the baseline's cluster: said so, and no such note.
	inputs[1].File.Target.SameServerAs = "master"
	inputs[1].File.Target.SessionSettings = map[string]string{"work_mem": "8MB"}
	rep = comparetest.Compare(t, inputs)
	notes := strings.Join(rep.Notes, "\n")
	if !strings.Contains(notes, "patch ran on master's cluster (work_mem=8MB set per session)") || strings.Contains(notes, "kept for the whole run") {
		t.Errorf("same cluster: notes %q", rep.Notes)
	}

	// A reshuffled calibration's noise has the spread between layouts.
	inputs = comparetest.Files(t, comparetest.TwoSides(), []int{1, 2}, 6)
	comparetest.Layouts(inputs, 6, 2, true)
	n, err := compare.NoiseOf(inputs[0], inputs[1], stats.NoiseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Layouts != 3 || n.Reshuffle != 2 || n.Rows[0].Layouts != 3 || n.Rows[0].PerLayout != 2 || n.Rows[0].Layouts2 == 0 {
		t.Errorf("noise: %d layouts, reshuffle %d; row %+v", n.Layouts, n.Reshuffle, n.Rows[0])
	}
}
