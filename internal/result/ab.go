package result

import (
	"fmt"

	"github.com/pgscale/pgscale/internal/secret"
)

// AB says which A/B run a result file belongs to. An A/B run writes one
// ordinary result file per target, holding that target's steps of every
// round (Step.Round); the files of one run carry the same AB block, so
// compare can pair their rounds, and each file on its own still reads as a
// plain sweep of one target.
type AB struct {
	// Run identifies the A/B run; the files of one run share it.
	Run string `json:"run"`
	// Targets are all targets of the run, baseline first.
	Targets []ABTarget `json:"targets"`
	// Baseline names the target the others are compared with.
	Baseline string `json:"baseline"`
	// Rounds is the number of rounds planned; RoundsDone counts those in
	// which every target completed every step.
	Rounds     int `json:"rounds"`
	RoundsDone int `json:"rounds_done"`
	// OrderSeed draws each round's target order; Order holds, for every
	// round started, the target names in the order they ran.
	OrderSeed uint64     `json:"order_seed"`
	Order     [][]string `json:"order"`
	// SliceS, when positive, says the targets were interleaved in slices
	// of this many seconds inside every step rather than in whole-step
	// turns; the first SliceSettleS of every slice was not counted. Each
	// step's intervals are then that target's slices.
	SliceS       float64 `json:"slice_s,omitempty"`
	SliceSettleS float64 `json:"slice_settle_s,omitempty"`
	// Reshuffle, when set, says the run re-created its ephemeral clusters
	// (new data directories, shared memory, sockets or ports; the data
	// made again) every Reshuffle rounds, so that the layout of each pair
	// of clusters is drawn anew; rounds are then compared per layout.
	// Layouts holds each layout and the rounds that ran on it: one for
	// every round when the run was not reshuffled (absent in files
	// written before pgscale recorded layouts).
	Reshuffle int      `json:"reshuffle,omitempty"`
	Layouts   []Layout `json:"layouts,omitempty"`
	// Calibration marks an A/A run of the baseline against itself, made to
	// size the noise (pgscale ab --calibrate).
	Calibration bool `json:"calibration,omitempty"`
	// Bounds are the bounds the run judged its measures against, as given
	// to --bound ("tps=-3%"), and Confidence the level of its intervals
	// and tests: with them a report of the files reaches the run's own
	// verdict. Absent in files written before pgscale recorded them.
	Bounds     []string `json:"bounds,omitempty"`
	Confidence float64  `json:"confidence,omitempty"`
	// RoundsMax, for a run that rounded until decided (--rounds
	// auto:MAX), is the most rounds it could take, which fixes how its
	// looks spent alpha (stats.Sequential); Rounds is then the rounds it
	// ran, and Stopped says why it stopped: "decided" or the budget that
	// ran out. 0 for a run of a fixed number of rounds.
	RoundsMax int    `json:"rounds_max,omitempty"`
	Stopped   string `json:"stopped,omitempty"`
}

// ABTarget is one target of an A/B run.
type ABTarget struct {
	// Name is the target's name, as in Target.Name of its file.
	Name string `json:"name"`
	// Spec is the target as given to --target, passwords redacted.
	Spec string `json:"spec"`
	// File is the base name of the target's result file.
	File string `json:"file"`
}

// Layout is one set of clusters of a reshuffled A/B run.
type Layout struct {
	// Layout numbers it from 1, in the order run.
	Layout int `json:"layout"`
	// Rounds are the rounds that ran on it.
	Rounds []int `json:"rounds"`
	// SetupS is how long making it took: stopping the previous clusters,
	// starting these and giving them the data (0 for the first layout,
	// made before the run began).
	SetupS float64 `json:"setup_s,omitempty"`
	// Servers describe where each target's clients connected in this
	// layout (host, port, user, database).
	Servers map[string]string `json:"servers"`
	// Data says where each target's data came from in this layout, when
	// it was made once and copied (a counted run); absent when every
	// target made its own.
	Data *LayoutData `json:"data,omitempty"`
	// Times are how long each part of the layout took; absent in files
	// written before pgscale recorded them.
	Times *LayoutTimes `json:"times,omitempty"`
}

