package plan

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pgscale/pgscale/internal/agent"
	"github.com/pgscale/pgscale/internal/disturb"
	"github.com/pgscale/pgscale/internal/load"
	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/probeopt"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/secret"
	"github.com/pgscale/pgscale/internal/suite"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
	"github.com/pgscale/pgscale/internal/workload"
)

// SuiteSpec is a suite run: what pgscale suite asks for.
type SuiteSpec struct {
	Suite   *suite.Suite
	Argv    []string
	Version string
	Cluster target.ClusterOptions
	// Targets, when given, replace the suite's (--target); Baseline then
	// names the baseline among them.
	Targets  []string
	Baseline string
	// Only runs the cells these filters keep (--only); the others stay
	// missing in the bundle.
	Only []suite.Filter
	// Out is the bundle's directory (default results/suite-NAME-TIME);
	// with Resume it already holds a bundle of the same suite, whose
	// complete cells are kept.
	Out    string
	Resume bool
	// Probes choose the probes (nil: the defaults; the suite's probes:
	// false turns them all off).
	Probes   *probeopt.Options
	IO       string
	Colocate string // engine.Colocate's name
	Observer observe.Observer
	// Agents, when set, has agents run every cell's clients, each
	// target's step in its turn (ABSpec.Agents); they join once, for the
	// whole suite.
	Agents *AgentsSpec
	// Notes are said before the run, once every cell is checked (a
	// refusal stays one line): a parameter given without another that
	// goes with it (suite.Suite.Apart).
	Notes []string
}

// SuiteRun is what a suite run left in its bundle.
type SuiteRun struct {
	Dir   string
	Index *result.SuiteIndex
}

// targets returns the suite's targets as given (--target's, or the
// suite's, specs and definitions), and the baseline's name.
func (spec *SuiteSpec) targets() ([]target.Given, string) {
	if len(spec.Targets) > 0 {
		return target.Texts(spec.Targets), spec.Baseline
	}
	if len(spec.Suite.Targets) > 0 {
		return spec.Suite.TargetSpecs(), spec.Suite.Baseline
	}
	return target.Texts([]string{"installed=settings:"}), ""
}

