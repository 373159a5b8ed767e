package stats_test

import (
	"errors"
	"math"
	"testing"

	"github.com/pgscale/pgscale/internal/stats"
)

// near checks got against want within a relative tolerance (absolute near
// zero), treating equal infinities and two NaNs as equal. It reports and
// goes on, so one table row shows every mismatch.
func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	switch {
	case math.IsNaN(want) && math.IsNaN(got):
		return
	case math.IsInf(want, 0) || math.IsInf(got, 0) || math.IsNaN(want) || math.IsNaN(got):
		if got != want {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
		return
	}
	if d := math.Abs(got - want); !(d <= tol*math.Max(1, math.Abs(want))) {
		t.Errorf("%s = %.10g, want %.10g (±%g)", what, got, want, tol)
	}
}

// hasWarning reports whether errs holds a *stats.Warning of kind k.
func hasWarning(errs []error, k stats.WarningKind) bool {
	for _, e := range errs {
		var w *stats.Warning
		if errors.As(e, &w) && w.Kind == k {
			return true
		}
	}
	return false
}

// checkWarnings checks that errs holds exactly the kinds in want (in any
// order, each at least once) and no others.
func checkWarnings(t *testing.T, errs []error, want ...stats.WarningKind) {
	t.Helper()
	wanted := make(map[stats.WarningKind]bool)
	for _, k := range want {
		wanted[k] = true
		if !hasWarning(errs, k) {
			t.Errorf("no %q warning in %v", k, errs)
		}
	}
	for _, e := range errs {
		var w *stats.Warning
		if !errors.As(e, &w) {
			t.Errorf("warning %v is not a *stats.Warning", e)
			continue
		}
		if !wanted[w.Kind] {
			t.Errorf("unexpected %q warning: %v", w.Kind, e)
		}
	}
}

// exps returns exp(x) for each x: candidate values whose log ratios against
// a baseline of ones are exactly the published differences.
func exps(xs ...float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Exp(x)
	}
	return out
}

// ones returns n ones.
func ones(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = 1
	}
	return out
}
