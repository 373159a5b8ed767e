package ab

import (
	"context"
	"strings"
	"testing"
	"time"
)

// Rounding until decided: the loop asks after every complete round and
// stops once the decider says so, with its words; without a decision it
// runs its most rounds and says the budget ran out; a deadline stops it
// before a round that would end past it, at the pace of the rounds so
// far.
func TestRoundsUntilDecided(t *testing.T) {
	run := func(spec *Spec, deadline time.Time, pause time.Duration, decide func(done int) (bool, string)) *record {
		rs := &rounds{spec: spec, run: &record{}, deadline: deadline}
		out, err := rs.all(context.Background(), func(context.Context, int) error {
			time.Sleep(pause)
			return nil
		}, func() (bool, string) { return decide(rs.run.RoundsDone) })
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	asked := 0
	spec := &Spec{Rounds: 30, RoundsMax: 30}
	if r := run(spec, time.Time{}, 0, func(done int) (bool, string) {
		asked++
		return done == 7, "decided after 7 rounds"
	}); r.RoundsDone != 7 || asked != 7 || r.Stopped != "decided after 7 rounds" {
		t.Errorf("decided at 7: %d rounds, asked %d times, stopped %q", r.RoundsDone, asked, r.Stopped)
	}
	never := func(int) (bool, string) { return false, "" }
	spec = &Spec{Rounds: 5, RoundsMax: 5}
	if r := run(spec, time.Time{}, 0, never); r.RoundsDone != 5 || r.Stopped != "undecided: the budget of 5 rounds ran out" {
		t.Errorf("never decided: %d rounds, stopped %q", r.RoundsDone, r.Stopped)
	}
	spec = &Spec{Rounds: 100, RoundsMax: 100}
	if r := run(spec, time.Now().Add(250*time.Millisecond), 40*time.Millisecond, never); r.RoundsDone < 3 || r.RoundsDone > 6 || !strings.HasPrefix(r.Stopped, "undecided: the time budget ran out after ") {
		t.Errorf("a 250 ms budget of 40 ms rounds: %d rounds, stopped %q", r.RoundsDone, r.Stopped)
	}
	spec = &Spec{Rounds: 4}
	if r := run(spec, time.Time{}, 0, never); r.RoundsDone != 4 || r.Stopped != "" {
		t.Errorf("a fixed number of rounds: %d rounds, stopped %q", r.RoundsDone, r.Stopped)
	}
}
