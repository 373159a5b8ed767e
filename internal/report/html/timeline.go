package html

import (
	"fmt"
	"math"
	"time"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/result"
)

// gapTolerance is how much later than the end of an interval the next may
// start and still continue the line: the collector's ticks drift by
// milliseconds, a reconnect or a stalled collector by far more.
const gapTolerance = 0.05

// points turns a step's intervals into contiguous segments on a clock
// shifted by offset seconds, and says where the gaps between them are.
func points(st result.Step, offset float64) (segs [][]tlPoint, gaps []span, failed int64) {
	var cur []tlPoint
	end := math.NaN()
	for _, iv := range st.Intervals {
		if !math.IsNaN(end) && iv.StartS > end+gapTolerance+0.25*iv.LengthS {
			segs = append(segs, cur)
			cur = nil
			gaps = append(gaps, span{From: num(end + offset), To: num(iv.StartS + offset)})
		}
		cur = append(cur, tlPoint{T: num(iv.StartS + offset), Len: num(iv.LengthS), TPS: num(iv.TPS),
			MeanMs: num(iv.Latency.MeanMs), P99Ms: num(iv.Latency.P99Ms), Failed: iv.Failed})
		failed += iv.Failed
		end = iv.StartS + iv.LengthS
	}
	if len(cur) > 0 {
		segs = append(segs, cur)
	}
	return segs, gaps, failed
}

// stepTimeline is one sweep step's series, on the step's own clock.
func stepTimeline(fi, si int, label string, f *result.File) timeline {
	st := f.Steps[si]
	t := timeline{ID: fmt.Sprintf("timeline-%d-%d", fi, si), Clock: "step",
		Title: fmt.Sprintf("%s, step %d: %s", label, si+1, clientsWord(st.Clients))}
	segs, gaps, failed := points(st, 0)
	t.Series = []tlSeries{{Label: label, Segments: segs}}
	t.Gaps, t.GapSpans, t.Failed = len(gaps), gaps, failed
	if !st.Complete {
		t.Incomplete = append(t.Incomplete, st.Reason)
		if plan := f.Workload.DurationS; plan > st.ElapsedS {
			t.NotRun = &span{From: num(st.ElapsedS), To: num(plan)}
		}
	}
	for _, d := range st.Disturbances {
		t.Windows = append(t.Windows, window{Name: d.Name, Spec: d.Spec, From: num(d.StartS), To: num(d.EndS)})
	}
	return t
}

// abTimelines are an A/B run's series, one timeline per client count: each
// target's intervals of every round on the run's clock, so drift across
// rounds and the interleaving both show.
func abTimelines(gi int, g group, files []compare.FileAnalysis, labels []string) []timeline {
	var t0 time.Time
	var cs []int
	for _, fi := range g.files {
		for _, st := range files[fi].File.Steps {
			if t0.IsZero() || st.Started.Before(t0) {
				t0 = st.Started
			}
			cs = append(cs, st.Clients)
		}
	}
	var out []timeline
	for _, c := range uniqueSorted(cs) {
		t := timeline{ID: fmt.Sprintf("timeline-ab%d-c%d", gi, c), Clock: "run",
			Title: fmt.Sprintf("%s: %s, every round", panelName(g, files), clientsWord(c))}
		roundStart := map[int]float64{}
		for _, fi := range g.files {
			ser := tlSeries{Label: labels[fi]}
			for _, st := range files[fi].File.Steps {
				if st.Clients != c {
					continue
				}
				off := st.Started.Sub(t0).Seconds()
				if at, ok := roundStart[st.Round]; !ok || off < at {
					roundStart[st.Round] = off
				}
				segs, gaps, failed := points(st, off)
				// Slices of one step interleave with the other targets':
				// the step's gaps between its own slices are the design.
				if g.ab.SliceS > 0 {
					segs, gaps = joinSegments(segs), nil
				}
				ser.Segments = append(ser.Segments, segs...)
				t.Gaps += len(gaps)
				t.GapSpans = append(t.GapSpans, gaps...)
				t.Failed += failed
				if !st.Complete {
					t.Incomplete = append(t.Incomplete, fmt.Sprintf("%s round %d: %s", labels[fi], st.Round, st.Reason))
				}
				for _, d := range st.Disturbances {
					t.Windows = append(t.Windows, window{Name: d.Name, Spec: d.Spec, From: num(d.StartS + off), To: num(d.EndS + off), Target: labels[fi]})
				}
			}
			t.Series = append(t.Series, ser)
		}
		var rounds []int
		for r := range roundStart {
			rounds = append(rounds, r)
		}
		for _, r := range uniqueSorted(rounds) {
			t.Rounds = append(t.Rounds, mark{At: num(roundStart[r]), Label: fmt.Sprintf("round %d", r)})
		}
		out = append(out, t)
	}
	return out
}

func joinSegments(segs [][]tlPoint) [][]tlPoint {
	if len(segs) <= 1 {
		return segs
	}
	var all []tlPoint
	for _, s := range segs {
		all = append(all, s...)
	}
	return [][]tlPoint{all}
}
