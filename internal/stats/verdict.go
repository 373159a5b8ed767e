package stats

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Status says whether a measure passed its bound.
type Status int

const (
	// WithinBounds: the measure passes. A measure without a bound is
	// always within bounds.
	WithinBounds Status = iota + 1
	// OutsideBounds: the change is beyond the bound in the bad direction
	// and significant after Holm's correction. The verdict fails.
	OutsideBounds
)

// String returns "within bounds" or "outside bounds".
func (s Status) String() string {
	switch s {
	case WithinBounds:
		return "within bounds"
	case OutsideBounds:
		return "outside bounds"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Effect says whether a measure changed significantly, and which way.
type Effect int

const (
	// NoChange: not significant after Holm's correction.
	NoChange Effect = iota + 1
	// Improved: significant, in the measure's good direction.
	Improved
	// Regressed: significant, in the measure's bad direction.
	Regressed
	// Negligible: significant, but smaller than the measure's smallest
	// change of interest (Measure.MinChange, or its bound when that is
	// closer to zero).
	Negligible
)

// String returns "no change", "improved", "regressed" or "negligible".
func (e Effect) String() string {
	switch e {
	case NoChange:
		return "no change"
	case Improved:
		return "improved"
	case Regressed:
		return "regressed"
	case Negligible:
		return "negligible"
	}
	return fmt.Sprintf("Effect(%d)", int(e))
}

// Assessment is one measure's comparison judged against its bound.
type Assessment struct {
	Comparison
	// Bound is the bound that applied, nil when none did.
	Bound *Bound
	// PHolm is P after Holm's correction over all measures of the
	// comparison.
	PHolm float64
	// Significant is PHolm ≤ alpha.
	Significant bool
	// Effect is the direction of a significant change; a significant
	// change without a bound is reported here but never fails.
	Effect Effect
	// Status is OutsideBounds when the change is beyond the bound in the
	// bad direction and Significant; WithinBounds otherwise.
	Status Status
	// Uncertain is set when the interval reaches across the bound: a
	// measure within bounds whose interval reaches past the bound in the
	// bad direction, or one outside whose interval reaches back inside.
	// Without a bound it is false.
	Uncertain bool
}

// String formats the assessment as the verdict lists it:
// "tps@c=16 -5.4% ± 0.9%, bound -5%" (without ", bound" when none applied).
func (a Assessment) String() string {
	s := a.Comparison.String()
	if a.Bound != nil {
		s += ", bound " + formatLimit(a.Bound.Percent)
	}
	return s
}

// Verdict is the outcome of one comparison over all its measures.
type Verdict struct {
	// Assessments are the measures, in the order given to Evaluate.
	Assessments []Assessment
	// Alpha is the family-wise significance level used.
	Alpha float64
	// Total counts the measures; Within and Outside split them by
	// Status; Uncertain counts those flagged uncertain (of either
	// status); Improved, Regressed and Negligible count significant
	// changes by Effect.
	Total, Within, Outside, Uncertain, Improved, Regressed, Negligible int
	// Warnings are caveats about the verdict as a whole.
	Warnings []error
}

// Passed reports whether no measure is outside its bounds.
func (v Verdict) Passed() bool { return v.Outside == 0 }

// Headline sums the verdict up in one line, as the pooler's CI bot did:
// "All 24 measures within bounds", or "1 of 24 measures outside bounds:
// tps@c=16 -5.4% ± 0.9%, bound -5%" with every failing measure listed,
// separated by "; ".
func (v Verdict) Headline() string {
	switch {
	case v.Total == 0:
		return "No measures compared"
	case v.Outside == 0 && v.Total == 1:
		return "1 measure within bounds"
	case v.Outside == 0:
		return fmt.Sprintf("All %d measures within bounds", v.Total)
	}
	var items []string
	for _, a := range v.Assessments {
		if a.Status == OutsideBounds {
			items = append(items, a.String())
		}
	}
	noun := "measures"
	if v.Total == 1 {
		noun = "measure"
	}
	return fmt.Sprintf("%d of %d %s outside bounds: %s", v.Outside, v.Total, noun, strings.Join(items, "; "))
}

// Counts returns the tallies in one line: "24 measures: 23 within bounds,
// 1 outside, 2 uncertain; 3 improved, 1 regressed" (and ", 2
// negligible" when some are).
func (v Verdict) Counts() string {
	s := fmt.Sprintf("%d measures: %d within bounds, %d outside, %d uncertain; %d improved, %d regressed",
		v.Total, v.Within, v.Outside, v.Uncertain, v.Improved, v.Regressed)
	if v.Negligible > 0 {
		s += fmt.Sprintf(", %d negligible", v.Negligible)
	}
	return s
}

// Evaluate judges the comparisons of one A/B comparison together. It
// corrects their p-values with Holm's method over all of them (the family is
// every measure given, bounded or not), finds each measure's bound (a bound
// naming its step wins over one naming only its measure), and sets each
// Status, Effect and Uncertain flag as documented on Assessment.
//
// It returns a *BoundError when a bound matches no measure (almost always a
// typo, which would otherwise pass silently) or when its sign is not the bad
// direction of its measure (tps=+3%), and a plain error when a measure has
// no Direction or two comparisons have the same key.
func Evaluate(cs []Comparison, bounds Bounds, opt Options) (Verdict, error) {
	conf, warns := opt.confidence()
	v := Verdict{Alpha: Alpha(conf), Warnings: warns, Total: len(cs)}

	seen := make(map[string]bool)
	used := make([]bool, len(bounds))
	for _, c := range cs {
		m := c.Measure
		if m.Direction != HigherIsBetter && m.Direction != LowerIsBetter {
			return Verdict{}, fmt.Errorf("stats: measure %s has no direction", m.Key())
		}
		if seen[m.Key()] {
			return Verdict{}, fmt.Errorf("stats: measure %s compared twice", m.Key())
		}
		seen[m.Key()] = true
		for i, b := range bounds {
			if b.Measure != m.Name || (b.Step != "" && b.Step != m.Step) {
				continue
			}
			used[i] = true
			mag := strconv.FormatFloat(math.Abs(b.Percent), 'f', -1, 64)
			if m.Direction == HigherIsBetter && b.Percent > 0 {
				return Verdict{}, &BoundError{Spec: b.String(), Msg: fmt.Sprintf("%s is higher-is-better, so its bound is the largest decrease allowed: write %s=-%s%%", m.Name, b.Key(), mag)}
			}
			if m.Direction == LowerIsBetter && b.Percent < 0 {
				return Verdict{}, &BoundError{Spec: b.String(), Msg: fmt.Sprintf("%s is lower-is-better, so its bound is the largest increase allowed: write %s=+%s%%", m.Name, b.Key(), mag)}
			}
		}
	}
	for i, b := range bounds {
		if !used[i] {
			return Verdict{}, &BoundError{Spec: b.String(), Msg: "matches no measure of this comparison; check the measure name and step"}
		}
	}

	ps := make([]float64, len(cs))
	for i, c := range cs {
		ps[i] = c.P
	}
	holm := Holm(ps)
	for i, c := range cs {
		a := Assessment{Comparison: c, PHolm: holm[i], Status: WithinBounds, Effect: NoChange}
		a.Significant = a.PHolm <= v.Alpha
		b, bounded := bounds.For(c.Measure)
		if a.Significant {
			least := c.Measure.MinChange
			if bounded {
				least = math.Min(least, math.Abs(b.Limit()))
			}
			switch {
			case math.Abs(c.Change) < least:
				a.Effect = Negligible
			case c.Measure.better(c.Change):
				a.Effect = Improved
			case c.Change != 0:
				a.Effect = Regressed
			}
		}
		if bounded {
			a.Bound = &b
			a.Status, a.Uncertain = judge(c, b.Limit(), a.Significant)
		}
		v.Assessments = append(v.Assessments, a)
		switch a.Status {
		case WithinBounds:
			v.Within++
		case OutsideBounds:
			v.Outside++
		}
		if a.Uncertain {
			v.Uncertain++
		}
		switch a.Effect {
		case Improved:
			v.Improved++
		case Regressed:
			v.Regressed++
		case Negligible:
			v.Negligible++
		}
	}
	return v, nil
}

// judge applies a bound (a relative limit in the bad direction) to c.
func judge(c Comparison, limit float64, significant bool) (Status, bool) {
	if c.Measure.Direction == LowerIsBetter {
		if c.Change > limit && significant {
			return OutsideBounds, c.Lo < limit
		}
		return WithinBounds, c.Hi > limit
	}
	if c.Change < limit && significant {
		return OutsideBounds, c.Hi > limit
	}
	return WithinBounds, c.Lo < limit
}

// JudgeChange judges one change that another test already found
// significant (a change point in a measure's history, whose P the
// detector made) against the bound in bounds that fits its measure: its
// Effect is the change's direction, its Status OutsideBounds when the
// change is beyond the bound in the bad direction. It makes no correction
// for multiple tests (PHolm is P): the detector's own threshold is the
// test. Bounds are not checked against the measures here: the caller
// does that.
func JudgeChange(c Comparison, bounds Bounds) Assessment {
	a := Assessment{Comparison: c, PHolm: c.P, Significant: true, Status: WithinBounds, Effect: Regressed}
	if c.Measure.better(c.Change) {
		a.Effect = Improved
	} else if c.Change == 0 {
		a.Effect = NoChange
	}
	if b, ok := bounds.For(c.Measure); ok {
		a.Bound = &b
		a.Status, a.Uncertain = judge(c, b.Limit(), true)
	}
	return a
}
