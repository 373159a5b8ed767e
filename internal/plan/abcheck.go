package plan

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/disturb"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
	"github.com/pgscale/pgscale/internal/workload"
)

// check finds the mistakes in the spec before anything starts, sets the
// defaults that depend on the rest (slices give way to -t, -C and
// disturbances), and returns the targets (baseline first; with Calibrate
// the baseline twice), the disturbances and the order seed.
func (spec *ABSpec) check() ([]target.Spec, []disturb.Disturbance, uint64, error) {
	ds, err := spec.Common.check()
	if err != nil {
		return nil, nil, 0, err
	}
	l := spec.Load
	if spec.Reshuffle < 0 {
		return nil, nil, 0, usage.Errorf("--reshuffle must be 0 (keep the clusters) or a number of rounds per cluster layout")
	}
	seen := map[int]bool{}
	for _, c := range l.Clients {
		if seen[c] {
			return nil, nil, 0, usage.Errorf("-c lists %d twice: each client count is one step of the comparison", c)
		}
		seen[c] = true
	}
	if spec.Agents != nil && spec.Slice > 0 {
		if spec.SliceGiven {
			return nil, nil, 0, usage.Errorf("--agents runs whole-step turns: in slices every client switches target together every slice, which agents on other machines cannot do in step; drop --slice (a suite file's slice:), or make it 0")
		}
		spec.Slice = 0 // whole-step turns: each target's step goes to the agents in its turn
	}
	if spec.Slice > 0 && !spec.SliceGiven && (l.Duration <= 0 || len(ds) > 0 || l.Connect) {
		spec.Slice = 0 // -t, -C and disturbances need whole-step turns
	}
	if spec.Slice > 0 {
		if spec.Settle == 0 {
			spec.Settle = spec.Slice / 10
		}
		switch {
		case l.Duration <= 0:
			return nil, nil, 0, usage.Errorf("--slice needs -T: each target gets -T of measured time per step, in slices")
		case spec.Settle >= spec.Slice:
			return nil, nil, 0, usage.Errorf("--slice-settle %v must be shorter than --slice %v", spec.Settle, spec.Slice)
		case len(ds) > 0:
			return nil, nil, 0, usage.Errorf("disturbances run with whole-step turns only: drop --slice")
		case l.Connect:
			return nil, nil, 0, usage.Errorf("-C opens a connection per transaction; --slice keeps one per target: use one or the other")
		case spec.Probes.On(probeid.Profile.Name):
			// Probes watch one server for a whole step, which slices share
			// between the targets: --profile would record nothing.
			return nil, nil, 0, usage.Errorf("--profile records each target's steps with whole-step turns only: add --slice 0")
		}
	} else if spec.Settle > 0 {
		return nil, nil, 0, usage.Errorf("--slice-settle needs --slice")
	}
	need := 2
	if spec.Calibrate {
		need = 1
	}
	specs, err := target.ParseGiven(spec.given(), spec.Baseline, need)
	if err != nil {
		return nil, nil, 0, usage.Wrap(err)
	}
	defaulted := false // said once every check has passed: a refused run says only why
	if spec.CountedDefaults && len(spec.Bounds) == 0 && spec.counting() && !spec.Calibrate {
		spec.Bounds = compare.CountedBounds(l.Clients, slices.ContainsFunc(specs, func(s target.Spec) bool {
			return s.Kind == target.ProxyKind || s.Kind == target.Pooled
		}), spec.Probes.PoolerOnly)
		defaulted = true
	}
	if spec.Calibrate && spec.Rounds == 0 {
		// An ephemeral baseline calibrates against a cluster of its own,
		// re-created for every layout: enough layouts to see their spread.
		spec.Rounds = ABCalibrateRounds
		if specs[0].Ephemeral() && spec.Reshuffle > 0 {
			spec.Rounds = max(ABCalibrateLayoutRounds, 6*spec.Reshuffle)
		}
	}
	if err := spec.checkAuto(len(specs)); err != nil {
		return nil, nil, 0, err
	}
	if spec.Rounds < 2 {
		return nil, nil, 0, usage.Errorf("--rounds must be at least 2 for a paired comparison (6 or more also give a distribution-free interval)")
	}
	if spec.Calibrate {
		// The baseline against itself: a second instance of the same spec.
		// An ephemeral baseline gets a cluster of its own, as a candidate
		// would, so cluster-to-cluster differences count as noise too.
		twin := specs[0]
		twin.Name = specs[0].Name + "-aa"
		specs = []target.Spec{specs[0], twin}
		spec.Cluster.Separate = true
	}
	if err := spec.checkAgents(specs); err != nil {
		return nil, nil, 0, err
	}
	if err := spec.Cluster.Check(specs); err != nil {
		return nil, nil, 0, err
	}
	dsn := false
	for _, s := range specs {
		dsn = dsn || !s.Ephemeral()
	}
	if spec.Data.Create && !dsn {
		return nil, nil, 0, usage.Errorf("--init applies to dsn: targets; an ephemeral target gets pgbench's data whenever the workload uses pgbench's tables")
	}
	if !(spec.Confidence == 0 || spec.Confidence > 0 && spec.Confidence < 1) {
		return nil, nil, 0, usage.Errorf("--confidence must be between 0 and 1, e.g. 0.95")
	}
	if !spec.Calibrate {
		if err := compare.CheckBounds(l.Clients, spec.Bounds, stats.Options{Confidence: spec.Confidence}); err != nil {
			return nil, nil, 0, usage.Wrap(err)
		}
	}
	seed, err := workload.ResolveSeed(spec.OrderSeed)
	if err != nil {
		return nil, nil, 0, usage.Errorf("--order-seed: %v", err)
	}
	if defaulted {
		spec.notice("counted, and given no --bound: deciding on " + strings.Join(spec.Bounds.Strings(), ", ") + " (a simulation-mode CI's default: the count at one client decides; several clients' counts are reported, and bounded where this runner's spread can decide them)")
	}
	return specs, ds, seed, nil
}

