package stats

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

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
	// Significant is PHolm ≤ alpha: the measure changed. Effect and the
	// differential diagnosis read it; the outcome does not.
	Significant bool
	// Effect is the direction of a significant change; a significant
	// change without a bound is reported here but decides nothing.
	Effect Effect
	// Outcome is the bound's outcome (NoBound without one): Pass when
	// the interval at the decision's level lies wholly on the good side
	// of the bound, Fail when FailRule holds, Inconclusive otherwise.
	Outcome Outcome
	// DecisionConfidence is the level the outcome was decided at: the
	// comparison's own for one family judged once; higher for a suite's
	// cell (its share of alpha) and for a look of a run that rounds until
	// decided (the part of alpha the look spends). DecisionLo and
	// DecisionHi bound the change's interval at that level. Unset
	// without a bound.
	DecisionConfidence, DecisionLo, DecisionHi float64
	// PBound is the p-value of the test that the change is past the
	// bound (the smallest alpha at which the interval, the
	// distribution-free part included, lies wholly past it), and
	// PBoundHolm the same after Holm's correction over the bounded
	// measures of the family; both 1 when the change is not past the
	// bound. Unset without a bound.
	PBound, PBoundHolm float64
	// Reason says, for an inconclusive outcome, why it is not decided.
	Reason string
	// Spread is the spread of the per-round (or per-layout) log ratios
	// the interval rests on, NaN when unknown; SpreadUnit says "round"
	// or "layout".
	Spread     float64
	SpreadUnit string
	// RoundsNeeded is, for an inconclusive outcome, how many rounds (or
	// layouts, SpreadUnit) at this spread would decide it if the change
	// is what was measured: 0 when unknown, -1 when the change is too
	// close to its bound for any number at this spread.
	RoundsNeeded int
	// Instead, when set by the caller, names another way to decide an
	// inconclusive measure, in the caller's words ("a counted measure
	// (--count instructions: instr/txn)"), which Decide adds.
	Instead string
	// Soft is set when the bound applies only where this runner's spread
	// can decide it: a bound written "... if decidable", or a bound for
	// every step on a step where the measure depends on timing
	// (Measure.Timing).
	Soft bool
	// Undecidable is set for a Soft bound the measured spread cannot
	// decide in the units (rounds or layouts) the run may take, Units:
	// the smallest change those units can tell from none at this spread,
	// Detectable, is not below the bound. Its Outcome is then NoBound: it
	// is reported and decides nothing, and Reason says why.
	Undecidable bool
	Units       int
	Detectable  float64
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

// EffectText words the effect as a table shows it beside the change:
// "improved", "regressed", "negligible", "no change", or for a change whose
// interval excludes zero that Holm's correction found not significant
// "not significant after Holm", so that the words never contradict the
// interval beside them.
func (a Assessment) EffectText() string {
	if a.Effect == NoChange && !math.IsNaN(a.Change) && (a.Lo > 0 || a.Hi < 0) {
		return "not significant after Holm"
	}
	return a.Effect.String()
}

// StatusText is the assessment's status in a table: its outcome against
// its bound with the effect when it changed ("pass, improved",
// "inconclusive"), or its effect alone without a bound.
func (a Assessment) StatusText() string {
	if a.Bound == nil {
		return a.EffectText()
	}
	s := a.Outcome.String()
	if a.Undecidable {
		s = "beyond this runner"
	}
	if a.Effect != NoChange {
		s += ", " + a.EffectText()
	}
	return s
}

// Decide says what would decide an inconclusive measure, in a phrase:
// "about 40 rounds would decide it at this spread, ±18.0% per round";
// "" when nothing can be said.
func (a Assessment) Decide() string {
	spread := "this spread"
	if !math.IsNaN(a.Spread) && a.Spread > 0 {
		spread = fmt.Sprintf("this spread, ±%.1f%% per %s", 100*a.Spread, a.SpreadUnit)
	}
	var s string
	switch {
	case a.Outcome != Inconclusive:
		return ""
	case a.RoundsNeeded > 0:
		s = fmt.Sprintf("about %d %ss would decide it at %s", a.RoundsNeeded, a.SpreadUnit, spread)
	case a.RoundsNeeded < 0:
		s = "the change is about at its bound: no number of " + a.SpreadUnit + "s would decide it at " + spread
	}
	switch {
	case a.Instead == "":
	case s == "":
		s = a.Instead + " would decide it"
	default:
		s += ", or " + a.Instead
	}
	return s
}

