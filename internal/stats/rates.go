package stats

import "math"

// RatesDiffer is the test of two Poisson counts at 95 %: are x1 events
// over an exposure of e1 and x2 over e2 (profile samples over the
// transactions they were taken in) more different in rate than counting
// alone makes them? The normal approximation of the difference of the
// rates, each with its variance x/e²; false when neither side has events
// or an exposure is not positive.
func RatesDiffer(x1, e1, x2, e2 float64) bool {
	if !(e1 > 0) || !(e2 > 0) || x1+x2 <= 0 {
		return false
	}
	r1, r2 := x1/e1, x2/e2
	// A side with no events has a rate known only to be under about one
	// event over its exposure: its variance as of one event, so that a
	// function gone from one side is not certain from a handful of
	// samples on the other.
	v1, v2 := math.Max(x1, 1)/(e1*e1), math.Max(x2, 1)/(e2*e2)
	return math.Abs(r1-r2)/math.Sqrt(v1+v2) >= 1.96
}