// RunSuite runs a suite: every cell (or those Only keeps, or those a
// resumed bundle still lacks) as an interleaved A/B over the targets —
// with one target, a sweep — on targets opened once for the whole suite,
// each cell's data made again from its setup. After every cell the
// bundle's index is written, so an interrupted suite keeps every cell it
// finished; --resume runs only what is missing. It stops at the first cell
// that could not complete (a server gone, Ctrl-C) and returns why.
func RunSuite(ctx context.Context, spec SuiteSpec) (*SuiteRun, error) {
	s := spec.Suite
	specsIn, baseline := spec.targets()
	specs, err := target.ParseGiven(specsIn, baseline, 1)
	if err != nil {
		return nil, usage.Wrap(err)
	}
	note, err := s.CheckTargets(len(specs))
	if err != nil {
		return nil, err
	}
	if err := spec.Cluster.Check(specs); err != nil {
		return nil, err
	}
	if spec.Agents != nil {
		reachable(&spec.Cluster, specs)
	}
	cells := s.Cells()
	run, err := s.Only(cells, spec.Only)
	if err != nil {
		return nil, err
	}
	started := time.Now().UTC()
	dir := spec.Out
	if dir == "" {
		dir = filepath.Join("results", fmt.Sprintf("suite-%s-%s", fileName(s.Name), started.Format("20060102T150405Z")))
	}
	if err := checkOut(dir, true); err != nil {
		return nil, err
	}
	index, err := spec.index(dir, specs, cells, started)
	if err != nil {
		return nil, err
	}
	trees, err := spec.microTargets(specs)
	if err != nil {
		return nil, err
	}
	counts, microNotes, err := spec.MicroCounts()
	if err != nil {
		return nil, err
	}
	var todo []suite.Cell
	for _, c := range run {
		if index.Cells[c.Index].Status != result.CellComplete {
			todo = append(todo, c)
		}
	}
	out := &SuiteRun{Dir: dir, Index: index}
	if len(todo) == 0 {
		if err := writeIndex(dir, index); err != nil {
			return nil, err
		}
		for _, n := range microNotes {
			spec.observer().Observe(observe.Notice{Text: n})
		}
		return out, spec.runSuiteMicro(ctx, dir, trees, counts)
	}
	// Every cell's spec is checked before anything starts: a mistake in
	// a template shows before the first cluster does.
	seed, err := workload.ResolveSeed("time")
	if err != nil {
		return nil, err
	}
	cellSpecs := make([]ABSpec, len(todo))
	cellTargets := make([][]target.Spec, len(todo))
	cellGiven := make([][]target.Given, len(todo))
	cellOwn := make([]bool, len(todo))
	needs := target.Needs{}
	for i, c := range todo {
		given, ts, own, err := spec.cellTargets(c, specs)
		if err != nil {
			return nil, usage.Prefix(fmt.Sprintf("cell %s: ", c.Key()), err)
		}
		if spec.Agents != nil {
			reachable(&spec.Cluster, ts)
		}
		cs, err := spec.cellSpec(c, seed, given)
		if err != nil {
			return nil, err
		}
		ds, err := cs.checkCell(ts)
		if err != nil {
			return nil, usage.Prefix(fmt.Sprintf("cell %s: ", c.Key()), err)
		}
		wl, err := workload.Load(cs.Workload)
		if err == nil {
			// Against the cell's own targets: a writing workload through
			// a definition that balances over a replica, or a transaction
			// across a sharding one's shards, is refused here, before
			// anything starts, whichever cell it is.
			err = checkTopology(ts, wl)
		}
		if err != nil {
			return nil, usage.Prefix(fmt.Sprintf("cell %s: ", c.Key()), err)
		}
		n := cs.needs(ds, wl)
		needs.DataBytes, needs.Connections = max(needs.DataBytes, n.DataBytes), max(needs.Connections, n.Connections)
		needs.Clients, needs.Prepared = max(needs.Clients, n.Clients), needs.Prepared || n.Prepared
		cellSpecs[i], cellTargets[i], cellGiven[i], cellOwn[i] = cs, ts, given, own
	}
	// Every cell's targets are checked before the first cell measures
	// (checkLater): a broken definition of the last cell is refused in
	// seconds, not after the first cell's rounds.
	if err := spec.checkLater(ctx, todo, cellTargets, needs); err != nil {
		return nil, err
	}
	// Said once nothing refuses the run (every cell checked), so that a
	// refusal is one line.
	if note != "" {
		spec.observer().Observe(observe.Notice{Text: note})
	}
	for _, n := range append(append([]string(nil), spec.Notes...), microNotes...) {
		spec.observer().Observe(observe.Notice{Text: n})
	}
	if len(spec.Targets) > 0 && len(s.Own) > 0 {
		spec.observer().Observe(observe.Notice{Text: fmt.Sprintf("suite %s: --target replaces its targets in every cell, so the cells' own (%s) are not used",
			s.Name, strings.Join(s.OwnKeys(), "; "))})
	}
	// The bundle is made once every cell is known to be runnable: a
	// mistake leaves no directory behind.
	if err := writeIndex(dir, index); err != nil {
		return nil, err
	}
	obs := spec.observer()
	coord, err := spec.common().openAgents(ctx, spec.Agents)
	if err != nil {
		return out, err
	}
	var suiteErr error
	if coord != nil {
		defer func() { _ = coord.Close(ctx, suiteErr) }()
	}
	// The targets stay open from cell to cell while the cells run on the
	// same ones; a cell on targets of its own (cells:) has those in use
	// closed and its own opened.
	var targets []*prepared
	openKey, openCounted := "", false
	defer func() { closeAll(targets) }()
	for i, c := range todo {
		obs.Observe(observe.CellStart{Index: c.Index, Cells: len(cells), Key: c.Key()})
		// Counting instructions (count: instructions), the servers and a
		// proxy run under Valgrind, each target on a server of its own
		// (checkCount): a cell that counts and one that does not run on
		// targets opened apart.
		counted := cellSpecs[i].Cluster.Valgrind != nil
		if key := targetsKey(cellTargets[i]) + fmt.Sprint(counted); targets == nil || key != openKey {
			switch {
			case cellOwn[i]:
				obs.Observe(observe.Notice{Text: fmt.Sprintf("cell %s runs on targets of its own: %s", c.Key(), briefTargets(cellGiven[i]))})
			case targets != nil:
				obs.Observe(observe.Notice{Text: fmt.Sprintf("cell %s runs on the suite's targets again", c.Key())})
			}
			if targets != nil && counted != openCounted {
				how := "natively"
				if counted {
					how = "under Valgrind, counting instructions"
				}
				obs.Observe(observe.Notice{Text: fmt.Sprintf("cell %s runs %s: its targets are opened again", c.Key(), how)})
			}
			closeAll(targets)
			open := spec.common()
			open.Cluster = cellSpecs[i].Cluster
			targets, err = open.openAll(ctx, cellTargets[i], needs)
			openCounted = counted
			if err != nil {
				suiteErr = err
				return out, err
			}
			openKey = key
		}
		cell := &index.Cells[c.Index]
		files, runErr := spec.runCell(ctx, cellSpecs[i], targets, cellTargets[i], filepath.Join(dir, cell.Dir), seed, coord)
		suiteErr = runErr
		cell.Files = files
		switch {
		case runErr == nil:
			cell.Status, cell.Reason = result.CellComplete, ""
		case len(files) > 0:
			cell.Status, cell.Reason = result.CellIncomplete, oneLine(runErr)
		default:
			cell.Status, cell.Reason = result.CellMissing, ""
		}
		index.Finished = time.Now().UTC()
		if err := result.WriteSuiteIndex(dir, index); err != nil {
			return out, errors.Join(runErr, fmt.Errorf("write the suite's index: %w", err))
		}
		if runErr != nil {
			return out, fmt.Errorf("cell %s: %w", c.Key(), runErr)
		}
	}
	// The micro cells need no server; they run after the macro cells.
	return out, spec.runSuiteMicro(ctx, dir, trees, counts)
}

