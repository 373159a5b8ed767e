package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/experiment"
	"github.com/pgscale/pgscale/internal/load"
	"github.com/pgscale/pgscale/internal/micro"
	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/probeopt"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/rig"
	"github.com/pgscale/pgscale/internal/schedule/ab"
	"github.com/pgscale/pgscale/internal/schedule/cells"
	"github.com/pgscale/pgscale/internal/schedule/microbench"
	"github.com/pgscale/pgscale/internal/suite"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
	"github.com/pgscale/pgscale/internal/workload"
)

// suiteGiven is what suite gives besides the suite file, as given.
type suiteGiven struct {
	Argv     []string
	Targets  *suite.Targets
	Only     []suite.Filter
	Out      string
	Resume   bool
	Cluster  target.ClusterOptions
	IO       string
	Colocate string
	Observer observe.Observer
	Agents   *experiment.Agents
	Notes    []string
}

// suiteSpec checks a suite run and makes its spec: every cell --only
// keeps, its A/B run (or, with one target, its sweep) made from the suite
// file and the flags and checked as ab's and run's are; every micro cell,
// its trees and counting settled. A mistake is a usage error naming its
// cell, found before anything starts.
func suiteSpec(s *suite.Suite, g suiteGiven) (cells.Spec, error) {
	specs := g.Targets.Specs
	note, err := s.CheckTargets(len(specs))
	if err != nil {
		return cells.Spec{}, err
	}
	if err := checkCluster(g.Cluster, specs); err != nil {
		return cells.Spec{}, err
	}
	if g.Agents != nil {
		reachable(&g.Cluster, specs)
	}
	run, err := s.Only(s.Cells(), g.Only)
	if err != nil {
		return cells.Spec{}, err
	}
	dir := g.Out
	if dir == "" {
		dir = filepath.Join("results", fmt.Sprintf("suite-%s-%s", rig.FileName(s.Name), time.Now().UTC().Format("20060102T150405Z")))
	}
	if err := checkOut(dir, true); err != nil {
		return cells.Spec{}, err
	}
	spec := cells.Spec{Suite: s, Argv: g.Argv, Version: Version, Targets: g.Targets, Out: dir, Observer: g.Observer, Agents: g.Agents}
	if spec.Index, err = cells.Index(&spec, g.Resume); err != nil {
		return cells.Spec{}, bundleError(err)
	}
	if spec.Micro, spec.MicroNotes, err = microCells(s, specs); err != nil {
		return cells.Spec{}, err
	}
	// Every cell's spec is checked before anything starts: a mistake in
	// a template shows before the first cluster does.
	seed, err := workload.ResolveSeed("time")
	if err != nil {
		return cells.Spec{}, err
	}
	for _, c := range run {
		if spec.Index.Cells[c.Index].Status == result.CellComplete {
			continue // a resumed bundle's: kept
		}
		ct, err := g.Targets.Cell(c)
		if err != nil {
			return cells.Spec{}, err
		}
		prefix := fmt.Sprintf("cell %s: ", c.Key())
		if ct.Own {
			if err := checkCluster(g.Cluster, ct.Specs); err != nil {
				return cells.Spec{}, usage.Prefix(prefix, err)
			}
		}
		if g.Agents != nil {
			reachable(&g.Cluster, ct.Specs)
		}
		cg, a, err := cellGiven(s, c, seed, g)
		if err != nil {
			return cells.Spec{}, err
		}
		a.Targets = ct.Specs
		var cs ab.Spec
		if len(ct.Specs) == 1 {
			// With one target there is nothing to compare: the cell is a
			// sweep.
			cs, err = sweepCell(cg, a)
		} else {
			cs, err = abExperiment(cg, a)
		}
		if err != nil {
			return cells.Spec{}, usage.Prefix(prefix, err)
		}
		n := cs.Needs()
		spec.Needs.DataBytes, spec.Needs.Connections = max(spec.Needs.DataBytes, n.DataBytes), max(spec.Needs.Connections, n.Connections)
		spec.Needs.Clients, spec.Needs.Prepared = max(spec.Needs.Clients, n.Clients), spec.Needs.Prepared || n.Prepared
		spec.Cells = append(spec.Cells, cells.Cell{Cell: c, AB: cs, Given: ct.Given, Own: ct.Own})
	}
	spec.Cluster = g.Cluster
	if note != "" {
		spec.Notes = append(spec.Notes, note)
	}
	spec.Notes = append(spec.Notes, g.Notes...)
	if g.Targets.Replaced && len(s.Own) > 0 {
		spec.Replaced = fmt.Sprintf("suite %s: --target replaces its targets in every cell, so the cells' own (%s) are not used",
			s.Name, strings.Join(s.OwnKeys(), "; "))
	}
	return spec, nil
}

