package plan_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/plan"
	"github.com/pgscale/pgscale/internal/target"
)

func TestParseTargetSpec(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want plan.TargetSpec
	}{
		{"master=bin:/usr/local/pg-master/bin", plan.TargetSpec{Name: "master", Kind: plan.BinTarget, BinDir: "/usr/local/pg-master/bin"}},
		{"base=settings:", plan.TargetSpec{Name: "base", Kind: plan.SettingsTarget}},
		{"big=settings:shared_buffers=2GB,wal_buffers=64MB", plan.TargetSpec{Name: "big", Kind: plan.SettingsTarget,
			Settings: []target.Setting{{Name: "shared_buffers", Value: "2GB"}, {Name: "wal_buffers", Value: "64MB"}}}},
		{"pre=settings:shared_preload_libraries='pg_stat_statements,auto_explain', work_mem = 8MB", plan.TargetSpec{Name: "pre", Kind: plan.SettingsTarget,
			Settings: []target.Setting{{Name: "shared_preload_libraries", Value: "pg_stat_statements,auto_explain"}, {Name: "work_mem", Value: "8MB"}}}},
		{"pooled=dsn:postgres://app:s3cret@db1:6432/app", plan.TargetSpec{Name: "pooled", Kind: plan.DSNTarget, DSN: "postgres://app:s3cret@db1:6432/app"}},
		{"kw=dsn:host=db1 port=5432 dbname=app", plan.TargetSpec{Name: "kw", Kind: plan.DSNTarget, DSN: "host=db1 port=5432 dbname=app"}},
	} {
		got, err := plan.ParseTargetSpec(tc.in)
		if err != nil {
			t.Errorf("ParseTargetSpec(%q): %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseTargetSpec(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestParseTargetSpecErrors(t *testing.T) {
	for _, in := range []string{
		"master",                    // no =
		"master=/usr/bin",           // no kind
		"master=docker:pg15",        // unknown kind
		"=bin:/x",                   // no name
		"bad name=bin:/x",           // space in name
		"../x=bin:/x",               // path in name
		"m=bin:",                    // no dir
		"d=dsn:",                    // no connection string
		"s=settings:a='b,c",         // unbalanced quote
		"s=settings:novalue",        // not k=v
		"p=dsn:postgres://u:pw@h/d", // fine, but checked below for redaction
	} {
		_, err := plan.ParseTargetSpec(in)
		if strings.Contains(in, "pw@") {
			if err != nil {
				t.Errorf("ParseTargetSpec(%q): %v", in, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("ParseTargetSpec(%q) accepted", in)
		}
	}
	_, err := plan.ParseTargetSpec("p=docker:postgres://u:hunter2@h/d")
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error %v shows the password or is missing", err)
	}
}

func TestTargetSpecStringRedacts(t *testing.T) {
	s, err := plan.ParseTargetSpec("pooled=dsn:postgres://app:hunter2@db1:6432/app")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.String(); strings.Contains(got, "hunter2") || !strings.HasPrefix(got, "pooled=dsn:postgres://app:") {
		t.Errorf("String() = %q", got)
	}
}

func TestParseTargetsBaseline(t *testing.T) {
	specs := []string{"a=settings:", "b=settings:x=1", "c=settings:y=2"}
	got, err := plan.ParseTargets(specs, "", 2)
	if err != nil || got[0].Name != "a" {
		t.Fatalf("default baseline: %v, %v", got, err)
	}
	got, err = plan.ParseTargets(specs, "c", 2)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range got {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "c,a,b" {
		t.Errorf("--baseline c: order %v, want c,a,b", names)
	}
	for _, bad := range []struct {
		specs    []string
		baseline string
	}{
		{specs[:1], ""}, // one target
		{[]string{"a=settings:", "a=settings:x=1"}, ""}, // same name twice
		{specs, "nosuch"}, // unknown baseline
	} {
		if _, err := plan.ParseTargets(bad.specs, bad.baseline, 2); err == nil {
			t.Errorf("ParseTargets(%v, %q) accepted", bad.specs, bad.baseline)
		}
	}
}

// Each round's order is a permutation drawn from the seed and the round
// alone, so it can be recomputed from the result file; rounds differ.
func TestRoundOrder(t *testing.T) {
	seen := map[string]bool{}
	for r := 1; r <= 20; r++ {
		o := plan.RoundOrder(42, r, 3)
		if !reflect.DeepEqual(o, plan.RoundOrder(42, r, 3)) {
			t.Fatalf("round %d: order not repeatable", r)
		}
		have := map[int]bool{}
		for _, i := range o {
			have[i] = true
		}
		if len(o) != 3 || len(have) != 3 || !have[0] || !have[1] || !have[2] {
			t.Fatalf("round %d: %v is not a permutation of 0..2", r, o)
		}
		seen[fmt.Sprint(o)] = true
	}
	if len(seen) < 4 {
		t.Errorf("20 rounds of 3 targets gave only %d distinct orders", len(seen))
	}
	if reflect.DeepEqual(plan.RoundOrder(1, 1, 8), plan.RoundOrder(2, 1, 8)) {
		t.Errorf("seeds 1 and 2 give the same order of 8 targets")
	}
}

// Every cycle of slices is a permutation drawn from the seed, the round,
// the step and the cycle alone.
func TestSliceOrder(t *testing.T) {
	seen := map[string]bool{}
	for cycle := 0; cycle < 20; cycle++ {
		o := plan.SliceOrder(9, 2, 1, cycle, 2)
		if !reflect.DeepEqual(o, plan.SliceOrder(9, 2, 1, cycle, 2)) {
			t.Fatalf("cycle %d: order not repeatable", cycle)
		}
		if len(o) != 2 || o[0]+o[1] != 1 {
			t.Fatalf("cycle %d: %v is not a permutation of 0..1", cycle, o)
		}
		seen[fmt.Sprint(o)] = true
	}
	if len(seen) != 2 {
		t.Errorf("20 cycles of 2 targets always ran in the same order")
	}
	if reflect.DeepEqual(sliceOrders(9, 2, 1), sliceOrders(9, 3, 1)) || reflect.DeepEqual(sliceOrders(9, 2, 1), sliceOrders(9, 2, 2)) {
		t.Errorf("rounds or steps share their slice orders")
	}
}

func sliceOrders(seed uint64, round, step int) [][]int {
	var out [][]int
	for c := 0; c < 16; c++ {
		out = append(out, plan.SliceOrder(seed, round, step, c, 3))
	}
	return out
}
