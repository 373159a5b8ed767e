package stats

import "math"

// Sequential says that the run looks at its comparison after every round
// and stops as soon as every bounded measure is decided (pgscale's
// --rounds auto:MAX). Looking many times and stopping on what one sees
// would make a test at alpha fail far more often than alpha, so every
// look spends a part of alpha (Spend) and decides at that part: the
// chance of a false failure at any look is at most the sum of the parts,
// which is alpha (the union bound; docs/statistics.md, "Rounds until
// decided").
type Sequential struct {
	// Look is the number of units compared at this look: rounds, or
	// cluster layouts for a run whose clusters are re-created (each look
	// after a round then counts the layouts begun).
	Look int
	// Max is the most units the run may take; it fixes the spending.
	Max int
	// Interim marks a look that only needs the outcomes (a runner
	// deciding whether to go on): what would decide an inconclusive
	// measure (Assessment.RoundsNeeded) is not worked out.
	Interim bool
}

// FirstLook is the first look that spends alpha: with fewer than 3 units
// a t interval has under 2 degrees of freedom, too wide to decide
// anything at a spent level, so those looks decide nothing.
const FirstLook = 3

// Spend returns the part of alpha this look may decide at: the
// Lan–DeMets spending function of Pocock's type, α·ln(1 + (e − 1)·t),
// over the looks FirstLook..Max with t the share of those looks done,
// differenced between this look and the one before (Lan & DeMets 1983,
// "Discrete sequential boundaries for clinical trials", Biometrika 70(3),
// 659–663; the Pocock-type function is theirs too). Pocock's type spends
// evenly, so that a clear change is decided early; the parts of every
// look add up to alpha. 0 before FirstLook or past Max.
func (s Sequential) Spend(alpha float64) float64 {
	if s.Max < FirstLook || s.Look < FirstLook || s.Look > s.Max {
		return 0
	}
	k := float64(s.Max - FirstLook + 1)
	f := func(i int) float64 {
		t := float64(i-FirstLook+1) / k
		return alpha * math.Log1p((math.E-1)*t)
	}
	return f(s.Look) - f(s.Look-1)
}

// Decided reports whether every bounded measure of the verdict is decided
// (passed or failed): a run that rounds until decided stops then.
func (v Verdict) Decided() bool {
	return v.Bounded > 0 && v.Inconclusive == 0
}
