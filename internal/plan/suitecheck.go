package plan

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/suite"
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
// would have given; a set of targets the cells share is opened once. The servers start again for the cell: on a loaded 2-core machine
// a primary, a replica and a pooler for each of two targets take about ten
// seconds.
func (spec *SuiteSpec) checkLater(ctx context.Context, todo []suite.Cell, cellTargets [][]target.Spec, needs target.Needs) error {
	if len(todo) < 2 {
		return nil
	}
	seen := map[string]bool{targetsKey(cellTargets[0]): true}
	obs := spec.observer()
	for i, c := range todo {
		key := targetsKey(cellTargets[i])
		if seen[key] {
			continue
		}
		seen[key] = true
		obs.Observe(observe.Notice{Text: fmt.Sprintf("checking cell %s's targets before the first cell measures: %s", c.Key(), briefSpecs(cellTargets[i]))})
		started := time.Now()
		opened, err := spec.common().openAll(ctx, cellTargets[i], needs)
		closeAll(opened)
		if err != nil {
			// No bundle yet (a refusal leaves none): a pooler's log is kept
			// in the temporary directory.
			err = keepStartLog(err, func(name, program string) string {
				return filepath.Join(os.TempDir(), fmt.Sprintf("pgscale-%s-%s.%s.%s.log", fileName(spec.Suite.Name), fileName(c.Key()), name, program))
			})
			return usage.Prefix(fmt.Sprintf("cell %s (its targets checked before the first cell measures): ", c.Key()), err)
		}
		obs.Observe(observe.Notice{Text: fmt.Sprintf("cell %s's targets start and answer (%s); closed until the cell runs", c.Key(), time.Since(started).Round(100*time.Millisecond))})
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