// OutcomeWhy says in a phrase why a bounded measure got its outcome: for
// a pass "its 95% interval (-2.1% … +1.3%) lies wholly on the good side
// of its bound -5%", for a failure the test against the bound and the
// interval past it, for an inconclusive one its Reason and what would
// decide it; "" without a bound.
func (a Assessment) OutcomeWhy() string {
	if a.Bound == nil {
		return ""
	}
	if a.Undecidable {
		return a.Reason
	}
	pct := FormatPercent
	if a.DecisionHi-a.DecisionLo < 2*fineBelow {
		pct = func(x float64) string { return fmt.Sprintf("%+.3f%%", 100*x) }
	}
	iv := fmt.Sprintf("%s interval (%s … %s)", levelText(a.DecisionConfidence), pct(a.DecisionLo), pct(a.DecisionHi))
	switch a.Outcome {
	case Pass:
		return fmt.Sprintf("its %s lies wholly on the good side of its bound %s", iv, formatLimit(a.Bound.Percent))
	case Fail:
		s := fmt.Sprintf("past its bound %s: the test against it gives p %.2g (%.2g after Holm over the bounded measures) and its %s lies wholly past it",
			formatLimit(a.Bound.Percent), a.PBound, a.PBoundHolm, iv)
		if a.PairedDetail != nil && !a.Measure.Counted {
			s += ", the signed-rank test's part included"
		}
		return s
	case Inconclusive:
		s := a.Reason
		if d := a.Decide(); d != "" {
			s += "; " + d
		}
		return s
	}
	return ""
}

// Verdict is the outcome of one comparison over all its measures.
type Verdict struct {
	// Assessments are the measures, in the order given to Evaluate.
	Assessments []Assessment
	// Alpha is the family-wise significance level used.
	Alpha float64
	// Outcome is the worst outcome of the bounded measures: NoBound when
	// none had a bound.
	Outcome Outcome
	// Total counts the measures and Bounded those with a bound, which
	// Passed, Failed and Inconclusive split by outcome; Improved,
	// Regressed and Negligible count significant changes by Effect.
	Total, Bounded, Passed, Failed, Inconclusive, Improved, Regressed, Negligible int
	// Undecidable counts the measures whose bound applies only where the
	// runner's spread can decide it and whose spread could not
	// (Assessment.Undecidable): not in Bounded. A verdict whose every
	// bound was such is inconclusive: nothing was decided.
	Undecidable int
	// Sequential is the look the outcomes were decided at, for a run that
	// rounds until decided; nil otherwise.
	Sequential *Sequential
	// Warnings are caveats about the verdict as a whole.
	Warnings []error
}

// Headline sums the verdict up in one line, as the pooler's CI bot did:
// "passed: all 6 bounded measures within their bounds", "failed: 1 of 6
// bounded measures past its bound: tps@c=16 -5.4% ± 0.9%, bound -5%",
// "inconclusive: 1 of 6 bounded measures undecided: ..." (the failed and
// the inconclusive listed, up to six of each), or without bounds "no
// bounds given: 2 of 20 measures changed: ..." — never "within bounds"
// when nothing was bounded. It is Lead with the measures of Listed in it.
func (v Verdict) Headline() string {
	p := v.headline()
	s := p.lead
	if len(p.items) > 0 {
		s += ": " + strings.Join(p.items, "; ")
	}
	if p.more != "" {
		s += "; " + p.more + ": " + strings.Join(p.moreItems, "; ")
	}
	return s
}

// Lead is the headline without the measures it lists, short enough for a
// title: "failed: 3 of 6 bounded measures past their bounds; 3
// inconclusive".
func (v Verdict) Lead() string {
	p := v.headline()
	if p.more != "" {
		return p.lead + "; " + p.more
	}
	return p.lead
}

// Listed are the measures the headline names, each a line under Lead:
// "failed: tps@c=2 -54.0% ± 6.4%, bound -20%", "inconclusive: ... (about
// 11 rounds would decide it ...)", or without bounds "tps@c=1 -5.0% ±
// 1.0% (regressed)"; up to six of each kind, then "and N more".
func (v Verdict) Listed() []string {
	p := v.headline()
	out := make([]string, 0, len(p.items)+len(p.moreItems))
	for _, it := range p.items {
		out = append(out, p.label+it)
	}
	for _, it := range p.moreItems {
		out = append(out, "inconclusive: "+it)
	}
	return out
}

