package bisect

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/pgscale/pgscale/internal/result"
)

// bisectOver runs a search over commits 0..n whose measure is value(i),
// classifying each midpoint as bisectStep does from exact values against
// tol: like lo when it moved less than tol from lo, like hi when less
// than tol from hi, part when it moved by tol from both. Commits in skip
// are skipped when measured. It returns the commits found, the
// unresolved intervals and the commits measured in order.
func bisectOver(n int, value func(int) float64, tol float64, skip map[int]bool) (found []int, unresolved [][2]int, measured []int) {
	change := func(a, b int) *result.BisectChange {
		return &result.BisectChange{Change: value(b)/value(a) - 1}
	}
	s := newSearch(n, change(0, n))
	for {
		lo, mid, hi, ok := s.next()
		if !ok {
			break
		}
		measured = append(measured, mid)
		if skip[mid] {
			s.learn(mid, result.BisectUnbuildable, nil, nil)
			continue
		}
		fromLo := math.Abs(value(mid)/value(lo)-1) > tol
		toHi := math.Abs(value(hi)/value(mid)-1) > tol
		class := result.BisectNeither
		switch {
		case !fromLo && toHi:
			class = result.BisectGood
		case fromLo && !toHi:
			class = result.BisectBad
		case fromLo && toHi:
			class = result.BisectPart
		}
		s.learn(mid, class, change(lo, mid), change(mid, hi))
	}
	for _, f := range s.found {
		found = append(found, f.hi)
	}
	for _, u := range s.unresolved {
		unresolved = append(unresolved, [2]int{u.lo, u.hi})
	}
	return found, unresolved, measured
}

// parts is a measure that rises by 1 % at each commit of at.
func parts(at ...int) func(int) float64 {
	return func(i int) float64 {
		v := 100.0
		for _, a := range at {
			if i >= a {
				v *= 1.01
			}
		}
		return v
	}
}

func TestBisectSearchFindsEveryCommitInLog2Steps(t *testing.T) {
	for n := 2; n <= 33; n++ {
		for k := 1; k <= n; k++ {
			found, unresolved, measured := bisectOver(n, parts(k), 0.001, nil)
			if !slices.Equal(found, []int{k}) || len(unresolved) > 0 {
				t.Fatalf("n=%d, culprit %d: found %v, unresolved %v (measured %v)", n, k, found, unresolved, measured)
			}
			if want := ceilLog2(n); len(measured) > want {
				t.Errorf("n=%d, culprit %d: %d steps (%v), want at most ⌈log₂ %d⌉ = %d", n, k, len(measured), measured, n, want)
			}
		}
	}
}

func TestBisectSearchNamesEachPartOfASplitChange(t *testing.T) {
	for n := 3; n <= 12; n++ {
		for a := 1; a <= n; a++ {
			for b := a + 1; b <= n; b++ {
				found, unresolved, measured := bisectOver(n, parts(a, b), 0.001, nil)
				if !slices.Equal(found, []int{a, b}) || len(unresolved) > 0 {
					t.Fatalf("n=%d, parts at %d and %d: found %v, unresolved %v (measured %v)", n, a, b, found, unresolved, measured)
				}
			}
		}
	}
	// Three parts.
	found, _, _ := bisectOver(20, parts(3, 9, 17), 0.001, nil)
	if !slices.Equal(found, []int{3, 9, 17}) {
		t.Errorf("three parts: found %v", found)
	}
}

func TestBisectSearchSkipsCommitsThatDoNotBuild(t *testing.T) {
	// The fixture's broken line: 11 commits, the 5th does not build (the
	// 6th fixes it), the cost comes with the 8th.
	found, unresolved, measured := bisectOver(11, parts(8), 0.001, map[int]bool{5: true})
	if !slices.Equal(found, []int{8}) || len(unresolved) > 0 {
		t.Fatalf("found %v, unresolved %v", found, unresolved)
	}
	if measured[0] != 5 || measured[1] != 6 {
		t.Errorf("measured %v: want 5 first (the middle), skipped, then its neighbour 6", measured)
	}
	for n := 4; n <= 16; n++ {
		for k := 1; k <= n; k++ {
			for bad := 1; bad < n; bad++ {
				found, unresolved, _ := bisectOver(n, parts(k), 0.001, map[int]bool{bad: true})
				switch {
				case bad == k-1 && k > 1:
					// The commit before the culprit unbuildable: the culprit
					// cannot be told from it.
					if len(found)+len(unresolved) != 1 {
						t.Errorf("n=%d, culprit %d, %d skipped: found %v, unresolved %v", n, k, bad, found, unresolved)
					}
				case !slices.Equal(found, []int{k}):
					if !(len(unresolved) == 1 && unresolved[0][0] < k && unresolved[0][1] >= k) {
						t.Errorf("n=%d, culprit %d, %d skipped: found %v, unresolved %v", n, k, bad, found, unresolved)
					}
				}
			}
		}
	}
}

func TestBisectSearchUnresolvedWhenNothingBuilds(t *testing.T) {
	skip := map[int]bool{}
	for i := 1; i < 9; i++ {
		skip[i] = true
	}
	found, unresolved, measured := bisectOver(9, parts(4), 0.001, skip)
	if len(found) != 0 || !slices.Equal(unresolved, [][2]int{{0, 9}}) {
		t.Fatalf("found %v, unresolved %v", found, unresolved)
	}
	if len(measured) != 8 {
		t.Errorf("measured %v: want each of the 8 commits between tried once", measured)
	}
}

func TestBisectSearchSpreadTooThin(t *testing.T) {
	// Eight parts of 0.3 % each against a tolerance of 1 %: the middle
	// is 1.2 % from both ends (part of the change either side), the
	// quarters within 1 % of theirs: no commit is named, and the two
	// halves are said unresolved.
	v := func(i int) float64 { return 100 * math.Pow(1.003, float64(i)) }
	found, unresolved, _ := bisectOver(8, v, 0.01, nil)
	if len(found) != 0 || !slices.Equal(unresolved, [][2]int{{0, 4}, {4, 8}}) {
		t.Errorf("found %v, unresolved %v", found, unresolved)
	}
}

func TestBisectLeft(t *testing.T) {
	s := newSearch(9, nil)
	for _, c := range []struct{ commits, steps int }{{9, 4}} {
		commits, steps := s.left()
		if commits != c.commits || steps != c.steps {
			t.Errorf("left: %d commits, %d steps; want %d, %d", commits, steps, c.commits, c.steps)
		}
	}
	if got := fmt.Sprint(ceilLog2(1), ceilLog2(2), ceilLog2(8), ceilLog2(9)); got != "0 1 3 4" {
		t.Errorf("ceilLog2: %s", got)
	}
}
