package plan

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/micro"
	"github.com/pgscale/pgscale/internal/observe"
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
func (spec *SuiteSpec) microTargets(specs []target.Spec) (map[string][]MicroTarget, error) {
	out := map[string][]MicroTarget{}
	names := map[string]bool{}
	for _, t := range specs {
		names[t.Name] = true
	}
	for _, m := range spec.Suite.Micro {
		for name := range m.Trees {
			if !names[name] {
				return nil, usage.Errorf("micro cell %s: trees: %s is no target of the suite", m.Name, name)
			}
		}
		for _, t := range specs {
			mt := MicroTarget{Name: t.Name, Spec: m.Trees[t.Name]}
			if mt.Spec == "" {
				src, err := sourceOf(t)
				if err != nil {
					return nil, usage.Errorf("micro cell %s: target %s: %v (or give its tree: trees: {%s: PATH@REV})", m.Name, t.Name, err, t.Name)
				}
				mt.Spec, mt.Source = src.String(), &src
			}
			out[m.Name] = append(out[m.Name], mt)
		}
	}
	return out, nil
}

// runSuiteMicro runs the suite's micro cells whose run file is not in the
// bundle yet, complete, each after the macro cells, and writes each run
// file; a cell that could not run is an error, one that ran incomplete is
// written and judged as such.
func (spec *SuiteSpec) runSuiteMicro(ctx context.Context, dir string, trees map[string][]MicroTarget) error {
	obs := spec.observer()
	for _, m := range spec.Suite.Micro {
		path := filepath.Join(dir, MicroFile(m.Name))
		if old, err := micro.ReadRun(path); err == nil && old.Complete() {
			continue
		} else if err != nil && !os.IsNotExist(err) {
			obs.Observe(observe.Notice{Text: fmt.Sprintf("micro cell %s: %v; running it again", m.Name, err)})
		}
		ms := MicroSpec{Command: m.Cmd, Format: m.Format, Output: m.Output, Rounds: m.Rounds, Timeout: m.Timeout,
			Notice: func(s string) { obs.Observe(observe.Notice{Text: "micro cell " + m.Name + ": " + s}) }}
		bounds, err := micro.ParseBounds(m.Bounds)
		if err != nil {
			return usage.Wrap(err)
		}
		ms.Options = micro.Options{Bounds: bounds, Groups: m.Groups, GroupUnit: m.GroupUnit}
		if ms.Rounds == (compare.Rounds{}) {
			ms.Rounds = compare.Rounds{N: 10}
			if len(bounds) > 0 {
				ms.Rounds = compare.Rounds{Auto: true, Max: compare.DefaultAutoMax}
			}
		}
		ms.Targets = trees[m.Name]
		run, err := RunMicro(ctx, ms)
		if err != nil {
			return fmt.Errorf("micro cell %s: %w", m.Name, err)
		}
		run.Name, run.Bounds, run.Groups, run.GroupUnit = m.Name, m.Bounds, m.Groups, m.GroupUnit
		if err := run.Write(path); err != nil {
			return fmt.Errorf("micro cell %s: %w", m.Name, err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}
