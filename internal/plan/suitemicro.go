package plan

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/micro"
	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/usage"
)

// MicroFile is the name of a suite's micro cell's run file in its bundle.
func MicroFile(name string) string { return "micro-" + name + ".json" }

// checkSuiteMicro refuses, before anything runs, a micro cell that does
// not name a tree for every target of the suite.
func (spec *SuiteSpec) checkSuiteMicro(index *result.SuiteIndex) error {
	for _, m := range spec.Suite.Micro {
		for _, t := range index.Targets {
			if m.Trees[t.Name] == "" {
				return usage.Errorf("micro cell %s: no tree for target %s (trees: %s: PATH@REV)", m.Name, t.Name, t.Name)
			}
		}
		if len(m.Trees) != len(index.Targets) {
			return usage.Errorf("micro cell %s: its trees name %d targets, the suite has %d", m.Name, len(m.Trees), len(index.Targets))
		}
	}
	return nil
}

// runSuiteMicro runs the suite's micro cells whose run file is not in the
// bundle yet, complete, each after the macro cells, and writes each run
// file; a cell that could not run is an error, one that ran incomplete is
// written and judged as such.
func (spec *SuiteSpec) runSuiteMicro(ctx context.Context, dir string, index *result.SuiteIndex) error {
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
		for _, t := range index.Targets {
			ms.Targets = append(ms.Targets, MicroTarget{Name: t.Name, Spec: m.Trees[t.Name]})
		}
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
