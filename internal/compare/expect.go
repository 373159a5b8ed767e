package compare

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
)

// Expectation is a decision rule on one target's sweep, checked after the
// run: a quantity at one client count against a threshold, or against the
// same quantity at another client count.
//
//	efficiency@c=8>=50%             efficiency at 8 clients at least 50 %
//	waits@c=8<20%                   lock, LWLock and I/O waits under 20 % of the backends' time
//	server-cpu/txn@c=8<c=1+20%      server CPU per transaction grows less than 20 % from 1 to 8 clients
//	p99@c=16<=5                     p99 latency at 16 clients at most 5 ms
//
// The quantities are the scaling analysis's (ExpectQuantities) and every
// measure of Measures; a share or efficiency is written in per cent, any
// other quantity in its unit; with several steps of a count (rounds) the
// value is their median.
type Expectation struct {
	// Spec is the rule as written.
	Spec     string
	Quantity string
	Clients  int
	// Op is <, <=, > or >=.
	Op string
	// Value is the threshold (a fraction for shares), when Against is 0.
	Value float64
	// Against, when set, makes the threshold the quantity at Against
	// clients times 1 + Relative.
	Against  int
	Relative float64
	// Decision, when set, is what holding the rule means ("no
	// optimisation needed"); a suite file's rule: gives it.
	Decision string
}

// ExpectQuantity is a quantity of the scaling analysis an expectation can
// name, beside the measures.
type ExpectQuantity struct {
	Name string
	// Share says the value is a fraction, written and shown in per cent.
	Share bool
	Unit  string
	What  string
	read  func(diagnose.ScalingStep) float64
}

// ExpectQuantities lists the scaling analysis's quantities.
func ExpectQuantities() []ExpectQuantity {
	return []ExpectQuantity{
		{"efficiency", true, "", "speedup over the ratio of client counts, against the sweep's baseline step (the first, unless a later one does more per client)", func(s diagnose.ScalingStep) float64 { return s.Efficiency }},
		{"speedup", false, "×", "tps over the baseline step's", func(s diagnose.ScalingStep) float64 { return s.Speedup }},
		{"loss", true, "", "efficiency lost per doubling of clients from the previous step", func(s diagnose.ScalingStep) float64 { return s.LossPerDoubling }},
		{"waits", true, "", "share of the backends' time in lock, LWLock, buffer-pin, I/O and IPC waits", func(s diagnose.ScalingStep) float64 { return s.Waits }},
		{"cpu-wait", true, "", "share of the backends' time runnable, waiting for a CPU", func(s diagnose.ScalingStep) float64 { return s.CPUWait }},
		{"client-wait", true, "", "share of the backends' time waiting for the client", func(s diagnose.ScalingStep) float64 { return s.ClientWait }},
	}
}

// ExpectNames lists every name an expectation can use.
func ExpectNames() string {
	var ns []string
	for _, q := range ExpectQuantities() {
		ns = append(ns, q.Name)
	}
	for _, m := range Measures() {
		ns = append(ns, m.Name)
	}
	return strings.Join(ns, ", ")
}

// quantity looks a name up: a scaling quantity, or a measure.
func quantity(name string) (q ExpectQuantity, md *MeasureDef, ok bool) {
	for _, x := range ExpectQuantities() {
		if x.Name == name {
			return x, nil, true
		}
	}
	for _, m := range Measures() {
		if m.Name == name {
			m := m
			return ExpectQuantity{Name: m.Name, Unit: m.Unit}, &m, true
		}
	}
	return ExpectQuantity{}, nil, false
}

// ParseExpectation parses a rule as written ("efficiency@c=8>=50%"). Its
// errors say what is wrong and how to write it.
func ParseExpectation(spec string) (Expectation, error) {
	e := Expectation{Spec: spec}
	s := strings.ReplaceAll(spec, " ", "")
	bad := func(format string, a ...any) (Expectation, error) {
		return Expectation{}, fmt.Errorf("expectation %q: %s", spec, fmt.Sprintf(format, a...))
	}
	name, rest, found := strings.Cut(s, "@c=")
	if !found || name == "" {
		return bad("write QUANTITY@c=N OP VALUE, as in efficiency@c=8>=50%% or server-cpu/txn@c=8<c=1+20%%")
	}
	q, _, ok := quantity(name)
	if !ok {
		return bad("unknown quantity %s (have %s)", name, ExpectNames())
	}
	e.Quantity = name
	n, rest, ok := leadingCount(rest)
	if !ok {
		return bad("the client count after c= must be a positive integer")
	}
	e.Clients = n
	for _, op := range []string{"<=", ">=", "<", ">"} {
		if strings.HasPrefix(rest, op) {
			e.Op, rest = op, rest[len(op):]
			break
		}
	}
	if e.Op == "" {
		return bad("after c=%d comes <, <=, > or >=", n)
	}
	if r, ok := strings.CutPrefix(rest, "c="); ok {
		m, r, ok := leadingCount(r)
		if !ok {
			return bad("the client count after the second c= must be a positive integer")
		}
		e.Against = m
		if r != "" {
			pct, ok := strings.CutSuffix(r, "%")
			x, err := strconv.ParseFloat(pct, 64)
			if !ok || err != nil || (r[0] != '+' && r[0] != '-') {
				return bad("after c=%d comes nothing or a signed percentage, as in c=%d+20%%", m, m)
			}
			e.Relative = x / 100
		}
		return e, nil
	}
	pct, isPct := strings.CutSuffix(rest, "%")
	x, err := strconv.ParseFloat(pct, 64)
	if err != nil || rest == "" {
		return bad("the threshold %q is not a number", rest)
	}
	switch {
	case q.Share && !isPct:
		return bad("%s is a share: write it in per cent, as in %s@c=%d%s%g%%", name, name, n, e.Op, x)
	case !q.Share && isPct:
		return bad("%s is in %s, not a share: write a number, or compare with another step (%s@c=%d%sc=1+%s%%)", name, unitName(q.Unit), name, n, e.Op, pct)
	case q.Share:
		x /= 100
	}
	e.Value = x
	return e, nil
}

