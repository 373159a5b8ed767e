package agent

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Offset is this machine's clock against the coordination database
// server's: the server's clock reads Offset more than this one's, give or
// take Uncertainty.
type Offset struct {
	Offset      time.Duration
	Uncertainty time.Duration
	// RTT is the round trip of the query the estimate came from, the
	// shortest of its samples.
	RTT time.Duration
}

// ToServer turns an instant on this machine's clock into the server's.
func (o Offset) ToServer(t time.Time) time.Time { return t.Add(o.Offset) }

// ToLocal turns an instant on the server's clock into this machine's.
func (o Offset) ToLocal(t time.Time) time.Time { return t.Add(-o.Offset) }

// OffsetSamples is how many round trips an estimate takes.
const OffsetSamples = 8

// Clock reads the server's clock in one round trip: SELECT clock_timestamp().
type Clock func(ctx context.Context) (time.Time, error)

// EstimateOffset estimates the offset of this machine's clock (now) to the
// server's (read) from samples round trips, as NTP does from one: the
// server read its clock somewhere between the moment the query left and
// the moment its answer came back, so against the middle of that interval
// the error is at most half the round trip. The sample with the shortest
// round trip wins, and its half round trip is the uncertainty.
func EstimateOffset(ctx context.Context, samples int, now func() time.Time, read Clock) (Offset, error) {
	if samples < 1 {
		return Offset{}, errors.New("clock offset: need at least one sample")
	}
	best := Offset{RTT: -1}
	for range samples {
		t0 := now()
		s, err := read(ctx)
		t1 := now()
		if err != nil {
			return Offset{}, fmt.Errorf("clock offset: read the server's clock: %w", err)
		}
		rtt := t1.Sub(t0)
		if best.RTT >= 0 && rtt >= best.RTT {
			continue
		}
		mid := t0.Add(rtt / 2)
		best = Offset{Offset: s.Sub(mid), Uncertainty: (rtt + 1) / 2, RTT: rtt}
	}
	return best, nil
}
