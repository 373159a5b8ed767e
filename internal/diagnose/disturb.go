package diagnose

import (
	"errors"
	"fmt"
	"math"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pgscale/pgscale/internal/metrics"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
)

// EffectOptions configures the before/during/after summary of disturbance
// windows.
type EffectOptions struct {
	// Settle is left out at the start of a quiet stretch before a window:
	// the workload's warm-up after the step starts, or its recovery after
	// an earlier window. Zero means DefaultSettle.
	Settle time.Duration
	// Confidence is the level of the interval on the change; zero means
	// stats.DefaultConfidence.
	Confidence float64
}

// DefaultSettle is the warm-up left out of a before stretch: on a fresh
// step the first seconds run with cold plan and catalog caches and
// connections still settling.
const DefaultSettle = 2 * time.Second

// EffectMethod describes, in the result file, how an Effect is computed.
const EffectMethod = "Phases are whole intervals of the step's series: before is the stretch just before the window in which " +
	"no other window runs, its first %s left out (warm-up, or recovery from an earlier window); during is the window; after is " +
	"the stretch after it until another window or the step's end. tps and latency are exact over each phase. The change is " +
	"during/before - 1 of the means of the per-interval tps and mean latency (and after/before - 1 of the tps: the recovery), with a %g%% confidence interval from " +
	"non-overlapping batch means (batches of ceil(sqrt(n)) intervals, n the shorter side) and a Welch t interval on the log " +
	"of the ratio (stats.CompareWindows)."

// DisturbanceEffects computes every disturbance window's Effect on the
// workload from the step's per-interval series. It reads only what the
// result file holds, so a report can recompute it later.
func DisturbanceEffects(step *result.Step, opt EffectOptions) {
	settle := opt.Settle
	if settle <= 0 {
		settle = DefaultSettle
	}
	conf := opt.Confidence
	if conf == 0 {
		conf = stats.DefaultConfidence
	}
	for i := range step.Disturbances {
		d := &step.Disturbances[i]
		if d.RanS <= 0 {
			d.Effect = nil
			continue
		}
		d.Effect = effect(step, i, settle, conf)
	}
}

// eps absorbs float rounding when matching interval edges to window edges.
const eps = 1e-6

func effect(step *result.Step, i int, settle time.Duration, conf float64) *result.Effect {
	d := step.Disturbances[i]
	stepEnd := step.ElapsedS
	e := &result.Effect{Method: fmt.Sprintf(EffectMethod, settle, 100*conf)}

	// The quiet stretches around the window: no other window running.
	lo, hi := 0.0, stepEnd
	for j, o := range step.Disturbances {
		if j == i || o.RanS <= 0 {
			continue
		}
		if o.StartS < d.EndS && d.StartS < o.EndS {
			e.Warnings = append(e.Warnings, fmt.Sprintf("the window overlaps %s; its during phase shows both", o.Spec))
		}
		if o.StartS < d.StartS {
			lo = math.Max(lo, math.Min(o.EndS, d.StartS))
		}
		if o.EndS > d.EndS {
			hi = math.Min(hi, math.Max(o.StartS, d.EndS))
		}
	}
	beforeFrom := lo + settle.Seconds()
	before := phaseIntervals(step.Intervals, beforeFrom, d.StartS)
	during := phaseIntervals(step.Intervals, d.StartS, d.EndS)
	after := phaseIntervals(step.Intervals, d.EndS, hi)
	e.Before, e.During, e.After = summarize(before), summarize(during), summarize(after)
	if e.Before == nil {
		e.Warnings = append(e.Warnings, fmt.Sprintf("no quiet whole interval before the window (after leaving out %s of warm-up); no change computed", settle))
	}
	if e.Before == nil {
		return e
	}
	opt := stats.WindowOptions{Options: stats.Options{Confidence: conf}}
	tpsB, latB := samples(before)
	key := fmt.Sprintf("c=%d %s", step.Clients, d.Spec)
	var warn []error
	if e.During != nil {
		tpsD, latD := samples(during)
		e.TPS, warn = change(stats.CompareWindows(stats.Measure{Name: "tps", Step: key, Unit: "tx/s", Direction: stats.HigherIsBetter}, tpsB, tpsD, opt), before)
		e.Warnings = append(e.Warnings, errStrings(warn)...)
		e.Latency, warn = change(stats.CompareWindows(stats.Measure{Name: "latency", Step: key, Unit: "ms", Direction: stats.LowerIsBetter}, latB, latD, opt), before)
		e.Warnings = append(e.Warnings, errStrings(warn)...)
	}
	if e.After != nil {
		tpsA, _ := samples(after)
		e.AfterTPS, warn = change(stats.CompareWindows(stats.Measure{Name: "tps", Step: key + " after", Unit: "tx/s", Direction: stats.HigherIsBetter}, tpsB, tpsA, opt), before)
		for _, w := range warn {
			// Too few intervals after the window shows as no interval;
			// its wording ("during") is the main comparison's.
			var sw *stats.Warning
			if !errors.As(w, &sw) || sw.Kind != stats.TooFew {
				e.Warnings = append(e.Warnings, w.Error())
			}
		}
	}
	return e
}

