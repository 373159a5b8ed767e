package compare_test

import (
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/compare/comparetest"
)

func TestParseExpectation(t *testing.T) {
	for _, tc := range []struct{ spec, err string }{
		{"efficiency@c=8>=50%", ""},
		{"waits @ c=8 < 20%", ""},
		{"server-cpu/txn@c=8<c=1+20%", ""},
		{"tps@c=4>=c=1", ""},
		{"p99@c=16<=5", ""},
		{"efficiency>=50%", "write QUANTITY@c=N OP VALUE"},
		{"effciency@c=8>=50%", "unknown quantity effciency"},
		{"efficiency@c=8>=50", "efficiency is a share: write it in per cent"},
		{"p99@c=8<5%", "p99 is in ms, not a share"},
		{"tps@c=0>1", "positive integer"},
		{"tps@c=8=1", "comes <, <=, > or >="},
		{"tps@c=8>c=1*2", "a signed percentage"},
	} {
		_, err := compare.ParseExpectation(tc.spec)
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: error %v, want %q", tc.spec, err, tc.err)
		}
	}
}

// Expectations are checked on a file's medians: the baseline of the
// synthetic run gains 1.8× from 1 to 2 clients (efficiency 90%).
func TestCheckExpectations(t *testing.T) {
	in := comparetest.Files(t, comparetest.TwoSides(), []int{1, 2}, 6)[0]
	exps, err := compare.ParseExpectations([]string{"efficiency@c=2>=80%,efficiency@c=2>95%", "tps@c=2>=c=1+75%", "waits@c=2<20%", "client-cpu/txn@c=2<=c=1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := compare.CheckClients(exps, []int{1, 4}); err == nil || !strings.Contains(err.Error(), "no step with 2 clients") {
		t.Errorf("a rule on a count the sweep lacks: %v", err)
	}
	got := compare.Check(in.File, exps)
	want := []struct {
		checked, holds bool
		text           string
	}{
		{true, true, "master: efficiency@c=2>=80%: 90%, holds"},
		{true, false, "master: efficiency@c=2>95%: 90%, fails"},
		{true, true, "tps@c=2>=c=1+75%: 18100 txn/s at 2 clients, 10050 txn/s at 1 (+80.1%), holds"},
		{false, false, "waits not measured at 2 clients, cannot be checked: fails"},
		{true, true, "client-cpu/txn@c=2<=c=1: 11 µs at 2 clients, 11 µs at 1 (+0.0%), holds"},
	}
	for i, w := range want {
		o := got[i]
		if o.Checked != w.checked || o.Holds != w.holds || !strings.Contains(o.String(), w.text) {
			t.Errorf("%s: checked %v holds %v %q, want %v %v %q", o.Spec, o.Checked, o.Holds, o.String(), w.checked, w.holds, w.text)
		}
		if o.Failed() != !(w.checked && w.holds) {
			t.Errorf("%s: failed %v", o.Spec, o.Failed())
		}
	}
}