func oneLine(err error) string {
	s := err.Error()
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}

// common is what every cell shares.
func (spec *SuiteSpec) common() *Common {
	return &Common{Argv: spec.Argv, Version: spec.Version, Cluster: spec.Cluster, Observer: spec.Observer}
}

func (spec *SuiteSpec) observer() observe.Observer { return spec.common().observer() }

// index returns the bundle's index: a new one, or with Resume the one in
// dir, which must be of the same suite.
func (spec *SuiteSpec) index(dir string, specs []target.Spec, cells []suite.Cell, started time.Time) (*result.SuiteIndex, error) {
	s := spec.Suite
	params := map[string]string{}
	for _, p := range s.Params {
		params[p.Name] = p.Shown()
	}
	if spec.Resume {
		x, err := result.ReadSuiteIndex(dir)
		if err != nil {
			return nil, usage.Errorf("--resume %s: %v", dir, err)
		}
		if x.Source != s.Source || x.Quick != s.Quick || !sameParams(x.Params, params) || !sameCells(x.Cells, cells) {
			return nil, usage.Errorf("--resume %s: the bundle was made by another suite (or its quick variant, or other --param or --matrix values)", dir)
		}
		return x, nil
	}
	if result.IsSuiteBundle(dir) {
		return nil, usage.Errorf("%s already holds a suite's bundle: pass --resume to run what it lacks, or another --out", dir)
	}
	x := &result.SuiteIndex{Pgscale: spec.Version, Name: s.Name, File: s.File, Source: s.Source, Quick: s.Quick,
		Params: params, Command: secret.RedactAll(spec.Argv), Started: started, Finished: started, Baseline: specs[0].Name}
	if len(x.Params) == 0 {
		x.Params = nil
	}
	for _, t := range specs {
		x.Targets = append(x.Targets, result.ABTarget{Name: t.Name, Spec: t.String(), File: t.Name + ".json"})
	}
	for _, a := range s.Axes {
		x.Axes = append(x.Axes, result.SuiteAxis{Name: a.Name, Values: a.Values})
	}
	for _, e := range s.Expect {
		x.Rules = append(x.Rules, result.SuiteRule{Spec: e.Spec, Decision: e.Decision})
	}
	for _, c := range cells {
		ps := map[string]string{}
		for _, p := range c.Params {
			ps[p.Name] = p.Value
		}
		x.Cells = append(x.Cells, result.SuiteCell{Key: c.Key(), Params: ps, Dir: filepath.Join("cells", c.Dir()), Status: result.CellMissing})
	}
	return x, nil
}