// phaseIntervals returns the intervals lying wholly in [from, to). An
// interval's edges are where the collector really swapped the recorders out,
// a little after the planned tick when it was short of CPU; up to a tenth
// of the interval past an edge still counts as inside.
func phaseIntervals(ivs []result.Interval, from, to float64) []result.Interval {
	var out []result.Interval
	for _, iv := range ivs {
		tol := max(eps, iv.LengthS/10)
		if iv.LengthS > 0 && iv.StartS >= from-tol && iv.StartS+iv.LengthS <= to+tol {
			out = append(out, iv)
		}
	}
	return out
}

// summarize is a phase's figures; nil for no interval.
func summarize(ivs []result.Interval) *result.Phase {
	if len(ivs) == 0 {
		return nil
	}
	last := ivs[len(ivs)-1]
	p := &result.Phase{FromS: ivs[0].StartS, ToS: last.StartS + last.LengthS, Intervals: len(ivs)}
	var secs, latSum float64
	var h *hdr.Histogram
	for _, iv := range ivs {
		secs += iv.LengthS
		p.Transactions += iv.Transactions
		p.Failed += iv.Failed
		latSum += iv.Latency.MeanMs * float64(iv.Transactions)
		if ih, err := metrics.DecodeHistogram(iv.Histogram); err == nil && ih.TotalCount() > 0 {
			if h == nil {
				h = metrics.NewHistogram()
			}
			h.Merge(ih)
		}
	}
	if secs > 0 {
		p.TPS = float64(p.Transactions) / secs
	}
	if p.Transactions > 0 {
		p.LatMeanMs = latSum / float64(p.Transactions)
	}
	if h != nil {
		p.LatP99Ms = float64(h.ValueAtQuantile(99)) / 1000
	}
	return p
}

// samples returns the per-interval tps and mean latency; an interval with
// no transaction has no latency (NaN, left out by CompareWindows with a
// warning).
func samples(ivs []result.Interval) (tps, lat []float64) {
	for _, iv := range ivs {
		tps = append(tps, iv.TPS)
		if iv.Transactions > 0 {
			lat = append(lat, iv.Latency.MeanMs)
		} else {
			lat = append(lat, math.NaN())
		}
	}
	return tps, lat
}

// change turns a comparison into the result file's form (no NaN or
// infinity in JSON); nil when nothing could be compared.
func change(c stats.Comparison, before []result.Interval) (*result.WindowChange, []error) {
	if math.IsNaN(c.Change) || math.IsInf(c.Change, 0) {
		return nil, c.Warnings
	}
	w := &result.WindowChange{Base: c.Base, Cand: c.Cand, Change: c.Change, Confidence: c.Confidence}
	finite := func(x float64) *float64 {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		return &x
	}
	w.Lo, w.Hi, w.P = finite(c.Lo), finite(c.Hi), finite(c.P)
	if d := c.WindowDetail; d != nil {
		// A batch's length is its intervals' mean length: the first
		// alone may be short (a step's edge, a collector come late).
		var secs float64
		for _, iv := range before {
			secs += iv.LengthS
		}
		w.BatchS = float64(d.BatchLen) * secs / float64(len(before))
		w.BatchesBefore, w.BatchesDuring = d.BatchesBefore, d.BatchesDuring
	}
	return w, c.Warnings
}

func errStrings(errs []error) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}
