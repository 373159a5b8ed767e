package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/schedule/ab"
	"github.com/pgscale/pgscale/internal/stats"
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