// headlineParts are a headline's lead, the measures it lists after it
// (each with label in Listed), and for a failure with inconclusive
// measures besides, their count and theirs.
type headlineParts struct {
	lead, label string
	items       []string
	more        string
	moreItems   []string
}

// headlineItems is how many measures a headline names before "and N
// more".
const headlineItems = 6

func (v Verdict) headline() headlineParts {
	if v.Total == 0 {
		return headlineParts{lead: "No measures compared"}
	}
	list := func(keep func(Assessment) bool, item func(Assessment) string) (int, []string) {
		var items []string
		n := 0
		for _, a := range v.Assessments {
			if !keep(a) {
				continue
			}
			n++
			if len(items) < headlineItems {
				items = append(items, item(a))
			}
		}
		if n > len(items) {
			items = append(items, fmt.Sprintf("and %d more", n-len(items)))
		}
		return n, items
	}
	of := func(n int) string {
		if v.Bounded == 1 {
			return "the bounded measure"
		}
		return fmt.Sprintf("%d of %d bounded measures", n, v.Bounded)
	}
	if v.Bounded == 0 && v.Undecidable > 0 {
		_, items := list(func(a Assessment) bool { return a.Undecidable }, Assessment.String)
		return headlineParts{lead: fmt.Sprintf("inconclusive: nothing decided: %s beyond what this runner's spread can decide", countOf(v.Undecidable, "bounded measure")),
			label: "beyond this runner: ", items: items}
	}
	switch v.Outcome {
	case NoBound:
		n, items := list(func(a Assessment) bool { return a.Effect == Improved || a.Effect == Regressed },
			func(a Assessment) string { return a.String() + " (" + a.Effect.String() + ")" })
		if n == 0 {
			return headlineParts{lead: fmt.Sprintf("no bounds given: none of %d measures changed significantly", v.Total)}
		}
		return headlineParts{lead: fmt.Sprintf("no bounds given: %d of %d measures changed", n, v.Total), items: items}
	case Pass:
		if v.Bounded == 1 {
			return headlineParts{lead: "passed: the bounded measure is within its bound"}
		}
		return headlineParts{lead: fmt.Sprintf("passed: all %d bounded measures within their bounds", v.Bounded)}
	}
	undecided := func(a Assessment) string {
		s := a.String()
		if d := a.Decide(); d != "" {
			s += " (" + d + ")"
		}
		return s
	}
	ni, inc := list(func(a Assessment) bool { return a.Outcome == Inconclusive }, undecided)
	if v.Outcome == Inconclusive {
		return headlineParts{lead: fmt.Sprintf("inconclusive: %s undecided", of(ni)), label: "inconclusive: ", items: inc}
	}
	nf, failed := list(func(a Assessment) bool { return a.Outcome == Fail }, Assessment.String)
	verb := "past their bounds"
	if nf == 1 {
		verb = "past its bound"
	}
	p := headlineParts{lead: fmt.Sprintf("failed: %s %s", of(nf), verb), label: "failed: ", items: failed}
	if ni > 0 {
		p.more, p.moreItems = fmt.Sprintf("%d inconclusive", ni), inc
	}
	return p
}

// Counts returns the tallies in one line: "24 measures, 6 bounded: 4
// pass, 1 fail, 1 inconclusive; 3 improved, 1 regressed" (and ", 2
// negligible" when some are).
func (v Verdict) Counts() string {
	s := fmt.Sprintf("%d measures, %d bounded: %d pass, %d fail, %d inconclusive; %d improved, %d regressed",
		v.Total, v.Bounded, v.Passed, v.Failed, v.Inconclusive, v.Improved, v.Regressed)
	if v.Negligible > 0 {
		s += fmt.Sprintf(", %d negligible", v.Negligible)
	}
	if v.Undecidable > 0 {
		s += "; " + countOf(v.Undecidable, "bound") + " beyond this runner's spread"
	}
	return s
}