// sweepCell checks a cell of one target, a sweep: its experiment as run's
// is, its agents, its workload against where the target sends it.
func sweepCell(g common, a abGiven) (ab.Spec, error) {
	c, err := g.check()
	if err != nil {
		return ab.Spec{}, err
	}
	if err := checkAgents(a.Agents, c, a.Targets); err != nil {
		return ab.Spec{}, err
	}
	if err := g.workload(c); err != nil {
		return ab.Spec{}, err
	}
	if err := checkTopology(a.Targets, c.Workload); err != nil {
		return ab.Spec{}, err
	}
	return ab.Spec{Common: *c, Targets: a.Targets, Agents: a.Agents}, nil
}

// cellGiven is what one cell gives of its experiment and its run, as
// given: the suite's workload with the cell's parameters in its
// templates, options and script variables, and the bounds that apply to
// it.
func cellGiven(s *suite.Suite, c suite.Cell, seed uint64, g suiteGiven) (common, abGiven, error) {
	l := s.CellLoad(c)
	a := abGiven{Rounds: l.Rounds.N, RoundsMax: l.Rounds.Max, Budget: l.Rounds.Budget, OrderSeed: strconv.FormatUint(seed, 10),
		Slice: s.Slice, SliceGiven: s.SliceGiven, Confidence: s.Confidence, Agents: g.Agents}
	probes := probeopt.DefaultOptions()
	if !s.Probes {
		probes.None = true
	}
	if s.Profile {
		probes.Set(probeid.Profile.Name, true)
	}
	probes.SetCount(l.Count)
	cg := common{Argv: g.Argv, Version: Version, Cluster: g.Cluster, Observer: g.Observer, Probes: &probes}
	defines := map[string]string{}
	for k, v := range s.Defines {
		defines[k] = v
	}
	for _, p := range s.Params {
		defines[p.Name] = p.Value
	}
	for _, p := range c.Params {
		defines[p.Name] = p.Value
	}
	protocol := s.Protocol
	if v, ok := c.Value("protocol"); ok {
		protocol = v
	}
	cg.Workload = workload.Spec{Defines: defines, Protocol: protocol, Seed: strconv.FormatUint(seed, 10)}
	for _, sc := range s.Scripts {
		if sc.Builtin != "" {
			cg.Workload.Scripts = append(cg.Workload.Scripts, workload.ScriptArg{Kind: "b", Arg: fmt.Sprintf("%s@%d", s.Expand(sc.Builtin, c), sc.Weight)})
			continue
		}
		src, err := s.ScriptSource(sc, c)
		if err != nil {
			return common{}, abGiven{}, err
		}
		cg.Workload.Scripts = append(cg.Workload.Scripts, workload.ScriptArg{Kind: "sql", Arg: sc.Name, Source: src, Weight: sc.Weight})
	}
	scale := l.Scale
	if v, ok := c.Value("scale"); ok {
		scale, _ = strconv.Atoi(v)
	}
	cg.Data = dataGiven{Init: workload.InitOptions{Scale: scale, Fillfactor: 100, PartitionMethod: "range"}, NoInit: !s.WorkloadInit,
		SetupSQL: s.Expand(s.Setup, c)}
	cg.Load = loadGiven{Clients: l.Clients, Settings: load.Settings{Duration: l.Duration, Transactions: l.Transactions, Warmup: l.Warmup,
		MaxTries: 1, Interval: time.Second, IO: g.IO, Colocate: g.Colocate}}
	for _, d := range s.Disturb {
		cg.Disturb.Builtins = append(cg.Disturb.Builtins, s.Expand(d, c))
	}
	bounds, err := s.BoundsFor(c)
	if err != nil {
		return common{}, abGiven{}, err
	}
	a.Bounds = bounds
	if a.RoundsMax > 0 || a.Budget > 0 {
		if len(a.Bounds) == 0 {
			// Nothing to decide in this cell: a fixed number of rounds.
			a.Rounds, a.RoundsMax, a.Budget = suite.DefaultRounds, 0, 0
		} else if n := len(s.Cells()); n > 1 {
			a.Share = 1 / float64(n) // as the suite's verdict decides each cell
		}
	}
	return cg, a, nil
}

