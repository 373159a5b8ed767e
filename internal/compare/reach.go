package compare

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/pgscale/pgscale/internal/stats"
)

// Reach is what this runner could not decide, said once for the whole
// comparison (or suite) instead of per measure: the measures whose bounds
// apply only where the measured spread can decide them, and whose spread
// could not in the units (rounds or layouts) the run may take
// (stats.Assessment.Undecidable) — time-based measures on a loaded
// machine, and counted ones that depend on timing. Every format says its
// Text.
type Reach struct {
	// Native are the time-based measures left undecided, by name; Spread
	// and See the range of their spreads per Unit and of the smallest
	// change Units of them tell from none at those spreads.
	Native     []string
	Spread     [2]float64
	See        [2]float64
	Unit       string
	Units      int
	NativeKeys []string
	// Timing are the counted measures left undecided because they
	// depend on timing, each with its client counts and why; their
	// spreads' range in TimingSpread per TimingUnit.
	Timing       []ReachTiming
	TimingSpread [2]float64
	TimingUnit   string
	// Decided says what decided the verdict instead: "the counted
	// measures decided", "the other bounded measures decided", or
	// "nothing else was bounded, so nothing was decided"; "" when bounded
	// measures stay undecided.
	Decided string
	// Text says it all in a sentence or three.
	Text string
}

// ReachTiming is one counted measure that depends on timing, left
// undecided at some client counts.
type ReachTiming struct {
	Measure string
	Clients []int
	Why     string
}

// reachOf is the reach of the verdicts (one per candidate); nil when every
// bound could be judged.
func reachOf(vs []stats.Verdict) *Reach {
	r := &Reach{}
	var native, timing []stats.Assessment
	bounded, undecided, counted := 0, 0, true
	for _, v := range vs {
		for _, a := range v.Assessments {
			switch {
			case a.Undecidable && a.Measure.Counted:
				timing = append(timing, a)
			case a.Undecidable:
				native = append(native, a)
			case a.Outcome != stats.NoBound:
				bounded++
				counted = counted && a.Measure.Counted
				if a.Outcome == stats.Inconclusive {
					undecided++
				}
			}
		}
	}
	if len(native)+len(timing) == 0 {
		return nil
	}
	var parts []string
	if len(native) > 0 {
		r.Spread, r.See = span(native, func(a stats.Assessment) float64 { return a.Spread }), span(native, func(a stats.Assessment) float64 { return a.Detectable })
		r.Unit = native[0].SpreadUnit
		for _, a := range native {
			r.Units = max(r.Units, a.Units)
			if !slices.Contains(r.Native, a.Measure.Name) {
				r.Native = append(r.Native, a.Measure.Name)
			}
			r.NativeKeys = append(r.NativeKeys, a.Measure.Key())
		}
		see := "any change at all"
		if !math.IsInf(r.See[1], 0) {
			see = "changes under about " + pctRange(r.See, 0)
		}
		parts = append(parts, fmt.Sprintf("This runner's spread is %s per %s natively: in %d %ss it cannot see %s (%s), so those bounds decide nothing here.",
			"±"+pctRange(r.Spread, 0), r.Unit, r.Units, r.Unit, see, strings.Join(r.Native, ", ")))
	}
	if len(timing) > 0 {
		r.TimingSpread = span(timing, func(a stats.Assessment) float64 { return a.Spread })
		r.TimingUnit = timing[0].SpreadUnit
		for _, a := range timing {
			i := slices.IndexFunc(r.Timing, func(t ReachTiming) bool { return t.Measure == a.Measure.Name && t.Why == a.Measure.Timing })
			if i < 0 {
				r.Timing = append(r.Timing, ReachTiming{Measure: a.Measure.Name, Why: a.Measure.Timing})
				i = len(r.Timing) - 1
			}
			step, _, _ := strings.Cut(a.Measure.Step, " ") // "c=4 [workload=...]" in a suite
			if c := clientsOf(step); c > 0 && !slices.Contains(r.Timing[i].Clients, c) {
				r.Timing[i].Clients = append(r.Timing[i].Clients, c)
			}
		}
		var what []string
		for _, t := range r.Timing {
			slices.Sort(t.Clients)
			at := ""
			if len(t.Clients) > 0 {
				cs := make([]string, len(t.Clients))
				for i, c := range t.Clients {
					cs[i] = fmt.Sprint(c)
				}
				at = " at " + strings.Join(cs, ", ") + " clients"
				if len(t.Clients) == 1 && t.Clients[0] == 1 {
					at = " at 1 client"
				}
			}
			what = append(what, fmt.Sprintf("%s%s depends on timing (%s)", t.Measure, at, t.Why))
		}
		parts = append(parts, fmt.Sprintf("%s, and moved ±%s per %s: reported, not bounded.",
			strings.Join(what, "; "), pctRange(r.TimingSpread, 1), r.TimingUnit))
	}
	switch {
	case bounded == 0:
		r.Decided = "nothing else was bounded, so nothing was decided"
	case undecided > 0:
	case counted:
		r.Decided = "the counted measures decided"
	default:
		r.Decided = "the other bounded measures decided"
	}
	if r.Decided != "" {
		parts = append(parts, strings.ToUpper(r.Decided[:1])+r.Decided[1:]+".")
	}
	r.Text = strings.Join(parts, " ")
	return r
}

// span is the smallest and largest of f over as.
func span(as []stats.Assessment, f func(stats.Assessment) float64) [2]float64 {
	out := [2]float64{math.Inf(1), math.Inf(-1)}
	for _, a := range as {
		x := f(a)
		out[0], out[1] = math.Min(out[0], x), math.Max(out[1], x)
	}
	return out
}

// pctRange writes a range of fractions as per cents, "25%" or "12–25%",
// with the given decimals (more where the figures are small).
func pctRange(r [2]float64, decimals int) string {
	f := func(x float64) string {
		d := decimals
		if math.Abs(x) < 0.1 && d == 0 {
			d = 1
		}
		return fmt.Sprintf("%.*f", d, 100*x)
	}
	lo, hi := f(r[0]), f(r[1])
	if lo == hi {
		return hi + "%"
	}
	return lo + "–" + hi + "%"
}
