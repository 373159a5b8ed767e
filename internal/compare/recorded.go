package compare

import (
	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/stats"
)

// SameRun reports whether inputs are two or more files of one A/B run.
func SameRun(inputs []Input) bool { return len(inputs) >= 2 && sameRun(inputs) != nil }

// OfRun is what the files of one A/B run record: for a calibration run
// the noise of the baseline against itself, otherwise the comparison of
// every candidate with the run's baseline, judged against the bounds and
// at the confidence the run was given. It is the comparison pgscale ab
// printed, reached again from the files alone. Bounds in the files that
// no longer parse are a *stats.BoundError. say words the remedies it
// names (Options.Say).
func OfRun(inputs []Input, say diagnose.Say) (*Comparison, *Noise, error) {
	run := sameRun(inputs)
	ordered := append([]Input(nil), inputs...)
	for i, in := range ordered {
		if in.File.Target.Name == run.Baseline && i > 0 {
			copy(ordered[1:i+1], ordered[:i])
			ordered[0] = in
			break
		}
	}
	opt := stats.Options{Confidence: run.Confidence}
	if run.Calibration {
		n, err := NoiseOf(ordered[0], ordered[1], stats.NoiseOptions{Options: opt})
		return nil, n, err
	}
	bounds, err := stats.ParseBounds(run.Bounds)
	if err != nil {
		return nil, nil, err
	}
	c, err := Compare(ordered, Options{Bounds: bounds, Stats: opt, Say: say})
	return c, nil, err
}
