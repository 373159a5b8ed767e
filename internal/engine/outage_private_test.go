package engine

import (
	"testing"
	"time"
)

// A connection lost after the step's end (a pooler that died stops the
// step while its clients' transactions fail) is an outage of no length,
// never of a negative one; overlapping losses are one outage.
func TestOutageList(t *testing.T) {
	w := time.Unix(1000, 0)
	at := func(s float64) time.Time { return w.Add(time.Duration(s * float64(time.Second))) }
	e := &engine{clients: []*client{{lost: at(2.3)}}}
	got := e.outageList(w, at(2.25))
	if len(got) != 1 || got[0].Start != 2300*time.Millisecond || got[0].Server != got[0].Start || got[0].Back != got[0].Start || got[0].AllBack {
		t.Errorf("lost after the end: %+v", got)
	}

	// Clients that lose a dying pooler a few milliseconds apart, some
	// before the step's end and some after, lost it once.
	e = &engine{clients: []*client{{lost: at(1.98)}, {lost: at(2.01)}, {lost: at(2.09)}, {}}}
	got = e.outageList(w, at(2.0))
	if len(got) != 1 || got[0].Clients != 3 || got[0].Start != 1980*time.Millisecond || got[0].AllBack {
		t.Errorf("one pooler lost by three clients: %+v", got)
	}

	e = &engine{clients: []*client{{}, {}}}
	e.outages.lost = []lostConn{{at(5), at(8.5)}, {at(5.1), at(8.4)}, {at(12), at(12.5)}}
	got = e.outageList(w, at(15))
	if len(got) != 2 || got[0].Clients != 2 || got[0].Server != 8400*time.Millisecond || got[0].Back != 8500*time.Millisecond || !got[0].AllBack || got[1].Start != 12*time.Second {
		t.Errorf("two outages: %+v", got)
	}
}
