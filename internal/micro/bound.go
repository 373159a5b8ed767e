package micro

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/pgscale/pgscale/internal/stats"
)

// Prefix opens every micro-benchmark measure's name and bound, so that
// one list of bounds can hold macro and micro ones: "micro:BenchmarkSum",
// "micro:extended_cached/*=+5%".
const Prefix = "micro:"

// Bound is a bound on micro-benchmarks: micro:PATTERN[@UNIT]=±N%. PATTERN
// is a benchmark's name or a pattern in which * stands for any run of
// characters and ? for one; without @UNIT it bounds each matched
// benchmark's primary measure (its time per iteration), with it the
// measure of that unit.
type Bound struct {
	Spec    string
	Pattern string
	Unit    string
	Percent float64
	re      *regexp.Regexp
}

// IsBound reports whether a --bound value is a micro-benchmark bound.
func IsBound(spec string) bool {
	return strings.HasPrefix(strings.TrimSpace(spec), Prefix)
}

// ParseBound reads a micro-benchmark bound: "micro:BenchmarkSum=+5%",
// "micro:extended_cached/*=+5%", "micro:BenchmarkSum@B/op=+0%".
func ParseBound(spec string) (Bound, error) {
	b, err := stats.ParseBound(spec)
	if err != nil {
		return Bound{}, err
	}
	pat, ok := strings.CutPrefix(b.Measure, Prefix)
	if !ok || pat == "" {
		return Bound{}, &stats.BoundError{Spec: spec, Msg: "a micro-benchmark bound is micro:NAME=±N% or micro:PATTERN@UNIT=±N%, e.g. micro:'BenchmarkSum/*'=+5%"}
	}
	return Bound{Spec: strings.TrimSpace(spec), Pattern: pat, Unit: b.Step, Percent: b.Percent, re: glob(pat)}, nil
}

// BoundSpecs are the bounds as written, one each, for a run file.
func BoundSpecs(bs []Bound) []string {
	if len(bs) == 0 {
		return nil
	}
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.Spec
	}
	return out
}

// ParseBounds reads several bounds, each spec possibly a comma list.
func ParseBounds(specs []string) ([]Bound, error) {
	var out []Bound
	for _, spec := range specs {
		for _, part := range strings.Split(spec, ",") {
			if strings.TrimSpace(part) == "" {
				continue
			}
			b, err := ParseBound(part)
			if err != nil {
				return nil, err
			}
			out = append(out, b)
		}
	}
	return out, nil
}

// glob is the regular expression of a pattern: * any run of characters,
// ? one, everything else itself.
func glob(pat string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for _, r := range pat {
		switch r {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// literal reports whether the pattern names one benchmark.
func (b Bound) literal() bool { return !strings.ContainsAny(b.Pattern, "*?") }

// matches reports whether b applies to a benchmark's measure.
func (b Bound) matches(bench, unit string, primary bool) bool {
	if !b.re.MatchString(bench) {
		return false
	}
	if b.Unit == "" {
		return primary
	}
	return b.Unit == unit
}

// better reports whether b is more specific than o for the same
// measure: a name over a pattern, a unit over none, a longer pattern
// over a shorter one.
func (b Bound) better(o Bound) bool {
	if b.literal() != o.literal() {
		return b.literal()
	}
	if (b.Unit != "") != (o.Unit != "") {
		return b.Unit != ""
	}
	return len(b.Pattern) > len(o.Pattern)
}

// resolve finds each measure's bound, the most specific that matches,
// as a stats.Bound on the measure's key; a bound that matches no
// benchmark is an error (almost always a typo, which would otherwise
// pass silently).
func resolve(bounds []Bound, ms []stats.Measure, primary []bool, of string) (stats.Bounds, error) {
	used := make([]bool, len(bounds))
	var out stats.Bounds
	for i, m := range ms {
		bench := strings.TrimPrefix(m.Name, Prefix)
		best := -1
		for j, b := range bounds {
			if !b.matches(bench, m.Step, primary[i]) {
				continue
			}
			used[j] = true
			if best < 0 || b.better(bounds[best]) {
				best = j
			}
		}
		if best >= 0 {
			out = append(out, stats.Bound{Measure: m.Name, Step: m.Step, Percent: bounds[best].Percent})
		}
	}
	for j, b := range bounds {
		if !used[j] {
			what := "the primary measure of no benchmark"
			if b.Unit != "" {
				what = fmt.Sprintf("no benchmark's %s", b.Unit)
			}
			return nil, &stats.BoundError{Spec: b.Spec, Msg: "matches " + what + " " + of + "; check the name, the pattern (* for any characters) and the unit"}
		}
	}
	return out, nil
}
