package bisect

import (
	"math/bits"

	"github.com/pgscale/pgscale/internal/result"
)

// search is where a bisection stands over commits 0..n, 0 the good end
// and n the bad one: the intervals known to hold (part of) the change,
// the commits that carry it, and the commits skipped. It decides what to
// measure next and learns from each classification; it measures nothing
// itself (bisectStep does), so that its rules can be followed commit by
// commit in tests.
//
// An interval (lo, hi] holds a change when lo and hi were measured to
// differ. Its midpoint m is measured against both ends and is like lo
// (the change lies in (m, hi]), like hi (in (lo, m]), unlike either (the
// change is split: parts in both), or within the smallest change of
// interest of both (the change is spread too thin to place). A midpoint
// that does not build, or cannot be classified in the rounds allowed, is
// skipped, as git bisect skip does, and the commit nearest the middle
// that is not skipped is measured instead. An interval of one commit
// names it; one whose every inner commit is skipped is unresolved.
type search struct {
	n int
	// skipped marks the commits not to measure again, with why.
	skipped map[int]string
	// spans are the intervals still to narrow, in commit order.
	spans []span
	// found are the commits that carry the change, each with the change
	// from its parent as measured; unresolved the intervals that could
	// not be narrowed to one commit.
	found      []span
	unresolved []unresolvedSpan
}

// span is an interval (lo, hi] that holds a change, and the change from
// lo to hi as the step that made it measured it.
type span struct {
	lo, hi int
	change *result.BisectChange
}

type unresolvedSpan struct {
	span
	why string
}

// newSearch starts a bisection over commits 0..n whose ends differ by
// change.
func newSearch(n int, change *result.BisectChange) *search {
	return &search{n: n, skipped: map[int]string{}, spans: []span{{lo: 0, hi: n, change: change}}}
}

// next returns the next step: the midpoint to measure and its interval's
// ends; ok is false when nothing is left. Intervals of one commit are
// named, and intervals without a commit left to measure put aside, on
// the way.
func (s *search) next() (lo, mid, hi int, ok bool) {
	for len(s.spans) > 0 {
		sp := s.spans[0]
		if sp.hi-sp.lo == 1 {
			s.found = append(s.found, sp)
			s.spans = s.spans[1:]
			continue
		}
		if m, ok := s.midpoint(sp.lo, sp.hi); ok {
			return sp.lo, m, sp.hi, true
		}
		s.unresolved = append(s.unresolved, unresolvedSpan{sp, "every commit between could not be built or classified"})
		s.spans = s.spans[1:]
	}
	return 0, 0, 0, false
}

// midpoint is the commit nearest the middle of (lo, hi) that is not
// skipped: the middle, then one after it, one before, two after...
func (s *search) midpoint(lo, hi int) (int, bool) {
	m := lo + (hi-lo)/2
	for d := 0; d < hi-lo; d++ {
		for _, c := range []int{m + d, m - d} {
			if c > lo && c < hi {
				if _, skip := s.skipped[c]; !skip {
					return c, true
				}
			}
			if d == 0 {
				break
			}
		}
	}
	return 0, false
}

// learn takes the classification of mid, measured in the first interval
// with the changes from its lo to mid and from mid to its hi.
func (s *search) learn(mid int, class string, fromLo, toHi *result.BisectChange) {
	sp := s.spans[0]
	rest := s.spans[1:]
	switch class {
	case result.BisectGood:
		s.spans = append([]span{{lo: mid, hi: sp.hi, change: toHi}}, rest...)
	case result.BisectBad:
		s.spans = append([]span{{lo: sp.lo, hi: mid, change: fromLo}}, rest...)
	case result.BisectPart:
		s.spans = append([]span{{lo: sp.lo, hi: mid, change: fromLo}, {lo: mid, hi: sp.hi, change: toHi}}, rest...)
	case result.BisectNeither:
		s.unresolved = append(s.unresolved, unresolvedSpan{sp, "the commit between is within the smallest change of interest of both ends: the change is spread over the range in parts too small to place"})
		s.spans = rest
	default: // skipped, does not build
		s.skipped[mid] = class
	}
}

// left is how many commits the intervals still to narrow hold, and about
// how many steps narrowing them takes: log₂ of each one's commits,
// rounded up (a change split over more commits takes more).
func (s *search) left() (commits, steps int) {
	for _, sp := range s.spans {
		n := sp.hi - sp.lo
		commits += n
		if n > 1 {
			steps += bits.Len(uint(n - 1)) // ⌈log₂ n⌉
		}
	}
	return commits, steps
}
