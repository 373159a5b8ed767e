package cli

import (
	"errors"
	"testing"

	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/schedule/bisect"
	"github.com/pgscale/pgscale/internal/usage"
)

// Ends a bisect refuses say, in the flags' words, what would bisect
// them: ends that do not differ are a usage error, ends that could not be
// told apart an inconclusive one; a log that could not be written after
// the refusal is said too.
func TestBisectEndsWorded(t *testing.T) {
	const what = "tps@c1 +0.10% ± 0.20% from aaaaaaa to bbbbbbb"
	same := &bisect.EndsError{Outcome: result.BisectNoChange, What: what, MinChange: 0.01}
	undecided := &bisect.EndsError{Outcome: result.BisectUndecided, What: what, MinChange: 0.005, Rounds: 12}
	lost := errors.New("write bisect.json: disk full")
	for _, tc := range []struct {
		runErr error
		usage  bool
		want   string
	}{
		{same, true, "bisect: the ends do not differ beyond the smallest change of interest (1%): " + what + "; nothing to bisect (--min-change sets it)"},
		{undecided, false, "bisect: the ends could not be told apart from noise in 12 rounds: " + what + " (smallest change of interest 0.5%); more rounds (a larger --rounds) or a counted measure (--count instructions) would decide it"},
		{errors.Join(same, lost), true, "bisect: the ends do not differ beyond the smallest change of interest (1%): " + what + "; nothing to bisect (--min-change sets it)\n" + lost.Error()},
	} {
		err := bisectError(&result.Bisect{}, tc.runErr)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%v:\n got %v\nwant %s", tc.runErr, err, tc.want)
			continue
		}
		var inc *InconclusiveError
		if usage.Is(err) != tc.usage || !tc.usage && !errors.As(err, &inc) {
			t.Errorf("%s: usage %v, want %v (inconclusive otherwise): %T", tc.want, usage.Is(err), tc.usage, err)
		}
	}
}
