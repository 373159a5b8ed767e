package compare

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pgscale/pgscale/internal/stats"
)

// Rounds is how many rounds an A/B run takes: a fixed number, or rounds
// until decided — looking at the comparison after every round and
// stopping once every bounded measure is decided — with at most Max
// rounds or, with Budget, as many as fit in that time.
type Rounds struct {
	// N is a fixed number of rounds (Auto false).
	N int
	// Auto rounds until decided, up to Max rounds or Budget.
	Auto   bool
	Max    int
	Budget time.Duration
}

// DefaultAutoMax is the most rounds "auto" takes when no budget is
// given: looks spend alpha over the rounds up to it (stats.Sequential),
// and 30 lets a 2 % spread per round decide a bound 3 % away.
const DefaultAutoMax = 30

// ParseRounds reads --rounds (and a suite's rounds:): "10", "auto"
// (auto:30), "auto:40" (at most 40 rounds) or "auto:20m" (as many as fit
// in 20 minutes).
func ParseRounds(s string) (Rounds, error) {
	s = strings.TrimSpace(s)
	rest, auto := strings.CutPrefix(s, "auto")
	if !auto {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return Rounds{}, fmt.Errorf("rounds %q: want a number of rounds, auto, auto:MAX or auto:DURATION (auto:40, auto:20m)", s)
		}
		return Rounds{N: n}, nil
	}
	r := Rounds{Auto: true, Max: DefaultAutoMax}
	if rest == "" {
		return r, nil
	}
	arg, ok := strings.CutPrefix(rest, ":")
	if !ok || arg == "" {
		return Rounds{}, fmt.Errorf("rounds %q: want auto, auto:MAX or auto:DURATION (auto:40, auto:20m)", s)
	}
	if n, err := strconv.Atoi(arg); err == nil {
		if n < stats.FirstLook {
			return Rounds{}, fmt.Errorf("rounds %q: a decision needs at least %d rounds (a failure %d at 95%%)", s, stats.FirstLook, stats.MinFailRounds(0.95))
		}
		r.Max = n
		return r, nil
	}
	d, err := time.ParseDuration(arg)
	if err != nil || d <= 0 {
		return Rounds{}, fmt.Errorf("rounds %q: the budget after auto: is a number of rounds or a duration such as 20m", s)
	}
	r.Max, r.Budget = 0, d
	return r, nil
}

// String writes the rounds as ParseRounds reads them.
func (r Rounds) String() string {
	switch {
	case !r.Auto:
		return strconv.Itoa(r.N)
	case r.Budget > 0:
		return "auto:" + r.Budget.String()
	}
	return "auto:" + strconv.Itoa(r.Max)
}
