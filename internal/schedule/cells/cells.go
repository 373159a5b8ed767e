// Package cells is the schedule of a suite: its cells, each an
// interleaved A/B over the targets (with one target, a sweep), on targets
// opened once while the cells run on the same ones, each cell's data made
// again from its set-up; after every cell the bundle's index is written,
// so that an interrupted suite keeps every cell it finished; its
// micro-benchmark cells after the others. The cells come checked from
// where they were given (the suite file and the command line); it drives
// the rig through the A/B and sweep schedules.
package cells

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pgscale/pgscale/internal/experiment"
	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/rig"
	"github.com/pgscale/pgscale/internal/schedule/ab"
	"github.com/pgscale/pgscale/internal/schedule/microbench"
	"github.com/pgscale/pgscale/internal/schedule/sweep"
	"github.com/pgscale/pgscale/internal/suite"
	"github.com/pgscale/pgscale/internal/target"
)

// Spec is a suite run, made and checked where it was given: every cell
// to run has its A/B spec, settled.
type Spec struct {
	Suite *suite.Suite
	// Argv is the command line, passwords redacted where it was read, and Version
	// pgscale's, recorded in the bundle's index.
	Argv    []string
	Version string
	// Targets are the targets the suite runs on (suite.Suite.Resolve).
	Targets *suite.Targets
	// Cells are the cells to run (those --only keeps), each checked, in
	// the suite's order; those a resumed bundle holds complete are not
	// run again.
	Cells []Cell
	// Needs is what the cells ask of the servers, the most of each.
	Needs target.Needs
	// Micro are the suite's micro-benchmark cells, each checked.
	Micro []Micro
	// Out is the bundle's directory, and Index its index (Index): a new
	// one, or a resumed bundle's, whose complete cells are kept.
	Out   string
	Index *result.SuiteIndex
	// Notes are said before the cells run, once every cell is checked (a
	// refusal stays one line); MicroNotes after them, or alone when no
	// cell is left to run.
	Notes, MicroNotes []string
	// Replaced, when set, is said after them, when cells run: that the
	// targets the user gave replace the cells' own (cells:), in the words
	// they gave them with.
	Replaced string
	// Cluster is how the targets of the cells are opened to be checked
	// before the first cell measures: natively (checkLater).
	Cluster  target.ClusterOptions
	Observer observe.Observer
	// Agents, when set, has agents run every cell's clients; they join
	// once, for the whole suite.
	Agents *experiment.Agents
}

// Cell is one cell of the suite, ready to run: its A/B run (with one
// target, AB.Targets[0]'s sweep), its targets as given, and whether they
// are its own (cells:).
type Cell struct {
	Cell  suite.Cell
	AB    ab.Spec
	Given []target.Given
	Own   bool
}

// Micro is one micro-benchmark cell, ready to run: its run, and what its
// run file records of the suite's file.
type Micro struct {
	Spec microbench.Spec
	suite.Micro
}

// BundleError says the bundle's directory is not what the run was asked
// to make of it: to resume (Resume), it holds no bundle that reads (Err)
// or one of another suite (or of its quick variant, or of other
// parameters' or axes' values); else it holds a bundle already. The edge
// words it.
type BundleError struct {
	Dir    string
	Resume bool
	Err    error
}

// Error says what the directory holds, in the schedule's words.
func (e *BundleError) Error() string {
	switch {
	case e.Resume && e.Err != nil:
		return fmt.Sprintf("%s: %v", e.Dir, e.Err)
	case e.Resume:
		return fmt.Sprintf("%s: the bundle was made by another suite", e.Dir)
	}
	return fmt.Sprintf("%s already holds a suite's bundle", e.Dir)
}

// Bundle is what a suite run left in its bundle.
type Bundle struct {
	Dir   string
	Index *result.SuiteIndex
}

// MicroFile is the name of a suite's micro cell's run file in its bundle.
func MicroFile(name string) string { return "micro-" + name + ".json" }

