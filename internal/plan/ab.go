package plan

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/pgscale/pgscale/internal/result"
)

// ABTarget is one target of an A/B run, ready to run.
type ABTarget struct {
	// Name names the target in result files and reports.
	Name string
	// Sweep is what one turn of the target runs: the client counts, the
	// engine template with Conn pointing at this target, the program,
	// observers and BeforeStep. Its AfterStep is replaced by AB's.
	Sweep Sweep
}

// AB runs interleaved A/B rounds. With whole-step turns (Slice zero) every
// target runs its whole sweep once per round, in an order drawn at random
// for that round (RoundOrder), so drift and warm-up hit every target alike;
// the engine's Warmup, run at the start of every step, is the per-target,
// per-round warm-up that is not counted. With slices every step of a round
// runs all targets at once, switching target every Slice (runSlices).
type AB struct {
	Targets []ABTarget
	Rounds  int
	// Seed draws the order of the targets in each round; record it to
	// repeat the order.
	Seed uint64
	// Slice, when positive, interleaves the targets in slices of this
	// length inside every step instead of whole-step turns (runSlices);
	// the first Settle of every slice is not counted.
	Slice, Settle time.Duration
	// BeforeTurn, when set, is called as a target starts its turn in a
	// round (1-based), with its index in Targets; with slices it is called
	// before every step with target -1 (all targets).
	BeforeTurn func(round, target int)
	// AfterStep, when set, sees each step as soon as it is done.
	AfterStep func(round, target int, s result.Step)
}

// ABRun is what an A/B run did, also when it stopped early.
type ABRun struct {
	// Order holds, for every round started, the target indexes in the
	// order they ran.
	Order [][]int
	// Steps holds every target's steps of all rounds, in the order run,
	// each with its Round set.
	Steps [][]result.Step
	// RoundsDone counts the rounds in which every target completed every
	// step with at least one transaction: the rounds that can be compared.
	RoundsDone int
}

// RoundOrder returns the order in which n targets run in the given round:
// a permutation of 0..n-1 drawn from seed and the round alone, so the order
// of any round can be recomputed from the seed recorded in the result.
func RoundOrder(seed uint64, round, n int) []int {
	return rand.New(rand.NewPCG(seed, uint64(round))).Perm(n)
}

// noTransactions is the reason given to a step that ran its whole measured
// window without completing a transaction: it has no value to compare.
const noTransactions = "no transaction completed in the measured window"

// markEmpty sets the step's round, and marks it incomplete when it ran its
// window without a transaction; it reports whether it did.
func markEmpty(s *result.Step, round int) bool {
	s.Round = round
	if s.Complete && s.Summary.Transactions == 0 {
		s.Complete, s.Reason = false, noTransactions
		return true
	}
	return false
}

// Run runs the rounds. On an interrupt or a step that could not complete
// (the server gone, every client failed) it stops at once and returns what
// was done, with the error; the steps of the unfinished round are kept, the
// failed one marked incomplete. A step that ran its window without a single
// transaction is marked incomplete too, but the run goes on: its round is
// not counted in RoundsDone, and Run returns an error at the end.
func (ab *AB) Run(ctx context.Context) (*ABRun, error) {
	if len(ab.Targets) < 1 {
		return nil, fmt.Errorf("plan: an A/B run needs targets")
	}
	if ab.Rounds < 1 {
		return nil, fmt.Errorf("plan: rounds must be at least 1, got %d", ab.Rounds)
	}
	if ab.Slice > 0 {
		return ab.runSlices(ctx)
	}
	run := &ABRun{Steps: make([][]result.Step, len(ab.Targets))}
	var empty []string
	for r := 1; r <= ab.Rounds; r++ {
		order := RoundOrder(ab.Seed, r, len(ab.Targets))
		run.Order = append(run.Order, order)
		complete := true
		for _, ti := range order {
			if err := ctx.Err(); err != nil {
				return run, err
			}
			if ab.BeforeTurn != nil {
				ab.BeforeTurn(r, ti)
			}
			sw := ab.Targets[ti].Sweep
			sw.AfterStep = func(_ int, s result.Step) {
				if ab.AfterStep != nil {
					markEmpty(&s, r)
					ab.AfterStep(r, ti, s)
				}
			}
			steps, err := sw.Run(ctx)
			for i := range steps {
				s := &steps[i]
				if markEmpty(s, r) {
					empty = append(empty, fmt.Sprintf("round %d, %s, %d clients", r, ab.Targets[ti].Name, s.Clients))
				}
				complete = complete && s.Complete
			}
			run.Steps[ti] = append(run.Steps[ti], steps...)
			if err != nil {
				return run, fmt.Errorf("round %d, target %s: %w", r, ab.Targets[ti].Name, err)
			}
		}
		if complete {
			run.RoundsDone++
		}
	}
	if len(empty) > 0 {
		return run, fmt.Errorf("%s: %s", noTransactions, strings.Join(empty, "; "))
	}
	return run, nil
}