// sameCells reports whether a bundle's cells are the suite's, in order.
func sameCells(x []result.SuiteCell, cells []suite.Cell) bool {
	if len(x) != len(cells) {
		return false
	}
	for i, c := range cells {
		if x[i].Key != c.Key() {
			return false
		}
	}
	return true
}

func sameParams(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// cellTargets are the targets cell c runs on, as given and parsed: the
// suite's (specs, parsed), or those a cells: entry of the suite file gives
// it in place of the suite's of the same names (not with --target, which
// replaces every cell's), each checked as the suite's are; own says which.
func (spec *SuiteSpec) cellTargets(c suite.Cell, specs []target.Spec) (gs []target.Given, ts []target.Spec, own bool, err error) {
	given, baseline := spec.targets()
	if len(spec.Targets) > 0 {
		return given, specs, false, nil
	}
	mine, ok := spec.Suite.CellTargets(c)
	if !ok {
		return given, specs, false, nil
	}
	if ts, err = target.ParseGiven(mine, baseline, 1); err != nil {
		return nil, nil, false, usage.Wrap(err)
	}
	if err := spec.Cluster.Check(ts); err != nil {
		return nil, nil, false, err
	}
	return mine, ts, true, nil
}

// targetsKey tells one cell's targets from another's: the same key, the
// same targets, kept open from one cell to the next.
func targetsKey(ts []target.Spec) string {
	var b strings.Builder
	for _, t := range ts {
		b.WriteString(t.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// briefTargets writes targets for a line of text, a proxy's inline
// definition as its program's name.
func briefTargets(gs []target.Given) string {
	out := make([]string, len(gs))
	for i, g := range gs {
		out[i] = g.Brief()
	}
	return strings.Join(out, ", ")
}

// cellSpec is the A/B spec of one cell: the suite's workload with the
// cell's parameters in its templates, options and script variables, and
// the bounds that apply to it.
func (spec *SuiteSpec) cellSpec(c suite.Cell, seed uint64, given []target.Given) (ABSpec, error) {
	s := spec.Suite
	_, baseline := spec.targets()
	l := s.CellLoad(c)
	cs := ABSpec{Common: *spec.common(), Given: given, Baseline: baseline, Rounds: l.Rounds.N, RoundsMax: l.Rounds.Max, Budget: l.Rounds.Budget,
		OrderSeed: strconv.FormatUint(seed, 10), Slice: s.Slice, SliceGiven: s.SliceGiven, Confidence: s.Confidence, Agents: spec.Agents}
	probes := probeopt.DefaultOptions()
	if spec.Probes != nil {
		probes = spec.Probes.Clone()
	}
	cs.Probes = &probes
	if !s.Probes {
		cs.Probes.None = true
	}
	if s.Profile {
		cs.Probes.Set(probeid.Profile.Name, true)
	}
	cs.Probes.SetCount(l.Count)
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
	cs.Workload = workload.Spec{Defines: defines, Protocol: protocol, Seed: strconv.FormatUint(seed, 10)}
	for _, sc := range s.Scripts {
		if sc.Builtin != "" {
			cs.Workload.Scripts = append(cs.Workload.Scripts, workload.ScriptArg{Kind: "b", Arg: fmt.Sprintf("%s@%d", s.Expand(sc.Builtin, c), sc.Weight)})
			continue
		}
		src, err := s.ScriptSource(sc, c)
		if err != nil {
			return ABSpec{}, err
		}
		cs.Workload.Scripts = append(cs.Workload.Scripts, workload.ScriptArg{Kind: "sql", Arg: sc.Name, Source: src, Weight: sc.Weight})
	}
	scale := s.Scale
	if v, ok := c.Value("scale"); ok {
		scale, _ = strconv.Atoi(v)
	}
	cs.Data = Data{Init: workload.InitOptions{Scale: scale, Fillfactor: 100, PartitionMethod: "range"}, NoInit: !s.WorkloadInit,
		SetupSQL: s.Expand(s.Setup, c)}
	cs.Load = Load{Clients: l.Clients, Settings: load.Settings{Duration: l.Duration, Transactions: l.Transactions, Warmup: l.Warmup,
		MaxTries: 1, Interval: time.Second, IO: spec.IO, Colocate: spec.Colocate}}
	for _, d := range s.Disturb {
		cs.Disturb.Builtins = append(cs.Disturb.Builtins, s.Expand(d, c))
	}
	bounds, err := s.BoundsFor(c)
	if err != nil {
		return ABSpec{}, err
	}
	cs.Bounds = bounds
	if cs.RoundsMax > 0 || cs.Budget > 0 {
		if len(cs.Bounds) == 0 {
			// Nothing to decide in this cell: a fixed number of rounds.
			cs.Rounds, cs.RoundsMax, cs.Budget = suite.DefaultRounds, 0, 0
		} else if n := len(s.Cells()); n > 1 {
			cs.Share = 1 / float64(n) // as the suite's verdict decides each cell
		}
	}
	return cs, nil
}

// check checks the cell's spec; with one target there is nothing to
// compare, and the cell is a sweep.
func (cs *ABSpec) checkCell(specs []target.Spec) ([]disturb.Disturbance, error) {
	if len(specs) == 1 {
		ds, err := cs.Common.check()
		if err == nil {
			err = cs.checkAgents(specs)
		}
		return ds, err
	}
	_, ds, _, err := cs.check()
	return ds, err
}

// runCell runs one cell on the open targets into dir: an A/B run, or with
// one target a sweep. It returns the names of the files it wrote, relative
// to dir, baseline first.
func (spec *SuiteSpec) runCell(ctx context.Context, cs ABSpec, targets []*prepared, specs []target.Spec, dir string, seed uint64,
	coord *agent.Coordinator) ([]string, error) {
	wl, setup, err := cs.loadWorkload()
	if err != nil {
		return nil, err
	}
	ds, err := cs.checkCell(specs)
	if err != nil {
		return nil, err
	}
	started := time.Now().UTC()
	if len(targets) == 1 {
		// A cell of one target is a sweep, told as run tells one: its
		// head, each step's evidence as the step ends, its table and
		// diagnosis (what report of the cell's file prints).
		name := targets[0].name
		want := filepath.Join(dir, name+".json")
		if (cs.Probes.On(probeid.Profile.Name) || cs.counting()) && cs.Probes.ProfileDir == "" {
			// The cell's pprof files in the bundle, beside its result
			// file, as an A/B cell's are.
			targets[0].profileDir = filepath.Join(dir, "profiles", name)
		}
		f, path, err := cs.sweepOn(ctx, targets[0], wl, setup, ds, started, sweepFile{Path: want, Agents: coord})
		if f == nil || path != want {
			return nil, err // nothing measured, or kept outside the bundle, as err says
		}
		return []string{name + ".json"}, err
	}
	out := dir
	files, err := cs.runOn(ctx, targets, specs, wl, setup, ds, seed, started, &out, coord)
	if out != dir {
		return nil, err // kept elsewhere, as err says: not in the bundle
	}
	var names []string
	for i, f := range files {
		names = append(names, f.AB.Targets[i].File)
	}
	return names, err
}

// EstimateSuite is how long the cells take to measure on n targets (the
// data's set-up in each cell comes on top), and how many of them count
// transactions instead of running for a time, which it cannot estimate
// ahead.
func EstimateSuite(s *suite.Suite, cells []suite.Cell, n int) (time.Duration, int) {
	var total time.Duration
	unknown := 0
	for _, c := range cells {
		l := s.CellLoad(c)
		steps := time.Duration(len(l.Clients))
		if l.Duration <= 0 {
			unknown++
			continue
		}
		rounds := time.Duration(l.Rounds.N)
		if l.Rounds.Max > 0 {
			rounds = time.Duration(l.Rounds.Max) // at most: it stops once decided
		}
		switch {
		case n == 1:
			total += steps * (l.Duration + l.Warmup)
		case l.Rounds.Budget > 0:
			total += l.Rounds.Budget
		case s.Slice > 0 && len(s.Disturb) == 0:
			total += rounds * steps * (time.Duration(n)*l.Duration + l.Warmup)
		default:
			total += rounds * time.Duration(n) * steps * (l.Duration + l.Warmup)
		}
	}
	return total, unknown
}

// writeIndex makes the bundle's directory and writes its first index.
func writeIndex(dir string, x *result.SuiteIndex) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("make the suite's bundle: %w", err)
	}
	if err := result.WriteSuiteIndex(dir, x); err != nil {
		return fmt.Errorf("write the suite's index: %w", err)
	}
	return nil
}
