package stats

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Bound is the largest change a measure may show in its bad direction:
// "tps=-3%" lets throughput fall by up to 3 %, "p99=+5%" lets p99 latency
// rise by up to 5 %, "tps@c=16=-5%" applies to the c=16 step only, and
// "tps=-5% if decidable" applies only where this runner's measured spread
// can decide it in the rounds the run may take.
type Bound struct {
	// Measure is the measure name the bound applies to.
	Measure string
	// Step restricts the bound to one step; empty applies it to every
	// step of the measure. A bound with a step wins over one without.
	Step string
	// Percent is the limit in percent, signed: -3 for "tps=-3%".
	Percent float64
	// IfDecidable makes the bound apply only where the measured spread
	// can decide it (written "... if decidable"): where it cannot, the
	// measure is reported and decides nothing (Assessment.Undecidable).
	IfDecidable bool
}

// ifDecidable is how a bound says it applies only where it can be decided.
const ifDecidable = " if decidable"

// Limit returns the bound as a relative change: -0.03 for -3 %.
func (b Bound) Limit() float64 { return b.Percent / 100 }

// Key returns the measure key the bound names: "tps" or "tps@c=16".
func (b Bound) Key() string {
	return Measure{Name: b.Measure, Step: b.Step}.Key()
}

// String returns the bound in the form ParseBound reads: "tps@c=16=-5%",
// "tps=-5% if decidable".
func (b Bound) String() string {
	s := b.Key() + "=" + formatLimit(b.Percent)
	if b.IfDecidable {
		s += ifDecidable
	}
	return s
}

// formatLimit prints a bound's percentage as written: "-5%", "+2.5%".
func formatLimit(pct float64) string {
	s := strconv.FormatFloat(pct, 'f', -1, 64)
	if !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s + "%"
}

// BoundError says a bound is malformed or does not fit the measures it is
// applied to. It is a mistake of the user's; the CLI reports it as bad usage.
type BoundError struct {
	// Spec is the bound as written.
	Spec string
	// Msg says what is wrong and how to fix it.
	Msg string
}

// Error returns `bound "SPEC": MSG`.
func (e *BoundError) Error() string {
	return fmt.Sprintf("bound %q: %s", e.Spec, e.Msg)
}

// ParseBound reads a bound written MEASURE=±N% or MEASURE@STEP=±N%:
// "tps=-3%", "p99=+5%", "tps@c=16=-5%", "cpu/txn=+2.5%", each optionally
// followed by "if decidable" (Bound.IfDecidable). The limit needs an
// explicit sign (the bad direction) and a % sign; a decrease cannot exceed
// 100 %. Spaces around the parts are ignored.
func ParseBound(spec string) (Bound, error) {
	s := strings.TrimSpace(spec)
	bad := func(format string, args ...any) (Bound, error) {
		return Bound{}, &BoundError{Spec: spec, Msg: fmt.Sprintf(format, args...)}
	}
	soft := false
	if i := strings.LastIndex(s, "%"); i >= 0 && strings.TrimSpace(s[i+1:]) != "" {
		rest := strings.Join(strings.Fields(s[i+1:]), " ")
		if rest != strings.TrimSpace(ifDecidable) {
			return bad("%q after the limit: the one word a bound takes there is \"if decidable\" (tps=-5%% if decidable)", rest)
		}
		s, soft = strings.TrimSpace(s[:i+1]), true
	}
	eq := strings.LastIndex(s, "=")
	if eq < 0 {
		return bad("want MEASURE=±N%% or MEASURE@STEP=±N%%, e.g. tps=-3%% or p99=+5%%")
	}
	key, lim := strings.TrimSpace(s[:eq]), strings.TrimSpace(s[eq+1:])
	name, step := key, ""
	if at := strings.Index(key, "@"); at >= 0 {
		name, step = strings.TrimSpace(key[:at]), strings.TrimSpace(key[at+1:])
		if step == "" {
			return bad("empty step after @; write e.g. tps@c=16=-5%%")
		}
	}
	if name == "" {
		return bad("no measure name before =; write e.g. tps=-3%%")
	}
	if !strings.HasSuffix(lim, "%") {
		return bad("the limit %q must be a percentage such as -3%% or +5%%", lim)
	}
	num := strings.TrimSpace(strings.TrimSuffix(lim, "%"))
	if !strings.HasPrefix(num, "-") && !strings.HasPrefix(num, "+") {
		return bad("the limit %q needs a sign for the bad direction: -N%% for measures where higher is better (tps), +N%% where lower is better (latency)", lim)
	}
	pct, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(pct) || math.IsInf(pct, 0) {
		return bad("the limit %q is not a number followed by %%", lim)
	}
	if pct <= -100 {
		return bad("a decrease of %s%% or more is not possible; the limit must be above -100%%", strings.TrimPrefix(num, "-"))
	}
	return Bound{Measure: name, Step: step, Percent: pct, IfDecidable: soft}, nil
}

// Bounds is a set of bounds, at most one per measure key.
type Bounds []Bound

// Strings writes the bounds back as ParseBounds reads them, one each.
func (bs Bounds) Strings() []string {
	if len(bs) == 0 {
		return nil
	}
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.String()
	}
	return out
}

// Add returns bs with more added, refusing (a *BoundError) a key that
// has a bound already.
func (bs Bounds) Add(more ...Bound) (Bounds, error) {
	out := append(Bounds(nil), bs...)
	for _, b := range more {
		for _, x := range out {
			if x.Key() == b.Key() {
				return nil, &BoundError{Spec: b.String(), Msg: fmt.Sprintf("%s already has a bound (%s)", b.Key(), x)}
			}
		}
		out = append(out, b)
	}
	return out, nil
}

// ParseBounds reads bounds from specs; each spec may itself hold several
// bounds separated by commas ("tps=-3%,p99=+5%"). It returns a *BoundError
// for the first malformed bound, or for two bounds on the same key.
func ParseBounds(specs []string) (Bounds, error) {
	var out Bounds
	seen := make(map[string]string)
	for _, spec := range specs {
		for _, part := range strings.Split(spec, ",") {
			if strings.TrimSpace(part) == "" {
				continue
			}
			b, err := ParseBound(part)
			if err != nil {
				return nil, err
			}
			if prev, ok := seen[b.Key()]; ok {
				return nil, &BoundError{Spec: part, Msg: fmt.Sprintf("%s already has a bound (%s)", b.Key(), prev)}
			}
			seen[b.Key()] = strings.TrimSpace(part)
			out = append(out, b)
		}
	}
	return out, nil
}

// For returns the bound that applies to m: the one naming its step if any,
// else the one naming just its measure.
func (bs Bounds) For(m Measure) (Bound, bool) {
	var general Bound
	found := false
	for _, b := range bs {
		if b.Measure != m.Name {
			continue
		}
		if b.Step != "" && b.Step == m.Step {
			return b, true
		}
		if b.Step == "" {
			general, found = b, true
		}
	}
	return general, found
}
