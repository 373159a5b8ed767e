package ab_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/pgscale/pgscale/internal/schedule/ab"
)

// Each round's order is a permutation drawn from the seed and the round
// alone, so it can be recomputed from the result file; rounds differ.
func TestRoundOrder(t *testing.T) {
	seen := map[string]bool{}
	for r := 1; r <= 20; r++ {
		o := ab.RoundOrder(42, r, 3)
		if !reflect.DeepEqual(o, ab.RoundOrder(42, r, 3)) {
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
	if reflect.DeepEqual(ab.RoundOrder(1, 1, 8), ab.RoundOrder(2, 1, 8)) {
		t.Errorf("seeds 1 and 2 give the same order of 8 targets")
	}
}

// Every cycle of slices is a permutation drawn from the seed, the round,
// the step and the cycle alone.
func TestSliceOrder(t *testing.T) {
	seen := map[string]bool{}
	for cycle := 0; cycle < 20; cycle++ {
		o := ab.SliceOrder(9, 2, 1, cycle, 2)
		if !reflect.DeepEqual(o, ab.SliceOrder(9, 2, 1, cycle, 2)) {
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
		out = append(out, ab.SliceOrder(seed, round, step, c, 3))
	}
	return out
}
