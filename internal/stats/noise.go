package stats

import "math"

// DefaultPower is the power NoiseAA sizes for when NoiseOptions.Power is zero.
const DefaultPower = 0.8

// NoiseOptions configures NoiseAA.
type NoiseOptions struct {
	Options
	// Power is the chance of detecting a change of the given size, in
	// (0, 1); zero means DefaultPower (80 %).
	Power float64
}

// Noise is what an A/A run (the baseline compared with itself) says about
// the noise of a measure.
type Noise struct {
	// Comparison is the paired comparison of the two sides, which should
	// show no significant change.
	Comparison
	// SDLog is the paired standard deviation: the sample standard
	// deviation of the per-round log ratios. NaN with fewer than 2 rounds.
	SDLog float64
	// Rounds2 and Rounds5 are the rounds a paired A/B run needs to detect
	// a 2 % and a 5 % change (see RoundsToDetect); 0 when unknown.
	Rounds2, Rounds5 int
	// Power is the power they were sized for.
	Power float64
	// Layouts counts the cluster layouts of an A/A run whose clusters were
	// re-created every PerLayout rounds (NoiseLayouts); 0 otherwise, and
	// then the fields below are unset. SDLog is then the noise within a
	// layout, and Rounds2 and Rounds5 what an A/B run on one cluster needs.
	Layouts, PerLayout int
	// BetweenSD is the spread of the A/A difference between re-created
	// cluster pairs (LayoutDetail.BetweenSD); LayoutSD the standard
	// deviation of the per-layout mean log ratios, both parts together.
	BetweenSD, LayoutSD float64
	// Layouts2 and Layouts5 are the layouts an A/B run on separate
	// clusters re-created every PerLayout rounds needs to detect a 2 % and
	// a 5 % change, the layout spread included; it runs PerLayout times as
	// many rounds. 0 when unknown.
	Layouts2, Layouts5 int
}

// NoiseAA measures the noise of a measure from an A/A run, where base and
// cand are per-round values of the same target in interleaved rounds, and
// sizes the rounds needed to detect a 2 % and a 5 % change at the chosen
// confidence and power. An A/A difference that is itself significant gets
// an AANotNull warning: the two sides are not equivalent, or the rounds
// drift.
func NoiseAA(m Measure, base, cand []float64, opt NoiseOptions) Noise {
	c := ComparePaired(m, base, cand, opt.Options)
	n := Noise{Comparison: c, SDLog: math.NaN(), Power: opt.Power}
	if !(n.Power > 0 && n.Power < 1) {
		if n.Power != 0 {
			n.Warnings = append(n.Warnings, warnf(BadOption, "power %v is not between 0 and 1; using %v", n.Power, DefaultPower))
		}
		n.Power = DefaultPower
	}
	if c.PairedDetail == nil || c.N1 < 2 {
		return n
	}
	n.SDLog = c.PairedDetail.SDLog
	if c.N1 < 5 {
		n.Warnings = append(n.Warnings, warnf(TooFew, "%s: a standard deviation from %d rounds is itself rough; the round counts are a guide", m.Key(), c.N1))
	}
	if c.P <= 1-c.Confidence {
		n.Warnings = append(n.Warnings, warnf(AANotNull, "%s: the A/A run shows a significant change %s (p=%.3g): the two sides differ or the rounds drift", m.Key(), FormatChange(c.Change, c.Lo, c.Hi), c.P))
	}
	n.Rounds2 = RoundsToDetect(n.SDLog, 0.02, c.Confidence, n.Power)
	n.Rounds5 = RoundsToDetect(n.SDLog, 0.05, c.Confidence, n.Power)
	return n
}

// RoundsToDetect returns the number of rounds a paired A/B run needs for
// its two-sided t-test on log ratios, at the given confidence (alpha = 1 −
// confidence), to detect a relative change with the given power, when the
// per-round log ratios have standard deviation sdLog. It is the smallest
// n ≥ 2 with
//
//	n ≥ ((t(1−alpha/2, n−1) + t(power, n−1)) · sdLog / δ)²,  δ = |ln(1+change)|
//
// the usual normal-theory sample size with t quantiles in place of normal
// ones (found by stepping up from the normal-quantile answer). It is within
// a round of the exact noncentral-t answer. Pass +0.02 for "a 2 % change":
// ln 1.02 is smaller than |ln 0.98|, so it is the harder of the two. It
// returns 0 for a zero change or an invalid argument, and 2 when sdLog is 0.
func RoundsToDetect(sdLog, change, confidence, power float64) int {
	delta := math.Abs(math.Log1p(change))
	if !(delta > 0) || math.IsInf(delta, 0) || !(sdLog >= 0) || math.IsInf(sdLog, 0) ||
		!(confidence > 0 && confidence < 1) || !(power > 0 && power < 1) {
		return 0
	}
	if sdLog == 0 {
		return 2
	}
	alpha := Alpha(confidence)
	k := sdLog / delta
	z := zQuantile(1-alpha/2) + zQuantile(power)
	n0 := z * z * k * k
	if n0 > 1e7 {
		return int(math.Ceil(n0)) // t and normal quantiles agree here
	}
	need := func(n int) float64 {
		df := float64(n - 1)
		t := tQuantile(1-alpha/2, df) + tQuantile(power, df)
		return t * t * k * k
	}
	// n − need(n) grows with n (need falls as the t quantiles do):
	// gallop up from the normal-quantile answer, then bisect.
	lo := max(2, int(math.Ceil(n0)))
	if float64(lo) >= need(lo) {
		return lo
	}
	hi := lo + 1
	for float64(hi) < need(hi) {
		lo, hi = hi, hi+2*(hi-lo)
	}
	for hi-lo > 1 { // need(lo) > lo, need(hi) ≤ hi
		mid := (lo + hi) / 2
		if float64(mid) < need(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}
