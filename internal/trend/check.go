package trend

import "github.com/pgscale/pgscale/internal/stats"

// Check is what `pgscale history check` found: the change points after
// each series' acknowledged one, each judged against the bounds.
type Check struct {
	// Store is where the series are, passwords redacted.
	Store string
	// Series counts the series searched.
	Series int
	// Changes are the change points found; Assessments judge each
	// (Judge), in the same order.
	Changes     []Change
	Assessments []stats.Assessment
	// Warnings are the detector's caveats.
	Warnings []error
}

// Judge judges each change point against the bounds (stats.JudgeChange),
// in the order given.
func Judge(changes []Change, b stats.Bounds) []stats.Assessment {
	var out []stats.Assessment
	for _, c := range changes {
		out = append(out, stats.JudgeChange(c.Comparison(), b))
	}
	return out
}

// Outside returns the assessments outside their bounds.
func (c *Check) Outside() []stats.Assessment {
	var out []stats.Assessment
	for _, a := range c.Assessments {
		if a.Outcome == stats.Fail {
			out = append(out, a)
		}
	}
	return out
}