// microCells checks the suite's micro cells and makes each one's run: its
// trees, in the suite's target order — the tree the cell names for a
// target, else the source the target builds from (src:, its one ext=
// extension, a proxy's build:) —, its format, its rounds, and when the
// suite counts (count:, --count) its counting, as pgscale micro --count
// counts (instr/op, and with cache the simulated caches'), unless its
// format's program cannot be or its command does not run it through
// $PGSCALE_MICRO_EXEC — it is then timed, as without count:, which a note
// says in one line; a counted cell whose bounds are all on measures of the
// program's own (cpu-ns/op) has a note too: they are not used
// (micro.Options.Either), and nothing of it is judged. Valgrind missing
// is an error.
func microCells(s *suite.Suite, specs []target.Spec) ([]cells.Micro, []string, error) {
	var out []cells.Micro
	var notes []string
	names := map[string]bool{}
	for _, t := range specs {
		names[t.Name] = true
	}
	for _, m := range s.Micro {
		if len(specs) < 2 {
			return nil, nil, usage.Errorf("micro cell %s: compares the targets' trees, the baseline's first, and the suite runs on one target: give it a second", m.Name)
		}
		for name := range m.Trees {
			if !names[name] {
				return nil, nil, usage.Errorf("micro cell %s: trees: %s is no target of the suite", m.Name, name)
			}
		}
		format, err := micro.LookupFormat(m.Format)
		if err != nil {
			return nil, nil, usage.Errorf("micro cell %s: %v", m.Name, err)
		}
		ms := microbench.Spec{Command: m.Cmd, Format: format, Output: m.Output, Rounds: m.Rounds, Timeout: m.Timeout}
		// The file's bounds serve the cell timed and counted alike.
		ms.Options = micro.Options{Bounds: m.Bounds, Groups: m.Groups, GroupUnit: m.GroupUnit, Either: true}
		if ms.Rounds == (compare.Rounds{}) {
			ms.Rounds = compare.Rounds{N: 10}
			if len(m.Bounds) > 0 {
				ms.Rounds = compare.Rounds{Auto: true, Max: compare.DefaultAutoMax}
			}
		}
		for _, t := range specs {
			mt := microbench.Target{Name: t.Name, Spec: m.Trees[t.Name]}
			if mt.Spec == "" {
				src, err := t.Source()
				if err != nil {
					return nil, nil, usage.Errorf("micro cell %s: target %s: %v (or give its tree: trees: {%s: PATH@REV})", m.Name, t.Name, err, t.Name)
				}
				mt.Spec, mt.Source = src.String(), src
			} else if mt.Source, err = target.Tree(mt.Spec); err != nil {
				return nil, nil, usage.Errorf("micro cell %s: target %s: %v", m.Name, t.Name, err)
			}
			ms.Targets = append(ms.Targets, mt)
		}
		if s.Count.Instructions {
			note, err := countMicro(&ms, m, s.Count)
			if err != nil {
				return nil, nil, err
			}
			if note != "" {
				notes = append(notes, note)
			}
		}
		out = append(out, cells.Micro{Spec: ms, Micro: m})
	}
	return out, notes, nil
}

// countMicro has a counted suite's micro cell counted, when its format and
// command allow it, and says what a note says of it.
func countMicro(ms *microbench.Spec, m suite.Micro, count probeopt.Count) (string, error) {
	if err := microbench.Countable(m.Cmd, ms.Format); err != nil {
		return fmt.Sprintf("pgscale: note: micro cell %s is not counted but timed, as without count: %v", m.Name, err), nil
	}
	v, err := findValgrind()
	if err != nil {
		return "", err
	}
	ms.Count, ms.Valgrind = count, v
	judged := len(m.Bounds) == 0
	for _, b := range m.Bounds {
		_, counted := micro.CountedUnit(b.Unit)
		judged = judged || b.Unit == "" || counted
	}
	if !judged {
		return fmt.Sprintf("pgscale: note: micro cell %s is counted, and none of its bounds is on a counted measure (%s): its changes are shown, not judged; bound instr/op (micro:*@instr/op=+1%%)",
			m.Name, strings.Join(micro.BoundSpecs(m.Bounds), ", ")), nil
	}
	return "", nil
}

// bundleError words a suite's refusal of its bundle's directory
// (cells.BundleError) in the flags' words, a usage error; other errors
// come back as they are.
func bundleError(err error) error {
	var be *cells.BundleError
	switch {
	case !errors.As(err, &be):
		return err
	case be.Resume && be.Err != nil:
		return usage.Errorf("--resume %s: %v", be.Dir, be.Err)
	case be.Resume:
		return usage.Errorf("--resume %s: the bundle was made by another suite (or its quick variant, or other --param or --matrix values)", be.Dir)
	}
	return usage.Errorf("%s already holds a suite's bundle: pass --resume to run what it lacks, or another --out", be.Dir)
}
