package report_test

import (
	"testing"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/compare/comparetest"
	"github.com/pgscale/pgscale/internal/golden"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/stats"
)

// A reshuffled run's comparison says it rests on the layouts; a reshuffled
// calibration shows the spread between layouts and what separate clusters
// need.
func TestGoldenLayouts(t *testing.T) {
	inputs := comparetest.Files(t, comparetest.TwoSides(), []int{1, 2}, 6)
	comparetest.Layouts(inputs, 6, 2, true)
	rep := comparetest.Compare(t, inputs, "tps=-5%")
	golden.Check(t, "layouts.txt", write(t, "text", doc(nil, rep)))
	golden.Check(t, "layouts.verdict.json", write(t, "verdict", doc(nil, rep)))

	inputs = comparetest.Files(t, comparetest.TwoSides(), []int{1}, 6)
	comparetest.Layouts(inputs, 6, 2, true)
	inputs[0].File.AB.Calibration = true
	n, err := compare.NoiseOf(inputs[0], inputs[1], stats.NoiseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "layouts-noise.txt", write(t, "text", &report.Doc{Analysis: &compare.Analysis{Noise: n}}))
}
