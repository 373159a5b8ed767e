package ab

import (
	"fmt"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/stats"
)

// decided says, after a complete round of a run that rounds until
// decided, whether it is: the spec's Decider's say, else whether every
// bounded measure of every candidate is decided, or one failed, which
// decides the verdict. It compares the files the rounds so far make, at
// the look of that round (an interim comparison: outcomes only), and says
// how far the decision has come.
func (rs *rounds) decided() (bool, string) {
	spec, run := rs.spec, rs.run
	fs := rs.files(rs.withRoundTimes(), nil, false)
	if spec.Decider != nil {
		return spec.Decider.Decided(fs)
	}
	inputs := make([]compare.Input, len(fs))
	for i, f := range fs {
		inputs[i] = compare.Input{Name: f.Target.Name, File: f}
	}
	c, err := compare.Compare(inputs, compare.Options{Bounds: spec.Bounds, Stats: stats.Options{Confidence: spec.Confidence, Share: spec.Share}, Interim: true})
	if err != nil {
		return false, ""
	}
	decided, bounded, beyond := 0, 0, 0
	for _, v := range c.Verdicts {
		decided, bounded, beyond = decided+v.Passed+v.Failed, bounded+v.Bounded, beyond+v.Undecidable
	}
	also := ""
	if beyond > 0 {
		also = fmt.Sprintf("; %d beyond this runner's spread", beyond)
	}
	spec.Notice(fmt.Sprintf("after round %d: %d of %d bounded measures decided (%s)%s", run.RoundsDone, decided, bounded, c.Outcome().Verdict(), also))
	switch {
	case bounded == 0 && beyond > 0:
		// Every bound was left to the spread, which can decide none in
		// the rounds the run may take: more would not either.
		return true, fmt.Sprintf("undecided after %d rounds: every bound is beyond this runner's spread", run.RoundsDone)
	case c.Outcome() == stats.Fail:
		// A failure decides the verdict: nothing after it can make the
		// run pass.
		return true, fmt.Sprintf("decided after %d rounds (failed)", run.RoundsDone)
	case bounded > 0 && decided == bounded:
		return true, fmt.Sprintf("decided after %d rounds", run.RoundsDone)
	}
	return false, ""
}
