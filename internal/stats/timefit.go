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
	// (a negative fit is no time-driven work seen: 0); Slope the fit as
	// it came out, SE its standard error. PerEvent are each group's work
	// per event under PerSecond.
	PerSecond, Slope, SE float64
	PerEvent             []float64
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
	f.Slope = b
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

// Clear reports whether the fit found time-driven work beyond its own
// uncertainty: a slope above zero by at least three standard errors.
func (f TimeFit) Clear() bool {
	return f.Determined && f.Slope > 0 && f.Slope >= 3*f.SE
}

// CombineTimeFits is one rate per second from fits of the same program's
// timers made apart (at several client counts): the mean of their slopes
// weighted by the inverse of their variances, with its standard error;
// ok is false when no fit was determined. A fit whose windows' lengths
// told little (at 4 clients an event loop's turns per transaction move
// with how the clients' packets bunch, which swamps a slope) then counts
// for little beside one that told much.
func CombineTimeFits(fits []TimeFit) (rate, se float64, ok bool) {
	var w, sum float64
	for _, f := range fits {
		if !f.Determined {
			continue
		}
		v := math.Max(f.SE*f.SE, 1e-12*math.Max(1, f.Slope*f.Slope))
		w += 1 / v
		sum += f.Slope / v
	}
	if w == 0 {
		return 0, 0, false
	}
	return math.Max(0, sum/w), math.Sqrt(1 / w), true
}

// WithRate is the fit with the rate per second given (CombineTimeFits')
// in place of its own.
func (f TimeFit) WithRate(rate, se float64) TimeFit {
	f.PerSecond, f.Slope, f.SE, f.Determined = math.Max(0, rate), rate, se, true
	return f
}
