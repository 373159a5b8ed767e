package stats

import "math"

// TimePoint is one measured window of a program whose work has a part per
// event and a part per second of wall time: Count is what it did (its
// instructions), Events what it served (transactions), Seconds how long
// the window lasted.
type TimePoint struct {
	Count, Events, Seconds float64
}

// TimeFit splits counts into work per event and work per second of wall
// time: Count = PerEvent[g] · Events + PerSecond · Seconds, one PerEvent
// per group of points (a target) and one PerSecond for all, by least
// squares (the within-groups estimator of an analysis of covariance, no
// intercept). A program's timers and maintenance run to the clock, the
// same in every build of it; what each build does per event is what the
// comparison wants.
type TimeFit struct {
	// PerSecond is the work per second of wall time, never below zero
	// (a negative fit is no time-driven work seen: 0); SE its standard
	// error. PerEvent are each group's work per event under it.
	PerSecond, SE float64
	PerEvent      []float64
	// Points are the points fitted, DF the residual degrees of freedom.
	Points, DF int
	// Determined says the windows' durations varied enough, within a
	// group, to tell time from events; without it PerSecond is 0.
	Determined bool
}

// FitTime fits groups of points (TimeFit). A group with no point, or
// points without events or seconds, adds nothing.
func FitTime(groups [][]TimePoint) TimeFit {
	f := TimeFit{PerEvent: make([]float64, len(groups))}
	type sums struct{ ee, es, ec, ss, sc float64 }
	g := make([]sums, len(groups))
	k := 0
	for i, ps := range groups {
		used := false
		for _, p := range ps {
			if !(p.Events > 0) || !(p.Seconds > 0) || math.IsNaN(p.Count) {
				continue
			}
			s := &g[i]
			s.ee += p.Events * p.Events
			s.es += p.Events * p.Seconds
			s.ec += p.Events * p.Count
			s.ss += p.Seconds * p.Seconds
			s.sc += p.Seconds * p.Count
			f.Points++
			used = true
		}
		if used {
			k++
		}
	}
	var num, den, ss float64
	for _, s := range g {
		if s.ee > 0 {
			num += s.sc - s.ec*s.es/s.ee
			den += s.ss - s.es*s.es/s.ee
			ss += s.ss
		}
	}
	f.DF = f.Points - k - 1
	// The seconds left once each group's events explain what they can:
	// a millionth of their square is rounding, not variation.
	f.Determined = f.DF >= 1 && den > 1e-6*ss
	b := 0.0
	if f.Determined {
		b = num / den
	}
	for i, s := range g {
		if s.ee > 0 {
			f.PerEvent[i] = (s.ec - b*s.es) / s.ee
		}
	}
	if f.Determined {
		var rss float64
		for i, ps := range groups {
			for _, p := range ps {
				if p.Events > 0 && p.Seconds > 0 && !math.IsNaN(p.Count) {
					r := p.Count - f.PerEvent[i]*p.Events - b*p.Seconds
					rss += r * r
				}
			}
		}
		f.SE = math.Sqrt(rss / float64(f.DF) / den)
	}
	f.PerSecond = math.Max(0, b)
	if b < 0 {
		for i, s := range g {
			if s.ee > 0 {
				f.PerEvent[i] = s.ec / s.ee
			}
		}
	}
	return f
}

// PerEventPart is a point's count per event with the fit's work per
// second of wall time taken off: the part that serves the events.
func (f TimeFit) PerEventPart(p TimePoint) float64 {
	if !(p.Events > 0) {
		return math.NaN()
	}
	return (p.Count - f.PerSecond*p.Seconds) / p.Events
}
