package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/schedule/ab"
	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/target"
)

// --rounds auto needs bounds to decide, and a duration budget needs -T
// to know how many rounds fit; the most rounds fix the spending.
func TestCheckAuto(t *testing.T) {
	spec := ab.Spec{RoundsMax: 30}
	if err := checkAuto(&spec, 2, false); err == nil || !strings.Contains(err.Error(), "give --bound") {
		t.Errorf("auto without bounds: %v", err)
	}
	if err := checkAuto(&spec, 2, true); err != nil || spec.Rounds != 30 {
		t.Errorf("auto decided by a decider (a bisect's step): %v, %d rounds", err, spec.Rounds)
	}
	spec = ab.Spec{Budget: time.Minute, Bounds: stats.Bounds{{Measure: "tps", Percent: -5}}}
	spec.Load.Clients, spec.Load.Duration, spec.Load.Warmup = []int{1, 2}, 2*time.Second, time.Second
	// Whole-step turns: 2 steps × 2 targets × (2 s + 1 s warm-up) = 12 s a round.
	if err := checkAuto(&spec, 2, false); err != nil || spec.RoundsMax != 5 || spec.Rounds != 5 {
		t.Errorf("a minute of 12 s rounds: %v, at most %d rounds", err, spec.RoundsMax)
	}
	spec = ab.Spec{Budget: 5 * time.Second, Bounds: stats.Bounds{{Measure: "tps", Percent: -5}}}
	spec.Load.Clients, spec.Load.Duration = []int{1}, 2*time.Second
	if err := checkAuto(&spec, 2, false); err == nil || !strings.Contains(err.Error(), "leaves 1 rounds") {
		t.Errorf("a budget of too few rounds: %v", err)
	}
}

// A reshuffle that the rounds leave at one layout is said in the flags'
// words, by the run when its clusters could be re-created; enough rounds
// for two layouts say nothing.
func TestSettleABOneLayout(t *testing.T) {
	for _, tc := range []struct {
		rounds, reshuffle int
		want              string
	}{
		{3, 2, "--reshuffle 2 with 3 rounds makes one cluster layout: the clusters are not re-created, and the interval does not cover the fixed difference between them (give --rounds 4 or more)"},
		{4, 2, ""},
		{3, 0, ""},
	} {
		spec := ab.Spec{Rounds: tc.rounds, Reshuffle: tc.reshuffle}
		spec.Targets = []target.Spec{{Name: "a", Kind: target.Settings}, {Name: "b", Kind: target.Settings}}
		spec.Load.Clients, spec.Load.Duration = []int{1}, time.Second
		if err := settleAB(&spec, abGiven{OrderSeed: "1", ReshuffleGiven: true}); err != nil {
			t.Fatalf("%d rounds, --reshuffle %d: %v", tc.rounds, tc.reshuffle, err)
		}
		if spec.OneLayout != tc.want {
			t.Errorf("%d rounds, --reshuffle %d: %q, want %q", tc.rounds, tc.reshuffle, spec.OneLayout, tc.want)
		}
	}
}
