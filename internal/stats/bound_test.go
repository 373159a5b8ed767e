package stats_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/stats"
)

func TestParseBound(t *testing.T) {
	tests := []struct {
		spec string
		want stats.Bound
		str  string
	}{
		{"tps=-3%", stats.Bound{Measure: "tps", Percent: -3}, "tps=-3%"},
		{"p99=+5%", stats.Bound{Measure: "p99", Percent: 5}, "p99=+5%"},
		{"tps@c=16=-5%", stats.Bound{Measure: "tps", Step: "c=16", Percent: -5}, "tps@c=16=-5%"},
		{" cpu/txn = +2.5% ", stats.Bound{Measure: "cpu/txn", Percent: 2.5}, "cpu/txn=+2.5%"},
		{"latency p50@c=1=+1.0%", stats.Bound{Measure: "latency p50", Step: "c=1", Percent: 1}, "latency p50@c=1=+1%"},
		{"ctx/txn=+0%", stats.Bound{Measure: "ctx/txn", Percent: 0}, "ctx/txn=+0%"},
	}
	for _, tt := range tests {
		b, err := stats.ParseBound(tt.spec)
		if err != nil {
			t.Errorf("ParseBound(%q): %v", tt.spec, err)
			continue
		}
		if b != tt.want {
			t.Errorf("ParseBound(%q) = %+v, want %+v", tt.spec, b, tt.want)
		}
		if b.String() != tt.str {
			t.Errorf("ParseBound(%q).String() = %q, want %q", tt.spec, b.String(), tt.str)
		}
	}
	near(t, "Limit", stats.Bound{Percent: -3}.Limit(), -0.03, 1e-15)
}

func TestParseBoundErrors(t *testing.T) {
	tests := []struct {
		spec, msg string
	}{
		{"tps", "want MEASURE=±N%"},
		{"tps=3%", "needs a sign"},
		{"tps=-3", "must be a percentage"},
		{"=-3%", "no measure name"},
		{"tps@=-3%", "empty step"},
		{"@c=16=-3%", "no measure name"},
		{"tps=-x%", "not a number"},
		{"tps=--3%", "not a number"},
		{"tps=+Inf%", "not a number"},
		{"tps=-3%%", "not a number"},
		{"tps=-100%", "must be above -100%"},
		{"tps=-150%", "must be above -100%"},
	}
	for _, tt := range tests {
		_, err := stats.ParseBound(tt.spec)
		var be *stats.BoundError
		if !errors.As(err, &be) {
			t.Errorf("ParseBound(%q) error = %v, want a *BoundError", tt.spec, err)
			continue
		}
		if be.Spec != tt.spec || !strings.Contains(err.Error(), tt.msg) || !strings.HasPrefix(err.Error(), `bound "`) {
			t.Errorf("ParseBound(%q) error = %q (spec %q), want it to mention %q", tt.spec, err, be.Spec, tt.msg)
		}
	}
}

func TestParseBounds(t *testing.T) {
	bs, err := stats.ParseBounds([]string{"tps=-3%, p99=+5%", "", "tps@c=16=-5%,"})
	if err != nil {
		t.Fatal(err)
	}
	want := stats.Bounds{{Measure: "tps", Percent: -3}, {Measure: "p99", Percent: 5}, {Measure: "tps", Step: "c=16", Percent: -5}}
	if len(bs) != len(want) {
		t.Fatalf("ParseBounds = %v, want %v", bs, want)
	}
	for i := range bs {
		if bs[i] != want[i] {
			t.Errorf("bound %d = %+v, want %+v", i, bs[i], want[i])
		}
	}

	_, err = stats.ParseBounds([]string{"tps=-3%", "tps = -4%"})
	var be *stats.BoundError
	if !errors.As(err, &be) || !strings.Contains(err.Error(), "already has a bound (tps=-3%)") {
		t.Errorf("duplicate bound: error %v", err)
	}
	if _, err := stats.ParseBounds([]string{"tps=-3%,p99"}); !errors.As(err, &be) || be.Spec != "p99" {
		t.Errorf("bad second item: error %v", err)
	}
}

func TestBoundsFor(t *testing.T) {
	// The step's own bound wins whichever comes first.
	bs := stats.Bounds{{Measure: "tps", Step: "c=16", Percent: -5}, {Measure: "tps", Percent: -3}, {Measure: "p99", Percent: 5}}
	tests := []struct {
		m    stats.Measure
		want float64
		ok   bool
	}{
		{stats.Measure{Name: "tps", Step: "c=16"}, -5, true},
		{stats.Measure{Name: "tps", Step: "c=8"}, -3, true},
		{stats.Measure{Name: "tps"}, -3, true},
		{stats.Measure{Name: "p99", Step: "c=16"}, 5, true},
		{stats.Measure{Name: "p50", Step: "c=16"}, 0, false},
	}
	for _, tt := range tests {
		b, ok := bs.For(tt.m)
		if ok != tt.ok || b.Percent != tt.want {
			t.Errorf("For(%s) = %v, %v; want %v, %v", tt.m.Key(), b, ok, tt.want, tt.ok)
		}
	}
}

// FuzzParseBound checks that ParseBound never panics and that what it
// accepts prints back to a spec that parses to the same bound.
func FuzzParseBound(f *testing.F) {
	for _, s := range []string{"tps=-3%", "p99=+5%", "tps@c=16=-5%", " cpu/txn = +2.5% ", "tps", "=%", "a@=+1%", "x=+1e300%", "y=-0%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		b, err := stats.ParseBound(spec)
		if err != nil {
			var be *stats.BoundError
			if !errors.As(err, &be) {
				t.Fatalf("ParseBound(%q) error %v is not a *BoundError", spec, err)
			}
			return
		}
		b2, err := stats.ParseBound(b.String())
		if err != nil || b2 != b {
			t.Fatalf("ParseBound(%q) = %+v; its String %q parses to %+v, %v", spec, b, b.String(), b2, err)
		}
	})
}
