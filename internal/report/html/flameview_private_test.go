package html

import (
	"math"
	"testing"

	"github.com/pgscale/pgscale/internal/flame"
)

// TestDiffTable: a differential graph's table lists the boxes drawn as
// changed, the largest change per transaction first, each worded with
// its change and the relative change ("+4.00 (+6.5%)"), a new function's
// as new.
func TestDiffTable(t *testing.T) {
	d := flameDiff{Diff: flame.Diff{Unit: "instructions", BaseTxns: 1000, CandTxns: 1200}, Boxes: []diffFrame{
		{Frame: flame.Frame{Name: "all"}, Change: num(0.07)},
		{Frame: flame.Frame{Name: "main", Depth: 1}, BasePerTxn: 721, CandPerTxn: 771, Change: num(50.0 / 721), Significant: true},
		{Frame: flame.Frame{Name: "find_server", Depth: 2}, BasePerTxn: 62, CandPerTxn: 66, Change: num(4.0 / 62), Significant: true},
		{Frame: flame.Frame{Name: "fresh", Depth: 2}, BasePerTxn: 0, CandPerTxn: 3, Change: num(math.NaN()), Significant: true},
		{Frame: flame.Frame{Name: "other_work", Depth: 2}, BasePerTxn: 659, CandPerTxn: 705, Change: num(46.0 / 659)},
	}}
	v := diffOf(d)
	want := []string{"+50.0 (+6.9%)", "+4.00 (+6.5%)", "+3.00 (new)"}
	if len(v.Top) != len(want) {
		t.Fatalf("the table %+v, want %d rows", v.Top, len(want))
	}
	for i, w := range want {
		if v.Top[i].ChangeText != w {
			t.Errorf("row %d (%s): %q, want %q", i, v.Top[i].Name, v.Top[i].ChangeText, w)
		}
	}
}