// countOf writes "1 bound", "3 bounds".
func countOf(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Evaluate judges the comparisons of one A/B comparison together. It
// corrects their p-values with Holm's method over all of them (the family is
// every measure given, bounded or not) for each measure's Effect, finds each
// measure's bound (a bound naming its step wins over one naming only its
// measure), and decides each bounded measure's Outcome, the bounded
// measures as one family (see Assessment and FailRule).
//
// It returns a *BoundError when a bound matches no measure (almost always a
// typo, which would otherwise pass silently) or when its sign is not the bad
// direction of its measure (tps=+3%), and a plain error when a measure has
// no Direction or two comparisons have the same key.
func Evaluate(cs []Comparison, bounds Bounds, opt Options) (Verdict, error) {
	return EvaluateGroups([]Group{{Comparisons: cs, Bounds: bounds, Options: opt}}, opt)
}

// Group is one family of bounded measures judged together: a comparison's
// measures, or a suite's cell, with the bounds that apply to it and the
// options its outcomes are decided with (a cell's share of alpha, its
// look when it rounds until decided).
type Group struct {
	Comparisons []Comparison
	Bounds      Bounds
	Options     Options
}

// EvaluateGroups is Evaluate over several groups judged together, as a
// suite judges its cells: every measure's Effect is Holm-corrected over
// all groups at opt's confidence, so that many cells do not turn noise
// into changes, and each group's bounded measures are decided as a
// family of their own with the group's options. Measure keys need only be
// unique within a group. The assessments are in group order.
func EvaluateGroups(groups []Group, opt Options) (Verdict, error) {
	conf, warns := opt.confidence()
	v := Verdict{Alpha: Alpha(conf), Warnings: warns, Sequential: opt.Sequential}
	var all []Comparison
	for _, g := range groups {
		if err := checkBounds(g.Comparisons, g.Bounds); err != nil {
			return Verdict{}, err
		}
		all = append(all, g.Comparisons...)
	}
	v.Total = len(all)
	ps := make([]float64, len(all))
	for i, c := range all {
		ps[i] = c.P
	}
	holm := Holm(ps)
	k := 0
	for _, g := range groups {
		as := make([]Assessment, len(g.Comparisons))
		for i, c := range g.Comparisons {
			as[i] = assess(c, holm[k], g.Bounds, v.Alpha)
			k++
		}
		decide(as, g.Options)
		v.Assessments = append(v.Assessments, as...)
	}
	return Tally(v), nil
}

// Tally sets v's outcome and counts from its assessments: the worst
// outcome, the measures, the bounded ones by outcome, the significant
// changes by effect. EvaluateGroups makes a verdict with it; a caller that
// judged several families together (a suite with micro-benchmark cells)
// makes each family's verdict from its part of the assessments with it.
func Tally(v Verdict) Verdict {
	v.Outcome = NoBound
	v.Total, v.Bounded, v.Passed, v.Failed, v.Inconclusive = len(v.Assessments), 0, 0, 0, 0
	v.Improved, v.Regressed, v.Negligible, v.Undecidable = 0, 0, 0, 0
	for _, a := range v.Assessments {
		v.Outcome = Worst(v.Outcome, a.Outcome)
		if a.Undecidable {
			v.Undecidable++
		}
		switch a.Outcome {
		case Pass:
			v.Passed++
		case Fail:
			v.Failed++
		case Inconclusive:
			v.Inconclusive++
		}
		if a.Outcome != NoBound {
			v.Bounded++
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
	if v.Bounded == 0 && v.Undecidable > 0 {
		// Every bound was left to the runner's spread, which decided
		// none: no pass can be shown.
		v.Outcome = Inconclusive
	}
	return v
}

// checkBounds refuses measures without a direction, two comparisons of
// one key, a bound that matches no measure and a bound whose sign is not
// its measure's bad direction.
func checkBounds(cs []Comparison, bounds Bounds) error {
	seen := make(map[string]bool)
	used := make([]bool, len(bounds))
	for _, c := range cs {
		m := c.Measure
		if m.Direction != HigherIsBetter && m.Direction != LowerIsBetter {
			return fmt.Errorf("stats: measure %s has no direction", m.Key())
		}
		if seen[m.Key()] {
			return fmt.Errorf("stats: measure %s compared twice", m.Key())
		}
		seen[m.Key()] = true
		for i, b := range bounds {
			if b.Measure != m.Name || (b.Step != "" && b.Step != m.Step) {
				continue
			}
			used[i] = true
			mag := strconv.FormatFloat(math.Abs(b.Percent), 'f', -1, 64)
			if m.Direction == HigherIsBetter && b.Percent > 0 {
				return &BoundError{Spec: b.String(), Msg: fmt.Sprintf("%s is higher-is-better, so its bound is the largest decrease allowed: write %s=-%s%%", m.Name, b.Key(), mag)}
			}
			if m.Direction == LowerIsBetter && b.Percent < 0 {
				return &BoundError{Spec: b.String(), Msg: fmt.Sprintf("%s is lower-is-better, so its bound is the largest increase allowed: write %s=+%s%%", m.Name, b.Key(), mag)}
			}
		}
	}
	for i, b := range bounds {
		if !used[i] {
			return &BoundError{Spec: b.String(), Msg: "matches no measure of this comparison; check the measure name and step"}
		}
	}
	return nil
}

// assess is c with its Holm-corrected p-value, its effect and its bound;
// the outcome is decide's.
func assess(c Comparison, pHolm float64, bounds Bounds, alpha float64) Assessment {
	a := Assessment{Comparison: c, PHolm: pHolm, Effect: NoChange, Spread: math.NaN()}
	a.Spread, a.SpreadUnit = spreadOf(c)
	a.Significant = a.PHolm <= alpha
	b, bounded := bounds.For(c.Measure)
	if bounded {
		a.Bound = &b
		a.Soft = b.IfDecidable || (b.Step == "" && c.Measure.Timing != "")
	}
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
	return a
}

// decide sets the outcome of every bounded assessment of one family: the
// decision's level (opt's alpha, its share, its look), the interval at
// that level, the test against the bound with Holm's correction over the
// family's bounded measures, and for what stays inconclusive the reason
// and the rounds that would decide it.
func decide(as []Assessment, opt Options) {
	alpha, familyAlpha := opt.decisionAlpha()
	var idx []int
	var ps []float64
	for i := range as {
		a := &as[i]
		if a.Bound == nil {
			continue
		}
		idx = append(idx, i)
		a.PBound = boundP(a.Comparison, a.Bound.Limit())
		ps = append(ps, a.PBound)
	}
	holm := Holm(ps)
	for k, i := range idx {
		a := &as[i]
		limit := a.Bound.Limit()
		a.PBoundHolm = holm[k]
		a.DecisionConfidence = 1 - alpha
		if alpha <= 0 {
			a.Outcome, a.Reason = Inconclusive, "too few rounds to decide anything yet"
			a.DecisionLo, a.DecisionHi = math.Inf(-1), math.Inf(1)
			continue
		}
		dc, ok := a.Comparison.at(1 - alpha)
		if !ok {
			a.DecisionConfidence = dc.Confidence // made elsewhere: judged at its own level
		}
		a.DecisionLo, a.DecisionHi = dc.Lo, dc.Hi
		switch {
		case math.IsNaN(a.Change):
			a.Outcome, a.Reason = Inconclusive, "nothing could be compared"
		case a.PBoundHolm <= familyAlpha && pastBound(dc, limit, true):
			a.Outcome = Fail
		case withinBound(dc, limit):
			a.Outcome = Pass
		default:
			a.Outcome = Inconclusive
			a.Reason = inconclusiveWhy(*a, dc, limit, alpha, familyAlpha, len(idx))
			if a.Soft && beyondSpread(a, limit, alpha, opt) {
				a.Outcome, a.Undecidable = NoBound, true
				a.Reason = undecidableWhy(*a)
				continue
			}
			if opt.Sequential == nil || !opt.Sequential.Interim {
				a.RoundsNeeded = roundsNeeded(a.Comparison, limit, alpha, familyAlpha, len(idx))
			}
		}
	}
}

// beyondSpread reports whether a soft bound's measure, at the spread
// measured, cannot be decided in the units the run may take (its most
// rounds or layouts when it rounds until decided, else those it has):
// the smallest change those units tell from none at the decision's level
// with DefaultPower is not inside the bound. It sets a's Units and
// Detectable. A spread that is not known yet (too few units) is not
// beyond: the bound stays.
func beyondSpread(a *Assessment, limit, alpha float64, opt Options) bool {
	units := a.N1
	if s := opt.Sequential; s != nil && s.Max > units {
		units = s.Max
	}
	if math.IsNaN(a.Spread) || a.N1 < FirstLook {
		return false
	}
	a.Units = units
	a.Detectable = DetectableChange(a.Spread, units, 1-alpha, DefaultPower)
	return !(a.Detectable < math.Abs(limit))
}

// undecidableWhy says why a soft bound decided nothing.
func undecidableWhy(a Assessment) string {
	what := "its bound applies only where this runner's spread can decide it"
	if a.Bound.Step == "" && a.Measure.Timing != "" && !a.Bound.IfDecidable {
		what = "it depends on timing (" + a.Measure.Timing + "), so a bound for every step applies here only where this runner's spread can decide it (name the step to bound it anyway)"
	}
	see := "no change at all"
	if !math.IsInf(a.Detectable, 0) {
		see = "a change of about " + strings.TrimPrefix(FormatPercent(a.Detectable), "+")
	}
	return fmt.Sprintf("%s: at ±%.1f%% per %s, %d %ss tell %s from none at best, not one of %s",
		what, 100*a.Spread, unitOf(a), a.Units, unitOf(a), see, strings.TrimLeft(formatLimit(a.Bound.Percent), "+-"))
}

// DetectableChange is the smallest relative change that n units (rounds,
// layouts) at a spread of sdLog per unit (the standard deviation of the
// per-unit log ratios) detect with the given power by a two-sided test at
// the confidence level: RoundsToDetect turned around. +Inf with fewer
// than 2 units, NaN for a spread that is not a number.
func DetectableChange(sdLog float64, n int, confidence, power float64) float64 {
	if math.IsNaN(sdLog) || !(confidence > 0 && confidence < 1) || !(power > 0 && power < 1) {
		return math.NaN()
	}
	if n < 2 {
		return math.Inf(1)
	}
	df := float64(n - 1)
	t := tQuantile(1-Alpha(confidence)/2, df) + tQuantile(power, df)
	return math.Expm1(t * sdLog / math.Sqrt(float64(n)))
}

// inconclusiveWhy says why a bounded measure is neither passed nor
// failed.
func inconclusiveWhy(a Assessment, dc Comparison, limit, alpha, familyAlpha float64, family int) string {
	level := fmt.Sprintf("%s interval", levelText(1-alpha))
	switch {
	case !badSide(a.Measure, a.Change, limit):
		return "its " + level + " reaches past the bound"
	case !pastBound(dc, limit, false):
		return "past its bound, but its " + level + " reaches back inside it"
	case !pastBound(dc, limit, true):
		n := MinFailRounds(1 - alpha)
		return fmt.Sprintf("past its bound, but %d %ss are too few to fail it: the distribution-free check needs %d at this level", a.N1, unitOf(a), n)
	}
	if a.PBoundHolm <= familyAlpha {
		return fmt.Sprintf("past its bound by the t-test (p %.2g), but the signed-rank test against it does not agree at the decision's level", a.PBound)
	}
	return fmt.Sprintf("past its bound (p %.2g), but not once corrected for the %d bounded measures (Holm: %.2g)", a.PBound, family, a.PBoundHolm)
}

func unitOf(a Assessment) string {
	if a.SpreadUnit != "" {
		return a.SpreadUnit
	}
	return "value"
}

// levelText writes a confidence level as a percentage: "95%", "99.8%".
func levelText(conf float64) string {
	s := strconv.FormatFloat(100*conf, 'f', 1, 64)
	if conf >= 0.999 {
		s = strconv.FormatFloat(100*conf, 'f', 2, 64)
	}
	return strings.TrimSuffix(s, ".0") + "%"
}

// JudgeChange judges one change that another test already found
// significant (a change point in a measure's history, whose P the
// detector made) against the bound in bounds that fits its measure: its
// Effect is the change's direction, its Outcome Fail when the change is
// beyond the bound in the bad direction and Pass otherwise — the
// detector's own threshold is the test, so nothing is inconclusive, and
// Reason says when the interval reaches across the bound. It
// makes no correction for multiple tests (PHolm is P). Bounds are not
// checked against the measures here: the caller does that.
func JudgeChange(c Comparison, bounds Bounds) Assessment {
	a := Assessment{Comparison: c, PHolm: c.P, Significant: true, Effect: Regressed, Spread: math.NaN()}
	if c.Measure.better(c.Change) {
		a.Effect = Improved
	} else if c.Change == 0 {
		a.Effect = NoChange
	}
	if b, ok := bounds.For(c.Measure); ok {
		a.Bound = &b
		a.Outcome = Pass
		if badSide(c.Measure, c.Change, b.Limit()) {
			a.Outcome = Fail
		}
		if !pastBound(c, b.Limit(), false) && !withinBound(c, b.Limit()) {
			a.Reason = "its interval reaches across the bound"
		}
	}
	return a
}