// leadingCount reads the positive integer s starts with and returns the
// rest.
func leadingCount(s string) (int, string, bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, err := strconv.Atoi(s[:i])
	return n, s[i:], err == nil && n >= 1
}

func unitName(u string) string {
	if u == "" {
		return "its own unit"
	}
	return u
}

// ParseExpectations parses every rule; the first bad one is the error.
func ParseExpectations(specs []string) ([]Expectation, error) {
	var out []Expectation
	for _, s := range specs {
		for _, part := range strings.Split(s, ",") {
			if strings.TrimSpace(part) == "" {
				continue
			}
			e, err := ParseExpectation(strings.TrimSpace(part))
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
	}
	return out, nil
}

// CheckClients says which expectation names a client count the sweep does
// not run, before anything runs.
func CheckClients(exps []Expectation, clients []int) error {
	has := map[int]bool{}
	for _, c := range clients {
		has[c] = true
	}
	for _, e := range exps {
		for _, c := range []int{e.Clients, e.Against} {
			if c > 0 && !has[c] {
				return fmt.Errorf("expectation %q: the sweep (clients %v) has no step with %d clients", e.Spec, clients, c)
			}
		}
	}
	return nil
}

// ExpectOutcome is an expectation checked on one target's file.
type ExpectOutcome struct {
	Expectation
	// Target names the file's target; Cell a suite cell ("" elsewhere).
	Target, Cell string
	// Actual is the quantity at Clients, Base at Against; NaN when not
	// measured.
	Actual, Base float64
	// Threshold is what Actual was held against.
	Threshold float64
	// Checked is false when a value was not measured; Holds says
	// whether the rule held.
	Checked, Holds bool
}

// Check checks every expectation on a file's steps.
func Check(f *result.File, exps []Expectation) []ExpectOutcome {
	var out []ExpectOutcome
	sc := diagnose.ScalingOf(f.Steps)
	for _, e := range exps {
		o := ExpectOutcome{Expectation: e, Target: f.Target.Name, Actual: valueAt(f, sc, e.Quantity, e.Clients), Base: math.NaN()}
		o.Threshold = e.Value
		if e.Against > 0 {
			o.Base = valueAt(f, sc, e.Quantity, e.Against)
			o.Threshold = o.Base * (1 + e.Relative)
		}
		o.Checked = !math.IsNaN(o.Actual) && !math.IsNaN(o.Threshold)
		if o.Checked {
			switch e.Op {
			case "<":
				o.Holds = o.Actual < o.Threshold
			case "<=":
				o.Holds = o.Actual <= o.Threshold
			case ">":
				o.Holds = o.Actual > o.Threshold
			case ">=":
				o.Holds = o.Actual >= o.Threshold
			}
		}
		out = append(out, o)
	}
	return out
}

// valueAt is a quantity at a client count: the scaling analysis's, or the
// median of a measure over the complete steps of that count.
func valueAt(f *result.File, sc []diagnose.ScalingStep, name string, clients int) float64 {
	q, md, ok := quantity(name)
	if !ok {
		return math.NaN()
	}
	if md != nil {
		v := finite(Values(f, clients, *md))
		if len(v) == 0 {
			return math.NaN()
		}
		return stats.Summarize(v, stats.Options{}).Median
	}
	for _, s := range sc {
		if s.Clients == clients {
			return q.read(s)
		}
	}
	return math.NaN()
}

// Failed reports whether an outcome counts against the run: checked and
// not holding. A rule that could not be checked fails too: a CI job that
// states one must not pass for want of a figure.
func (o ExpectOutcome) Failed() bool { return !o.Checked || !o.Holds }

// String says the outcome in a line: "efficiency@c=8>=50%: 43%, fails".
func (o ExpectOutcome) String() string {
	q, _, _ := quantity(o.Quantity)
	show := func(x float64) string {
		if q.Share {
			return prose.Share(x)
		}
		s := strconv.FormatFloat(x, 'g', 3, 64)
		if math.Abs(x) >= 100 {
			s = strconv.FormatFloat(x, 'f', 0, 64)
		}
		if q.Unit != "" && q.Unit != "×" {
			s += " " + q.Unit
		} else if q.Unit == "×" {
			s += "×"
		}
		return s
	}
	who := o.Target
	if o.Cell != "" {
		who += ", " + o.Cell
	}
	if who != "" {
		who += ": "
	}
	if !o.Checked {
		at := fmt.Sprintf("at %s", prose.Count(o.Clients, "client"))
		if o.Against > 0 {
			at = fmt.Sprintf("at %d and %d clients", o.Against, o.Clients)
		}
		return fmt.Sprintf("%s%s: %s not measured %s, cannot be checked: fails", who, o.Spec, o.Quantity, at)
	}
	got := show(o.Actual)
	if o.Against > 0 {
		got = fmt.Sprintf("%s at %d clients, %s at %d (%s)", show(o.Actual), o.Clients, show(o.Base), o.Against, stats.FormatPercent(o.Actual/o.Base-1))
	}
	verdict := "holds"
	if !o.Holds {
		verdict = "fails"
	}
	s := fmt.Sprintf("%s%s: %s, %s", who, o.Spec, got, verdict)
	if o.Decision != "" && o.Holds {
		s += " — " + o.Decision
	}
	return s
}
