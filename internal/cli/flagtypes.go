package cli

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/stats"
)

// seconds is a duration flag that also takes pgbench's bare number of seconds.
type seconds struct{ d *time.Duration }

func (s seconds) String() string {
	if s.d == nil || *s.d == 0 {
		return "0"
	}
	return s.d.String()
}

func (s seconds) Set(v string) error {
	d, err := parseSeconds(v)
	if err != nil {
		return err
	}
	*s.d = d
	return nil
}

func (s seconds) Type() string { return "duration" }

func parseSeconds(v string) (time.Duration, error) {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		if f < 0 {
			return 0, fmt.Errorf("negative duration %q", v)
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a duration (10, 10s, 1m30s)", v)
	}
	return d, nil
}

// millis is a duration flag whose bare numbers are milliseconds (pgbench -L).
type millis struct{ d *time.Duration }

func (m millis) String() string {
	if m.d == nil || *m.d == 0 {
		return "0"
	}
	return m.d.String()
}

func (m millis) Set(v string) error {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		if f < 0 {
			return fmt.Errorf("negative latency limit %q", v)
		}
		*m.d = time.Duration(f * float64(time.Millisecond))
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return fmt.Errorf("%q is not a latency (5 for 5 ms, or 5ms)", v)
	}
	*m.d = d
	return nil
}

func (m millis) Type() string { return "ms" }

// intList is a comma-separated list of positive integers: a sweep.
type intList struct{ v *[]int }

func (l intList) String() string {
	if l.v == nil {
		return ""
	}
	s := make([]string, len(*l.v))
	for i, n := range *l.v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

func (l intList) Set(v string) error {
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, n)
	}
	*l.v = out
	return nil
}

func (l intList) Type() string { return "list" }

// positive is an integer flag of at least 1.
type positive struct{ n *int }

func (p positive) String() string {
	if p.n == nil {
		return ""
	}
	return strconv.Itoa(*p.n)
}

func (p positive) Set(v string) error {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 1 {
		return fmt.Errorf("%q is not a positive integer", v)
	}
	*p.n = n
	return nil
}

func (p positive) Type() string { return "int" }

// fraction is a change given as a percentage ("1%", "0.5%") or a
// fraction ("0.01"), kept as a fraction, at least 0.
type fraction struct{ f *float64 }

func (p fraction) String() string {
	if p.f == nil || *p.f == 0 {
		return ""
	}
	return strconv.FormatFloat(100**p.f, 'g', -1, 64) + "%"
}

func (p fraction) Set(v string) error {
	s := strings.TrimSpace(v)
	pct := strings.HasSuffix(s, "%")
	x, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil || x < 0 || (!pct && x >= 1) {
		return fmt.Errorf("%q is not a change: give a percentage such as 1%% or 0.5%%", v)
	}
	if pct {
		x /= 100
	}
	*p.f = x
	return nil
}

func (p fraction) Type() string { return "percent" }

// defines collects -D name=value.
type defines struct{ m map[string]string }

func (d defines) String() string {
	var s []string
	for k, v := range d.m {
		s = append(s, k+"="+v)
	}
	sort.Strings(s)
	return strings.Join(s, ",")
}

func (d defines) Set(v string) error {
	name, value, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("%q is not name=value", v)
	}
	d.m[name] = value
	return nil
}

func (d defines) Type() string { return "name=value" }

// roundsFlag is --rounds: a number of rounds, or auto[:MAX|DURATION]
// (compare.ParseRounds).
type roundsFlag struct{ r *compare.Rounds }

func (f roundsFlag) String() string {
	if f.r == nil {
		return ""
	}
	return f.r.String()
}

func (f roundsFlag) Set(v string) error {
	r, err := compare.ParseRounds(v)
	if err != nil {
		return err
	}
	*f.r = r
	return nil
}

func (f roundsFlag) Type() string { return "rounds" }

// inconclusiveFlag is --inconclusive: what an inconclusive verdict exits
// with.
type inconclusiveFlag struct{ mode *string }

func (f inconclusiveFlag) String() string { return *f.mode }

func (f inconclusiveFlag) Set(v string) error {
	switch v {
	case "inconclusive", "pass", "fail":
		*f.mode = v
		return nil
	}
	return fmt.Errorf("want inconclusive (exit 4), pass (exit 0) or fail (exit 1)")
}

func (f inconclusiveFlag) Type() string { return "mode" }

// boundsFlag is --bound, read into bounds as each is given: one bound or
// a comma list of them, each MEASURE=±N% (stats.ParseBounds), a key
// bounded twice refused. The command line is where a bound is parsed;
// what runs below takes the value.
type boundsFlag struct{ b *stats.Bounds }

func (f boundsFlag) String() string {
	if f.b == nil {
		return ""
	}
	return strings.Join(f.b.Strings(), ",")
}

func (f boundsFlag) Set(v string) error {
	bs, err := stats.ParseBounds([]string{v})
	if err != nil {
		return err
	}
	all, err := f.b.Add(bs...)
	if err != nil {
		return err
	}
	*f.b = all
	return nil
}

func (f boundsFlag) Type() string { return "bound" }