// Run runs the suite: every cell of spec.Cells a resumed bundle does not
// hold complete, on targets opened once for the cells that run on the same
// ones, then the micro cells. It stops at the first cell that could not
// complete (a server gone, Ctrl-C) and returns why.
func Run(ctx context.Context, spec Spec) (*Bundle, error) {
	dir := spec.Out
	index := spec.Index
	var todo []Cell
	for _, c := range spec.Cells {
		if index.Cells[c.Cell.Index].Status != result.CellComplete {
			todo = append(todo, c)
		}
	}
	out := &Bundle{Dir: dir, Index: index}
	obs := spec.events()
	if len(todo) == 0 {
		if err := writeIndex(dir, index); err != nil {
			return nil, err
		}
		for _, n := range spec.MicroNotes {
			obs.Observe(observe.Notice{Text: n})
		}
		return out, spec.runMicro(ctx, dir)
	}
	// Every cell's targets are checked before the first cell measures
	// (checkLater): a broken definition of the last cell is refused in
	// seconds, not after the first cell's rounds.
	if err := spec.checkLater(ctx, todo); err != nil {
		return nil, err
	}
	// Said once nothing refuses the run (every cell checked), so that a
	// refusal is one line.
	for _, n := range append(append([]string(nil), spec.Notes...), spec.MicroNotes...) {
		obs.Observe(observe.Notice{Text: n})
	}
	if spec.Replaced != "" {
		obs.Observe(observe.Notice{Text: spec.Replaced})
	}
	// The bundle is made once every cell is known to be runnable: a
	// mistake leaves no directory behind.
	if err := writeIndex(dir, index); err != nil {
		return nil, err
	}
	coord, err := rig.OpenAgents(ctx, &todo[0].AB.Common, spec.Agents)
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
	var r *rig.Rig
	openKey, openCounted := "", false
	defer func() { r.Close() }()
	for _, c := range todo {
		obs.Observe(observe.CellStart{Index: c.Cell.Index, Cells: len(index.Cells), Key: c.Cell.Key()})
		// Counting instructions (count: instructions), the servers and a
		// proxy run under Valgrind, each target on a server of its own:
		// a cell that counts and one that does not run on targets opened
		// apart.
		counted := c.AB.Cluster.Valgrind != nil
		if key := targetsKey(c.AB.Targets) + fmt.Sprint(counted); r == nil || key != openKey {
			switch {
			case c.Own:
				obs.Observe(observe.Notice{Text: fmt.Sprintf("cell %s runs on targets of its own: %s", c.Cell.Key(), briefTargets(c.Given))})
			case r != nil:
				obs.Observe(observe.Notice{Text: fmt.Sprintf("cell %s runs on the suite's targets again", c.Cell.Key())})
			}
			if r != nil && counted != openCounted {
				how := "natively"
				if counted {
					how = "under Valgrind, counting instructions"
				}
				obs.Observe(observe.Notice{Text: fmt.Sprintf("cell %s runs %s: its targets are opened again", c.Cell.Key(), how)})
			}
			r.Close()
			r, err = rig.Open(ctx, &c.AB.Common, c.AB.Targets, rig.Options{Needs: spec.Needs, Agents: coord})
			openCounted = counted
			if err != nil {
				suiteErr = err
				return out, err
			}
			openKey = key
		} else {
			r = r.With(&c.AB.Common)
		}
		cell := &index.Cells[c.Cell.Index]
		files, runErr := runCell(ctx, r, c, filepath.Join(dir, cell.Dir))
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
			return out, fmt.Errorf("cell %s: %w", c.Cell.Key(), runErr)
		}
	}
	// The micro cells need no server; they run after the macro cells.
	return out, spec.runMicro(ctx, dir)
}

func (spec *Spec) events() observe.Observer {
	if spec.Observer == nil {
		return observe.Discard
	}
	return spec.Observer
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

// runCell runs one cell on the rig's open targets into dir: an A/B run,
// or with one target a sweep. It returns the names of the files it wrote,
// relative to dir, baseline first.
func runCell(ctx context.Context, r *rig.Rig, c Cell, dir string) ([]string, error) {
	started := time.Now().UTC()
	cs := &c.AB
	if len(cs.Targets) == 1 {
		// A cell of one target is a sweep, told as run tells one: its
		// head, each step's evidence as the step ends, its table and
		// diagnosis (what report of the cell's file prints).
		name := cs.Targets[0].Name
		want := filepath.Join(dir, name+".json")
		if (cs.Probes.On(probeid.Profile.Name) || cs.Counting()) && cs.Probes.ProfileDir == "" {
			// The cell's pprof files in the bundle, beside its result
			// file, as an A/B cell's are.
			r.ProfileDir(0, filepath.Join(dir, "profiles", name))
		}
		f, path, err := sweep.On(ctx, r, sweep.File{Path: want, Started: started})
		if f == nil || path != want {
			return nil, err // nothing measured, or kept outside the bundle, as err says
		}
		return []string{name + ".json"}, err
	}
	files, out, err := ab.On(ctx, r, cs, dir, started)
	if out != dir {
		return nil, err // kept elsewhere, as err says: not in the bundle
	}
	var names []string
	for i, f := range files {
		names = append(names, f.AB.Targets[i].File)
	}
	return names, err
}

// Index returns the bundle's index for a run of spec (its Suite, Targets,
// Argv, Version and Out): a new one, or to resume the one in Out, which
// must be of the same suite; a directory that cannot serve is a
// *BundleError.
func Index(spec *Spec, resume bool) (*result.SuiteIndex, error) {
	s := spec.Suite
	dir := spec.Out
	started := time.Now().UTC()
	cells := s.Cells()
	params := map[string]string{}
	for _, p := range s.Params {
		params[p.Name] = p.Shown()
	}
	if resume {
		x, err := result.ReadSuiteIndex(dir)
		if err != nil {
			return nil, &BundleError{Dir: dir, Resume: true, Err: err}
		}
		if x.Source != s.Source || x.Quick != s.Quick || !sameParams(x.Params, params) || !sameCells(x.Cells, cells) {
			return nil, &BundleError{Dir: dir, Resume: true}
		}
		return x, nil
	}
	if result.IsSuiteBundle(dir) {
		return nil, &BundleError{Dir: dir}
	}
	x := &result.SuiteIndex{Pgscale: spec.Version, Name: s.Name, File: s.File, Source: s.Source, Quick: s.Quick,
		Params: params, Command: spec.Argv, Started: started, Finished: started, Baseline: spec.Targets.Specs[0].Name}
	if len(x.Params) == 0 {
		x.Params = nil
	}
	for _, t := range spec.Targets.Specs {
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
