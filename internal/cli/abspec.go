package cli

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/disturb"
	"github.com/pgscale/pgscale/internal/experiment"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/schedule/ab"
	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
	"github.com/pgscale/pgscale/internal/workload"
)

// abGiven is what ab gives of its run besides the experiment — and a
// suite's cell, and a bisect's step —, as given: abSpec settles its
// defaults and checks it.
type abGiven struct {
	// Targets are the targets, parsed, the baseline first.
	Targets []target.Spec
	Rounds  int
	// RoundsMax and Budget round until decided (--rounds auto:MAX or
	// auto:DURATION: RoundsMax is then the rounds that fit in it).
	RoundsMax int
	Budget    time.Duration
	// Decides says a Decider decides in place of the bounds: each of a
	// bisect's steps has its own.
	Decides bool
	// Share is the part of alpha the bounds get (a suite's cell).
	Share     float64
	OrderSeed string
	// Slice and Settle as given; SliceGiven says --slice was: the
	// default gives way to -t, -C and disturbances, a given one does not.
	Slice, Settle time.Duration
	SliceGiven    bool
	Calibrate     bool
	// Reshuffle as given; ReshuffleGiven says --reshuffle was: counting
	// not given it makes a new layout every round.
	Reshuffle      int
	ReshuffleGiven bool
	Bounds         stats.Bounds
	Confidence     float64
	// CountedDefaults, for a counted run given no bounds, has it decide
	// on compare.CountedBounds.
	CountedDefaults bool
	Out             string
	Agents          *experiment.Agents
}

// abSpec checks what ab gives (the experiment, g, and the run, a) and
// makes the A/B run's spec, its defaults settled: slices give way to -t,
// -C and disturbances; a calibration runs the baseline against its twin
// on a server of its own; a counted run given no bounds decides on the
// counted defaults and lays its clusters out anew every round; rounding
// until decided within a time fits its rounds in it. Every mistake is a
// usage error in the flags' words, found before anything starts.
func abSpec(g common, a abGiven) (ab.Spec, error) {
	spec, err := abExperiment(g, a)
	if err != nil {
		return ab.Spec{}, err
	}
	if spec.Calibrate && len(a.Targets) > 1 {
		spec.Notice(fmt.Sprintf("--calibrate: running %s against itself; the other targets are not run", spec.Targets[0].Name))
	}
	perClient := 1
	if spec.Slice > 0 {
		perClient = len(spec.Targets) // every client holds a connection to each target
	}
	if err := checkOpenFiles(spec.Load.MaxClients(), perClient, disturb.Sessions(spec.Disturbances)); err != nil {
		return ab.Spec{}, err
	}
	if err := checkOut(cmp.Or(spec.Out, "results"), true); err != nil {
		return ab.Spec{}, err
	}
	return spec, nil
}

// abExperiment is abSpec's experiment and run, settled and checked, the
// workload read and checked against where the targets send it: all a
// suite's cell needs.
func abExperiment(g common, a abGiven) (ab.Spec, error) {
	c, err := g.check()
	if err != nil {
		return ab.Spec{}, err
	}
	spec := ab.Spec{Common: *c, Targets: a.Targets, Rounds: a.Rounds, RoundsMax: a.RoundsMax, Budget: a.Budget,
		Share: a.Share, Slice: a.Slice, Settle: a.Settle, Calibrate: a.Calibrate, Reshuffle: a.Reshuffle, Bounds: a.Bounds,
		Confidence: a.Confidence, Out: a.Out, Agents: a.Agents}
	if err := settleAB(&spec, a); err != nil {
		return ab.Spec{}, err
	}
	if err := g.workload(&spec.Common); err != nil {
		return ab.Spec{}, err
	}
	if err := checkTopology(spec.Targets, spec.Workload); err != nil {
		return ab.Spec{}, err
	}
	return spec, nil
}

