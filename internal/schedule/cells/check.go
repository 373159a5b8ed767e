package cells

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pgscale/pgscale/internal/experiment"
	"github.com/pgscale/pgscale/internal/micro"
	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/rig"
	"github.com/pgscale/pgscale/internal/schedule/microbench"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
)

// checkLater opens, once, every set of targets a cell runs on besides the
// first cell's (which opens them for itself at once), and closes them: its
// builds made or found, its poolers' definitions rendered and each pooler
// started in front of its servers until a query passes through it — what
// opening them for the cell would do, natively (under Valgrind only the
// cell runs). A pooler that refuses its configuration (a setting of
// another version) is then refused before the first cell measures, in
// seconds, naming its cell and its log's last lines (the whole log kept
// in the temporary directory), with the exit code opening it for the cell
// would have given; a set of targets the cells share is opened once. The
// servers start again for the cell: on a loaded 2-core machine a primary,
// a replica and a pooler for each of two targets take about ten seconds.
func (spec *Spec) checkLater(ctx context.Context, todo []Cell) error {
	if len(todo) < 2 {
		return nil
	}
	seen := map[string]bool{targetsKey(todo[0].AB.Targets): true}
	obs := spec.events()
	for _, c := range todo {
		key := targetsKey(c.AB.Targets)
		if seen[key] {
			continue
		}
		seen[key] = true
		obs.Observe(observe.Notice{Text: fmt.Sprintf("checking cell %s's targets before the first cell measures: %s", c.Cell.Key(), briefSpecs(c.AB.Targets))})
		started := time.Now()
		native := &experiment.Common{Cluster: spec.Cluster, Observer: spec.Observer}
		r, err := rig.Open(ctx, native, c.AB.Targets, rig.Options{Needs: spec.Needs})
		r.Close()
		if err != nil {
			// No bundle yet (a refusal leaves none): a pooler's log is kept
			// in the temporary directory.
			err = rig.KeepStartLog(err, func(name, program string) string {
				return filepath.Join(os.TempDir(), fmt.Sprintf("pgscale-%s-%s.%s.%s.log", rig.FileName(spec.Suite.Name), rig.FileName(c.Cell.Key()), name, program))
			})
			return usage.Prefix(fmt.Sprintf("cell %s (its targets checked before the first cell measures): ", c.Cell.Key()), err)
		}
		obs.Observe(observe.Notice{Text: fmt.Sprintf("cell %s's targets start and answer (%s); closed until the cell runs", c.Cell.Key(), time.Since(started).Round(100*time.Millisecond))})
	}
	return nil
}

// briefSpecs writes targets for a line of text.
func briefSpecs(ts []target.Spec) string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = target.Brief(t.String())
	}
	return strings.Join(out, ", ")
}

// runMicro runs the suite's micro cells whose run file is not in the
// bundle yet, complete, each after the macro cells, and writes each run
// file; a cell that could not run is an error, one that ran incomplete is
// written and judged as such.
func (spec *Spec) runMicro(ctx context.Context, dir string) error {
	obs := spec.events()
	for _, m := range spec.Micro {
		path := filepath.Join(dir, MicroFile(m.Name))
		if old, err := micro.ReadRun(path); err == nil && old.Complete() {
			continue
		} else if err != nil && !os.IsNotExist(err) {
			obs.Observe(observe.Notice{Text: fmt.Sprintf("micro cell %s: %v; running it again", m.Name, err)})
		}
		ms := m.Spec
		ms.Notices = notices{obs: obs, prefix: "micro cell " + m.Name + ": "}
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

// notices passes each line written to it on as a notice, after prefix.
type notices struct {
	obs    observe.Observer
	prefix string
}

// Write observes each line of b as a notice.
func (n notices) Write(b []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		n.obs.Observe(observe.Notice{Text: n.prefix + l})
	}
	return len(b), nil
}
