package plan

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/micro"
	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/probeopt"
	"github.com/pgscale/pgscale/internal/schedule/microbench"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
)

// MicroFile is the name of a suite's micro cell's run file in its bundle.
func MicroFile(name string) string { return "micro-" + name + ".json" }

// microTargets are each micro cell's trees, by cell name, in the
// suite's target order: the tree the cell names for a target, else the
// source the target builds from (src:, its one ext= extension, a proxy's
// build:). A cell that names a tree for no target of the suite, or a
// target with neither, is refused before anything runs.
func (spec *SuiteSpec) microTargets(specs []target.Spec) (map[string][]microbench.Target, error) {
	out := map[string][]microbench.Target{}
	names := map[string]bool{}
	for _, t := range specs {
		names[t.Name] = true
	}
	for _, m := range spec.Suite.Micro {
		if len(specs) < 2 {
			return nil, usage.Errorf("micro cell %s: compares the targets' trees, the baseline's first, and the suite runs on one target: give it a second", m.Name)
		}
		for name := range m.Trees {
			if !names[name] {
				return nil, usage.Errorf("micro cell %s: trees: %s is no target of the suite", m.Name, name)
			}
		}
		for _, t := range specs {
			mt := microbench.Target{Name: t.Name, Spec: m.Trees[t.Name]}
			if mt.Spec == "" {
				src, err := t.Source()
				if err != nil {
					return nil, usage.Errorf("micro cell %s: target %s: %v (or give its tree: trees: {%s: PATH@REV})", m.Name, t.Name, err, t.Name)
				}
				mt.Spec, mt.Source = src.String(), src
			} else {
				src, err := target.Tree(mt.Spec)
				if err != nil {
					return nil, usage.Errorf("micro cell %s: target %s: %v", m.Name, t.Name, err)
				}
				mt.Source = src
			}
			out[m.Name] = append(out[m.Name], mt)
		}
	}
	return out, nil
}

// MicroCounts is what a counted suite (count:, --count) counts of each
// micro cell, by name, and what it says of them before anything runs: a
// cell is counted as pgscale micro --count counts (instr/op, and with
// cache the simulated caches'), unless its format's program cannot be or
// its command does not run it through $PGSCALE_MICRO_EXEC — it is then
// timed, as without count:, which a note says in one line; a counted cell
// whose bounds are all on measures of the program's own (cpu-ns/op) has a
// note too: they are not used (micro.Options.Either), and nothing of it
// is judged. A suite that counts nothing counts no micro cell. Valgrind
// missing is an error.
func (spec *SuiteSpec) MicroCounts() (map[string]probeopt.Count, []string, error) {
	s := spec.Suite
	if !s.Count.Instructions || len(s.Micro) == 0 {
		return nil, nil, nil
	}
	counts := map[string]probeopt.Count{}
	var notes []string
	for _, m := range s.Micro {
		format, err := micro.LookupFormat(m.Format)
		if err != nil {
			return nil, nil, usage.Errorf("micro cell %s: %v", m.Name, err)
		}
		if err := microbench.Countable(m.Cmd, format); err != nil {
			notes = append(notes, fmt.Sprintf("pgscale: note: micro cell %s is not counted but timed, as without count: %v", m.Name, err))
			continue
		}
		counts[m.Name] = s.Count
		bounds := m.Bounds
		judged := len(bounds) == 0
		for _, b := range bounds {
			_, counted := micro.CountedUnit(b.Unit)
			judged = judged || b.Unit == "" || counted
		}
		if !judged {
			notes = append(notes, fmt.Sprintf("pgscale: note: micro cell %s is counted, and none of its bounds is on a counted measure (%s): its changes are shown, not judged; bound instr/op (micro:*@instr/op=+1%%)",
				m.Name, strings.Join(micro.BoundSpecs(m.Bounds), ", ")))
		}
	}
	if len(counts) > 0 {
		if _, err := target.FindValgrind(); err != nil {
			return nil, nil, err
		}
	}
	return counts, notes, nil
}

// runSuiteMicro runs the suite's micro cells whose run file is not in the
// bundle yet, complete, each after the macro cells (counted as counts
// says: MicroCounts), and writes each run file; a cell that could not
// run is an error, one that ran incomplete is written and judged as such.
func (spec *SuiteSpec) runSuiteMicro(ctx context.Context, dir string, trees map[string][]microbench.Target, counts map[string]probeopt.Count) error {
	obs := spec.observer()
	for _, m := range spec.Suite.Micro {
		path := filepath.Join(dir, MicroFile(m.Name))
		if old, err := micro.ReadRun(path); err == nil && old.Complete() {
			continue
		} else if err != nil && !os.IsNotExist(err) {
			obs.Observe(observe.Notice{Text: fmt.Sprintf("micro cell %s: %v; running it again", m.Name, err)})
		}
		format, err := micro.LookupFormat(m.Format)
		if err != nil {
			return usage.Errorf("micro cell %s: %v", m.Name, err)
		}
		ms := microbench.Spec{Command: m.Cmd, Format: format, Output: m.Output, Rounds: m.Rounds, Timeout: m.Timeout, Count: counts[m.Name],
			Notice: func(s string) { obs.Observe(observe.Notice{Text: "micro cell " + m.Name + ": " + s}) }}
		if ms.Count.Instructions {
			if ms.Valgrind, err = target.FindValgrind(); err != nil {
				return err
			}
		}
		bounds := m.Bounds
		// The file's bounds serve the cell timed and counted alike.
		ms.Options = micro.Options{Bounds: bounds, Groups: m.Groups, GroupUnit: m.GroupUnit, Either: true}
		if ms.Rounds == (compare.Rounds{}) {
			ms.Rounds = compare.Rounds{N: 10}
			if len(bounds) > 0 {
				ms.Rounds = compare.Rounds{Auto: true, Max: compare.DefaultAutoMax}
			}
		}
		ms.Targets = trees[m.Name]
		run, err := microbench.Run(ctx, ms)
		if err != nil {
			return fmt.Errorf("micro cell %s: %w", m.Name, err)
		}
		run.Name, run.Bounds, run.Groups, run.GroupUnit = m.Name, micro.BoundSpecs(m.Bounds), m.Groups, m.GroupUnit
		if err := run.Write(path); err != nil {
			return fmt.Errorf("micro cell %s: %w", m.Name, err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}