// settleAB settles and checks what the A/B run adds to its experiment.
func settleAB(spec *ab.Spec, a abGiven) error {
	l := spec.Load
	ds := spec.Disturbances
	if spec.Reshuffle < 0 {
		return usage.Errorf("--reshuffle must be 0 (keep the clusters) or a number of rounds per cluster layout")
	}
	seen := map[int]bool{}
	for _, c := range l.Clients {
		if seen[c] {
			return usage.Errorf("-c lists %d twice: each client count is one step of the comparison", c)
		}
		seen[c] = true
	}
	if spec.Agents != nil && spec.Slice > 0 {
		if a.SliceGiven {
			return usage.Errorf("--agents runs whole-step turns: in slices every client switches target together every slice, which agents on other machines cannot do in step; drop --slice (a suite file's slice:), or make it 0")
		}
		spec.Slice = 0 // whole-step turns: each target's step goes to the agents in its turn
	}
	if spec.Slice > 0 && !a.SliceGiven && (l.Duration <= 0 || len(ds) > 0 || l.Connect) {
		spec.Slice = 0 // -t, -C and disturbances need whole-step turns
	}
	if spec.Slice > 0 {
		if spec.Settle == 0 {
			spec.Settle = spec.Slice / 10
		}
		switch {
		case l.Duration <= 0:
			return usage.Errorf("--slice needs -T: each target gets -T of measured time per step, in slices")
		case spec.Settle >= spec.Slice:
			return usage.Errorf("--slice-settle %v must be shorter than --slice %v", spec.Settle, spec.Slice)
		case len(ds) > 0:
			return usage.Errorf("disturbances run with whole-step turns only: drop --slice")
		case l.Connect:
			return usage.Errorf("-C opens a connection per transaction; --slice keeps one per target: use one or the other")
		case spec.Probes.On(probeid.Profile.Name):
			// Probes watch one server for a whole step, which slices share
			// between the targets: --profile would record nothing.
			return usage.Errorf("--profile records each target's steps with whole-step turns only: add --slice 0")
		}
	} else if spec.Settle > 0 {
		return usage.Errorf("--slice-settle needs --slice")
	}
	defaulted := false // said once every check has passed: a refused run says only why
	if a.CountedDefaults && len(spec.Bounds) == 0 && spec.Counting() && !spec.Calibrate {
		spec.Bounds = compare.CountedBounds(l.Clients, slices.ContainsFunc(spec.Targets, func(s target.Spec) bool {
			return s.Kind == target.ProxyKind || s.Kind == target.Pooled
		}), spec.Probes.PoolerOnly)
		defaulted = true
	}
	if spec.Calibrate && spec.Rounds == 0 {
		// An ephemeral baseline calibrates against a cluster of its own,
		// re-created for every layout: enough layouts to see their spread.
		spec.Rounds = ab.CalibrateRounds
		if spec.Targets[0].Ephemeral() && spec.Reshuffle > 0 {
			spec.Rounds = max(ab.CalibrateLayoutRounds, 6*spec.Reshuffle)
		}
	}
	if spec.Counting() && !a.ReshuffleGiven {
		spec.Reshuffle = ab.CountedReshuffle
	}
	if err := checkAuto(spec, len(spec.Targets), a.Decides); err != nil {
		return err
	}
	if spec.Rounds < 2 {
		return usage.Errorf("--rounds must be at least 2 for a paired comparison (6 or more also give a distribution-free interval)")
	}
	if spec.Calibrate {
		// The baseline against itself: a second instance of the same spec.
		// An ephemeral baseline gets a cluster of its own, as a candidate
		// would, so cluster-to-cluster differences count as noise too.
		twin := spec.Targets[0]
		twin.Name = spec.Targets[0].Name + "-aa"
		spec.Targets = []target.Spec{spec.Targets[0], twin}
		spec.Cluster.Separate = true
	}
	if spec.Agents != nil {
		if spec.Agents.TargetDSN != "" {
			if err := checkAgents(spec.Agents, &spec.Common, nil); err != nil {
				return err
			}
			return usage.Errorf("--agents-dsn names one target; the agents of an A/B get each target's own connection string (without password): give targets the agents reach as dsn:")
		}
		for _, s := range spec.Targets {
			if len(s.Front) > 0 {
				if err := checkAgents(spec.Agents, &spec.Common, nil); err != nil {
					return err
				}
				return usage.Errorf("--agents and target %s: the agents cannot reach a pooler or proxy pgscale starts on its own socket; run it yourself and give it as dsn:", s.Name)
			}
		}
	}
	if err := checkAgents(spec.Agents, &spec.Common, spec.Targets); err != nil {
		return err
	}
	if err := checkCluster(spec.Cluster, spec.Targets); err != nil {
		return err
	}
	dsn := false
	for _, s := range spec.Targets {
		dsn = dsn || !s.Ephemeral()
	}
	if spec.Data.Create && !dsn {
		return usage.Errorf("--init applies to dsn: targets; an ephemeral target gets pgbench's data whenever the workload uses pgbench's tables")
	}
	if !(spec.Confidence == 0 || spec.Confidence > 0 && spec.Confidence < 1) {
		return usage.Errorf("--confidence must be between 0 and 1, e.g. 0.95")
	}
	if !spec.Calibrate {
		if err := compare.CheckBounds(l.Clients, spec.Bounds, stats.Options{Confidence: spec.Confidence}); err != nil {
			return usage.Wrap(err)
		}
	}
	seed, err := workload.ResolveSeed(a.OrderSeed)
	if err != nil {
		return usage.Errorf("--order-seed: %v", err)
	}
	spec.OrderSeed = seed
	if n := spec.Reshuffle; n > 0 && spec.Rounds < 2*n {
		// Said by the run when its clusters could be re-created.
		spec.OneLayout = fmt.Sprintf("--reshuffle %d with %d rounds makes one cluster layout: the clusters are not re-created, and the interval does not cover the fixed difference between them (give --rounds %d or more)",
			n, spec.Rounds, 2*n)
	}
	if defaulted {
		spec.Notice("counted, and given no --bound: deciding on " + strings.Join(spec.Bounds.Strings(), ", ") + " (a simulation-mode CI's default: the count at one client decides; several clients' counts are reported, and bounded where this runner's spread can decide them)")
	}
	return nil
}