// given are the run's targets as given: Given, else the --target values.
func (spec *ABSpec) given() []target.Given {
	if spec.Given != nil {
		return spec.Given
	}
	return target.Texts(spec.Targets)
}

// checkAuto checks a run that rounds until decided (RoundsMax, Budget) and
// settles its most rounds: what fits in the budget at the planned time of
// a round, when only a duration was given.
func (spec *ABSpec) checkAuto(targets int) error {
	if spec.RoundsMax <= 0 && spec.Budget <= 0 {
		return nil
	}
	switch {
	case spec.Calibrate:
		return usage.Errorf("--rounds auto decides bounded measures; --calibrate measures the noise: give --calibrate a number of rounds")
	case len(spec.Bounds) == 0 && spec.Decide == nil:
		return usage.Errorf("--rounds auto rounds until every bounded measure is decided: give --bound (e.g. --bound tps=-5%%), or a number of rounds")
	}
	if spec.RoundsMax <= 0 {
		per := spec.roundTime(targets)
		if per <= 0 {
			return usage.Errorf("--rounds auto:%v needs -T to know how many rounds fit in it: give auto:N (rounds) with -t", spec.Budget)
		}
		spec.RoundsMax = int(spec.Budget / per)
	}
	if spec.RoundsMax < stats.FirstLook {
		return usage.Errorf("--rounds auto:%s leaves %d rounds; a decision needs at least %d (and a failure %d at 95%%)",
			spec.autoText(), spec.RoundsMax, stats.FirstLook, stats.MinFailRounds(0.95))
	}
	spec.Rounds = spec.RoundsMax
	return nil
}

// autoText is the budget as --rounds auto:... was given.
func (spec *ABSpec) autoText() string {
	if spec.Budget > 0 {
		return spec.Budget.String()
	}
	return fmt.Sprint(spec.RoundsMax)
}

// roundTime is how long one round of n targets is planned to take (0
// with a transaction count instead of a duration).
func (spec *ABSpec) roundTime(n int) time.Duration {
	l := spec.Load
	if l.Duration <= 0 {
		return 0
	}
	steps := time.Duration(len(l.Clients))
	if spec.Slice > 0 {
		return steps * (time.Duration(n)*l.Duration + l.Warmup)
	}
	return steps * time.Duration(n) * (l.Duration + l.Warmup)
}
