package ab

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/rig"
	"github.com/pgscale/pgscale/internal/step"
)

// SliceOrder returns the order of n targets in one cycle of slices (n
// consecutive slices, one per target) of a step of a round: a permutation
// drawn from the seed, the round, the step's index in the sweep and the
// cycle alone, so any slice's target can be recomputed.
func SliceOrder(seed uint64, round, step, cycle, n int) []int {
	return rand.New(rand.NewPCG(seed, uint64(round)<<48|uint64(step)<<32|uint64(cycle))).Perm(n)
}

// slices runs round r with the targets interleaved in slices inside every
// step: one engine run per step, in which every client holds a connection
// to each target and all clients switch target together every slice, in
// cycles of one slice per target in a random order (SliceOrder); each
// target gets the step's duration of measured time (rig.Slices). The
// step's result is split per target, so a round yields one step per
// target as in whole-step turns.
func (rs *rounds) slices(ctx context.Context, r int) error {
	spec := rs.spec
	k := len(spec.Targets)
	rs.run.Order = append(rs.run.Order, SliceOrder(spec.OrderSeed, r, 0, 0, k)) // the round's first cycle
	for si, n := range spec.Load.Clients {
		if err := ctx.Err(); err != nil {
			return err
		}
		spec.Events().Observe(observe.RoundStart{Round: r, Rounds: spec.Rounds, Auto: spec.RoundsMax > 0, Slice: spec.Slice}) // every target, in slices
		for ti, t := range spec.Targets {
			if err := rs.r.BeforeStep(ctx, ti); err != nil {
				return fmt.Errorf("round %d, target %s: %w", r, t.Name, err)
			}
		}
		order := func(i int) int { return SliceOrder(spec.OrderSeed, r, si, i/k, k)[i%k] }
		steps, err := rs.r.Slices(ctx, rig.SliceOf{Index: si, Clients: n, Round: r, Slice: spec.Slice, Settle: spec.Settle, Order: order})
		for ti, s := range steps {
			rs.noteEmpty(r, ti, &s)
			step.Fail(ctx, &s, err)
			rs.keep(ti, s)
			rs.stepEnd(r, ti, s)
		}
		if cause := step.Cause(ctx); err != nil && cause != nil {
			err = cause
		}
		if err != nil {
			return fmt.Errorf("round %d, %d clients: %w", r, n, err)
		}
	}
	return nil
}