// checkAuto checks a run that rounds until decided (RoundsMax, Budget) and
// settles its most rounds: what fits in the budget at the planned time of
// a round of targets, when only a duration was given. Without a Decider
// (decides) it decides on the bounds, which it needs then.
func checkAuto(spec *ab.Spec, targets int, decides bool) error {
	if spec.RoundsMax <= 0 && spec.Budget <= 0 {
		return nil
	}
	switch {
	case spec.Calibrate:
		return usage.Errorf("--rounds auto decides bounded measures; --calibrate measures the noise: give --calibrate a number of rounds")
	case len(spec.Bounds) == 0 && !decides:
		return usage.Errorf("--rounds auto rounds until every bounded measure is decided: give --bound (e.g. --bound tps=-5%%), or a number of rounds")
	}
	if spec.RoundsMax <= 0 {
		per := roundTime(spec, targets)
		if per <= 0 {
			return usage.Errorf("--rounds auto:%v needs -T to know how many rounds fit in it: give auto:N (rounds) with -t", spec.Budget)
		}
		spec.RoundsMax = int(spec.Budget / per)
	}
	if spec.RoundsMax < stats.FirstLook {
		auto := fmt.Sprint(spec.RoundsMax)
		if spec.Budget > 0 {
			auto = spec.Budget.String()
		}
		return usage.Errorf("--rounds auto:%s leaves %d rounds; a decision needs at least %d (and a failure %d at 95%%)",
			auto, spec.RoundsMax, stats.FirstLook, stats.MinFailRounds(0.95))
	}
	spec.Rounds = spec.RoundsMax
	return nil
}

// roundTime is how long one round of n targets is planned to take (0
// with a transaction count instead of a duration).
func roundTime(spec *ab.Spec, n int) time.Duration {
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