// LayoutData is where the targets of one layout got their data: made
// once, by From (the baseline), and copied byte for byte to the Copies
// (its data directory, copied while its server was stopped), so that a
// difference between them is their code's alone; Own made data of their
// own, each with why its storage could not run a copy.
type LayoutData struct {
	From   string            `json:"from"`
	Copies []string          `json:"copies,omitempty"`
	Own    map[string]string `json:"own,omitempty"`
}

// LayoutTimes are how long each part of a layout took, in seconds, its
// targets' parts made side by side counted once: ClustersS stopping the
// previous layout's clusters and starting these (0 for the first,
// started before the run), DataS making the data natively (init and
// set-up), CopyS copying it to the other targets, ValgrindS starting the
// counted servers under Valgrind, ProbesS connecting the probes that
// watch the steps, WarmupS the warm-up round, and RoundsS the rounds
// that ran on it (their steps, counted or not).
type LayoutTimes struct {
	ClustersS float64 `json:"clusters_s,omitempty"`
	DataS     float64 `json:"data_s,omitempty"`
	CopyS     float64 `json:"copy_s,omitempty"`
	ValgrindS float64 `json:"valgrind_s,omitempty"`
	ProbesS   float64 `json:"probes_s,omitempty"`
	WarmupS   float64 `json:"warmup_s,omitempty"`
	RoundsS   float64 `json:"rounds_s,omitempty"`
}

// Copied reports whether target name ran on a copy of another target's
// data in this layout.
func (l Layout) Copied(name string) bool {
	if l.Data == nil {
		return false
	}
	for _, c := range l.Data.Copies {
		if c == name {
			return true
		}
	}
	return false
}

// LayoutOf returns the layout round ran on, or 0 when the run was not
// reshuffled or the round is in no layout.
func (a *AB) LayoutOf(round int) int {
	for _, l := range a.Layouts {
		for _, r := range l.Rounds {
			if r == round {
				return l.Layout
			}
		}
	}
	return 0
}

// validate checks an A/B block against the file holding it.
func (a *AB) validate(f *File) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("ab: "+format, args...)) }
	if a.Run == "" {
		bad("no run id")
	}
	names := map[string]bool{}
	for _, t := range a.Targets {
		names[t.Name] = true
	}
	for _, t := range a.Targets {
		if secret.Leaks(t.Spec) {
			bad("target %s: spec holds an unredacted password", t.Name)
		}
	}
	if len(a.Targets) < 2 {
		bad("%d targets, want at least 2", len(a.Targets))
	}
	if !names[a.Baseline] {
		bad("baseline %q is not among the targets", a.Baseline)
	}
	if !names[f.Target.Name] {
		bad("the file's target %q is not among the run's targets", f.Target.Name)
	}
	if a.RoundsDone < 0 || a.RoundsDone > a.Rounds || a.RoundsDone > len(a.Order) {
		bad("rounds_done %d with %d rounds planned and %d started", a.RoundsDone, a.Rounds, len(a.Order))
	}
	for i, s := range f.Steps {
		if s.Round < 1 || s.Round > len(a.Order) {
			bad("step %d: round %d, but %d rounds were started", i, s.Round, len(a.Order))
		}
	}
	// A run that started no round (it failed in its warm-up) ran on no
	// layout: it is still written, as every run that measured little.
	if a.Reshuffle > 0 && len(a.Layouts) == 0 && len(a.Order) > 0 {
		bad("reshuffle %d without layouts", a.Reshuffle)
	}
	if len(a.Layouts) > 0 {
		seen := map[int]int{}
		for _, l := range a.Layouts {
			for _, r := range l.Rounds {
				if r < 1 || r > len(a.Order) || seen[r] > 0 {
					bad("layout %d: round %d is not a round started, or in two layouts", l.Layout, r)
				}
				seen[r] = l.Layout
			}
		}
		for r := 1; r <= len(a.Order); r++ {
			if seen[r] == 0 {
				bad("round %d is in no layout", r)
			}
		}
	}
	return errs
}
