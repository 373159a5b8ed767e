package plan

import (
	cryptorand "crypto/rand"
	"encoding/hex"
	"time"

	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/workload"
)

// resultFiles builds one result file per target from what the run did.
func (spec *ABSpec) resultFiles(wl *workload.Loaded, targets []*prepared, specs []target.Spec, run *ABRun, layouts []result.Layout,
	reshuffle int, runErr error, interrupted bool, seed uint64, started time.Time) []*result.File {
	abInfo := &result.AB{Run: runID(started), Baseline: targets[0].name, Rounds: spec.Rounds,
		RoundsDone: run.RoundsDone, OrderSeed: seed, Calibration: spec.Calibrate,
		SliceS: spec.Slice.Seconds(), SliceSettleS: spec.Settle.Seconds(), Bounds: spec.Bounds.Strings(), Confidence: spec.Confidence}
	abInfo.Reshuffle = reshuffle
	if spec.RoundsMax > 0 {
		// Rounding until decided: the rounds it ran, out of its most.
		abInfo.Rounds, abInfo.RoundsMax, abInfo.Stopped = max(1, len(run.Order)), spec.RoundsMax, run.Stopped
	}
	for _, l := range layouts {
		for r, n := range run.Layouts {
			if n == l.Layout {
				l.Rounds = append(l.Rounds, r+1)
			}
		}
		if len(l.Rounds) > 0 {
			abInfo.Layouts = append(abInfo.Layouts, l)
		}
	}
	for i, t := range targets {
		abInfo.Targets = append(abInfo.Targets, result.ABTarget{Name: t.name, Spec: specs[i].String(), File: t.name + ".json"})
	}
	for _, order := range run.Order {
		names := make([]string, len(order))
		for i, ti := range order {
			names[i] = targets[ti].name
		}
		abInfo.Order = append(abInfo.Order, names)
	}
	finished := time.Now().UTC()
	files := make([]*result.File, len(targets))
	for i, t := range targets {
		f := spec.newFile(wl, started)
		workload.RecordFallbacks(f.Workload.Scripts, t.fallbacks)
		f.Finished = finished
		f.Target = t.srv.Info
		f.Workload.Scale = t.data.Scale
		f.Steps = run.Steps[i]
		f.Complete = runErr == nil
		if runErr != nil {
			f.Reason = runErr.Error()
			if interrupted {
				f.Reason = "interrupted"
			}
		}
		f.AB = abInfo
		files[i] = f
	}
	return files
}

// runID returns an identifier shared by the files of one A/B run.
func runID(started time.Time) string {
	var b [6]byte
	_, _ = cryptorand.Read(b[:])
	return started.Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}
