package ab

import (
	cryptorand "crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/pgscale/pgscale/internal/experiment"
	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/result"
)

// files builds one result file per target from what the run did on the
// given layouts, incomplete with runErr's reason (interrupted: said so).
func (rs *rounds) files(layouts []result.Layout, runErr error, interrupted bool) []*result.File {
	spec, run := rs.spec, rs.run
	targets := rs.r.Targets()
	abInfo := &result.AB{Run: runID(rs.started), Baseline: targets[0].Name(), Rounds: spec.Rounds,
		RoundsDone: run.RoundsDone, OrderSeed: spec.OrderSeed, Calibration: spec.Calibrate,
		SliceS: spec.Slice.Seconds(), SliceSettleS: spec.Settle.Seconds(), Bounds: spec.Bounds.Strings(), Confidence: spec.Confidence}
	abInfo.Reshuffle = rs.reshuffle
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
		abInfo.Targets = append(abInfo.Targets, result.ABTarget{Name: t.Name(), Spec: spec.Targets[i].String(), File: t.Name() + ".json"})
	}
	for _, order := range run.Order {
		names := make([]string, len(order))
		for i, ti := range order {
			names[i] = targets[ti].Name()
		}
		abInfo.Order = append(abInfo.Order, names)
	}
	finished := time.Now().UTC()
	files := make([]*result.File, len(targets))
	for i := range targets {
		f := rs.r.File(i, rs.started)
		f.Finished = finished
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

// withRoundTimes is the layouts made with each one's warm-up round and
// rounds timed, from what the run did.
func (rs *rounds) withRoundTimes() []result.Layout {
	run := rs.run
	out := make([]result.Layout, len(rs.layouts))
	for i, l := range rs.layouts {
		out[i] = l
		if l.Times == nil {
			continue
		}
		times := *l.Times
		times.WarmupS = run.Warmups[l.Layout].Seconds()
		times.RoundsS = 0
		for r, n := range run.Layouts {
			if n == l.Layout && r < len(run.RoundTimes) {
				times.RoundsS += run.RoundTimes[r].Seconds()
			}
		}
		out[i].Times = &times
	}
	return out
}

// timesNotice says what a counted run's layouts took, part by part.
func timesNotice(c *experiment.Common, layouts []result.Layout) {
	var sum result.LayoutTimes
	var all float64
	n := 0
	for _, l := range layouts {
		if l.Times == nil {
			continue
		}
		n++
		t := l.Times
		sum.ClustersS += t.ClustersS
		sum.DataS += t.DataS
		sum.CopyS += t.CopyS
		sum.ValgrindS += t.ValgrindS
		sum.ProbesS += t.ProbesS
		sum.WarmupS += t.WarmupS
		sum.RoundsS += t.RoundsS
		all += t.ClustersS + t.DataS + t.CopyS + t.ValgrindS + t.ProbesS + t.WarmupS + t.RoundsS
	}
	if n == 0 {
		return
	}
	parts := []string{}
	for _, p := range []struct {
		what string
		s    float64
	}{{"starting the clusters", sum.ClustersS}, {"the data and set-up", sum.DataS}, {"copying the data", sum.CopyS},
		{"starting under Valgrind", sum.ValgrindS}, {"connecting the probes", sum.ProbesS}, {"warm-up rounds", sum.WarmupS},
		{"the rounds", sum.RoundsS}} {
		if p.s > 0 {
			parts = append(parts, fmt.Sprintf("%s %v", p.what, experiment.Brief(secs(p.s))))
		}
	}
	c.Notice(fmt.Sprintf("counting instructions: %s took %v: %s", prose.Count(n, "cluster layout"), experiment.Brief(secs(all)), strings.Join(parts, ", ")))
}

// secs is seconds as a duration, rounded for a line of text.
func secs(s float64) time.Duration {
	return time.Duration(s * float64(time.Second)).Round(100 * time.Millisecond)
}
