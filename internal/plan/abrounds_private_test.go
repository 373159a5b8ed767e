package plan

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/stats"
)

// Rounding until decided: the loop asks after every complete round and
// stops once Decided says so, with its words; without a decision it runs
// its most rounds and says the budget ran out; a deadline stops it before
// a round that would end past it, at the pace of the rounds so far.
func TestRoundsUntilDecided(t *testing.T) {
	run := func(ab *AB, pause time.Duration) *ABRun {
		rs := &rounds{ab: ab, run: &ABRun{}}
		out, err := rs.all(context.Background(), func(context.Context, int) error {
			time.Sleep(pause)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	asked := 0
	ab := &AB{Rounds: 30, Decided: func(r *ABRun) (bool, string) {
		asked++
		return r.RoundsDone == 7, "decided after 7 rounds"
	}}
	if r := run(ab, 0); r.RoundsDone != 7 || asked != 7 || r.Stopped != "decided after 7 rounds" {
		t.Errorf("decided at 7: %d rounds, asked %d times, stopped %q", r.RoundsDone, asked, r.Stopped)
	}
	ab = &AB{Rounds: 5, Decided: func(*ABRun) (bool, string) { return false, "" }}
	if r := run(ab, 0); r.RoundsDone != 5 || r.Stopped != "undecided: the budget of 5 rounds ran out" {
		t.Errorf("never decided: %d rounds, stopped %q", r.RoundsDone, r.Stopped)
	}
	ab = &AB{Rounds: 100, Decided: func(*ABRun) (bool, string) { return false, "" }, Deadline: time.Now().Add(250 * time.Millisecond)}
	if r := run(ab, 40*time.Millisecond); r.RoundsDone < 3 || r.RoundsDone > 6 || !strings.HasPrefix(r.Stopped, "undecided: the time budget ran out after ") {
		t.Errorf("a 250 ms budget of 40 ms rounds: %d rounds, stopped %q", r.RoundsDone, r.Stopped)
	}
	ab = &AB{Rounds: 4}
	if r := run(ab, 0); r.RoundsDone != 4 || r.Stopped != "" {
		t.Errorf("a fixed number of rounds: %d rounds, stopped %q", r.RoundsDone, r.Stopped)
	}
}

// --rounds auto needs bounds to decide, and a duration budget needs -T
// to know how many rounds fit; the most rounds fix the spending.
func TestCheckAuto(t *testing.T) {
	spec := ABSpec{RoundsMax: 30}
	if err := spec.checkAuto(2); err == nil || !strings.Contains(err.Error(), "give --bound") {
		t.Errorf("auto without bounds: %v", err)
	}
	spec = ABSpec{Budget: time.Minute, Bounds: stats.Bounds{{Measure: "tps", Percent: -5}}}
	spec.Load.Clients, spec.Load.Duration, spec.Load.Warmup = []int{1, 2}, 2*time.Second, time.Second
	// Whole-step turns: 2 steps × 2 targets × (2 s + 1 s warm-up) = 12 s a round.
	if err := spec.checkAuto(2); err != nil || spec.RoundsMax != 5 || spec.Rounds != 5 {
		t.Errorf("a minute of 12 s rounds: %v, at most %d rounds", err, spec.RoundsMax)
	}
	spec = ABSpec{Budget: 5 * time.Second, Bounds: stats.Bounds{{Measure: "tps", Percent: -5}}}
	spec.Load.Clients, spec.Load.Duration = []int{1}, 2*time.Second
	if err := spec.checkAuto(2); err == nil || !strings.Contains(err.Error(), "leaves 1 rounds") {
		t.Errorf("a budget of too few rounds: %v", err)
	}
}
