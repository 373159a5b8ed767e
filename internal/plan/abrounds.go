package plan

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/pgscale/pgscale/internal/observe"
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
	// Meter, when set, reads what the target's server has cost so far
	// (probe.Meter): in slices, every slice's share is kept with the step
	// (result.Step.Costs).
	Meter func() map[string]float64
}

// AB runs interleaved A/B rounds. With whole-step turns (Slice zero) every
// target runs its whole sweep once per round, in an order drawn at random
// for that round (RoundOrder), so drift and warm-up hit every target alike;
// the engine's Warmup, run at the start of every step, is the per-target,
// per-round warm-up that is not counted. With slices every step of a round
// runs all targets at once, switching target every Slice (rounds.slices).
type AB struct {
	Targets []ABTarget
	Rounds  int
	// Seed draws the order of the targets in each round; record it to
	// repeat the order.
	Seed uint64
	// Slice, when positive, interleaves the targets in slices of this
	// length inside every step instead of whole-step turns (rounds.slices);
	// the first Settle of every slice is not counted.
	Slice, Settle time.Duration
	// BeforeTurn, when set, is called as a target starts its turn in a
	// round (1-based), with its index in Targets; with slices it is called
	// before every step with target -1 (all targets).
	BeforeTurn func(round, target int)
	// AfterStep, when set, sees each step as soon as it is done.
	AfterStep func(round, target int, s result.Step)
	// Connecting, when set, is told how far the connection phase of each
	// step in slices has come (the targets' Sweep.Connecting is told it
	// with whole-step turns).
	Connecting func(observe.Connecting)
	// Reshuffle, when positive, starts a new layout every Reshuffle
	// rounds: before round 1+Reshuffle, 1+2·Reshuffle, ... NewLayout is
	// called with the layout's number (from 2) and returns the targets as
	// they are on it, which replace Targets.
	Reshuffle int
	NewLayout func(ctx context.Context, layout int) ([]ABTarget, error)
	// WarmupRound runs every target's whole sweep once before round 1,
	// the same transactions as a round but unwatched and not recorded,
	// so that round 1 starts from the state every later round starts
	// from. Counting instructions needs it: without it a fresh server's
	// first round read pages into shared buffers that later rounds found
	// there, and counted up to 1 % more (shared_buffers=12MB at scale 1),
	// while the next rounds counted the same to within 2 instructions.
	WarmupRound bool
	// Decided, when set, is asked after every round whose steps all
	// completed whether the run has decided what it was run for (every
	// bounded measure passed or failed): it then stops, with Decided's
	// words in ABRun.Stopped. Rounds is then the most it may run.
	Decided func(run *ABRun) (bool, string)
	// Deadline, when set, stops the run before a round that would end
	// past it, at the pace of the rounds so far.
	Deadline time.Time
	// WarmedUp, when set, is told how long the warm-up round took, and
	// RoundDone how long each round did (its layout's making included).
	WarmedUp  func(took time.Duration)
	RoundDone func(round int, took time.Duration)
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
	// Layouts holds, for every round started, the layout it ran on (1
	// for all without Reshuffle).
	Layouts []int
	// Stopped says why a run that rounds until decided stopped: decided,
	// or the budget of rounds or time that ran out; empty otherwise.
	Stopped string
	// Warmups holds how long each layout's warm-up round took, by
	// layout (WarmupRound), and RoundTimes how long each round started
	// took: its steps, its layout's making apart.
	Warmups    map[int]time.Duration
	RoundTimes []time.Duration
}

// layout readies round r's layout: a new one every Reshuffle rounds
// (NewLayout), and records it.
func (ab *AB) layout(ctx context.Context, r int, run *ABRun) error {
	n := 1
	if ab.Reshuffle > 0 {
		n = (r-1)/ab.Reshuffle + 1
		if r > 1 && (r-1)%ab.Reshuffle == 0 && ab.NewLayout != nil {
			ts, err := ab.NewLayout(ctx, n)
			if err != nil {
				return fmt.Errorf("round %d, cluster layout %d: %w", r, n, err)
			}
			ab.Targets = ts
			// New servers start cold, as the first did: their first
			// round would count reads the later ones do not make.
			if ab.WarmupRound && ab.Slice == 0 {
				if err := ab.warmUp(ctx, n, run); err != nil {
					return fmt.Errorf("round %d, cluster layout %d: %w", r, n, err)
				}
			}
		}
	}
	run.Layouts = append(run.Layouts, n)
	return nil
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
	rs := &rounds{ab: ab, run: &ABRun{Steps: make([][]result.Step, len(ab.Targets))}}
	round := rs.turns
	if ab.Slice > 0 {
		if ab.Targets[0].Sweep.Engine.Duration <= 0 {
			return nil, fmt.Errorf("plan: slices need a duration, not a transaction count")
		}
		round = rs.slices
	} else if ab.WarmupRound {
		if err := ab.warmUp(ctx, 1, rs.run); err != nil {
			return rs.run, err
		}
	}
	return rs.all(ctx, round)
}

// warmUp runs every target's whole sweep once, unwatched and not recorded
// (WarmupRound), on layout n, and records how long it took in run.
func (ab *AB) warmUp(ctx context.Context, n int, run *ABRun) error {
	began := time.Now()
	defer func() {
		if run.Warmups == nil {
			run.Warmups = map[int]time.Duration{}
		}
		run.Warmups[n] = time.Since(began)
	}()
	for _, t := range ab.Targets {
		sw := t.Sweep
		sw.Watchers, sw.AfterStep, sw.Transactions, sw.HoldEdges = nil, nil, nil, true
		sw.uncounted()
		if _, err := sw.Run(ctx); err != nil {
			if strings.HasPrefix(err.Error(), "target "+t.Name+": ") {
				return fmt.Errorf("warm-up round, %w", err) // it names its target already
			}
			return fmt.Errorf("warm-up round, target %s: %w", t.Name, err)
		}
	}
	if ab.WarmedUp != nil {
		ab.WarmedUp(time.Since(began))
		ab.WarmedUp = nil // the estimate is said once
	}
	return nil
}

// rounds is an A/B run under way: what it did so far, and what the rounds
// found of their steps.
type rounds struct {
	ab  *AB
	run *ABRun
	// complete says whether every step of the current round so far
	// completed.
	complete bool
	// empty lists the steps that ran their window without a transaction.
	empty []string
}

// all runs the rounds, each by round (whole-step turns or slices): it
// readies each round's layout, records its order and counts the rounds in
// which every step completed; at the end it says which steps completed no
// transaction.
func (rs *rounds) all(ctx context.Context, round func(ctx context.Context, r int) error) (*ABRun, error) {
	ab, run := rs.ab, rs.run
	began := time.Now()
	for r := 1; r <= ab.Rounds; r++ {
		if err := ctx.Err(); err != nil {
			return run, err
		}
		if !ab.Deadline.IsZero() && r > 1 {
			pace := time.Since(began) / time.Duration(r-1)
			if time.Now().Add(pace).After(ab.Deadline) {
				run.Stopped = fmt.Sprintf("undecided: the time budget ran out after %d rounds", r-1)
				break
			}
		}
		roundBegan := time.Now()
		if err := ab.layout(ctx, r, run); err != nil {
			return run, err
		}
		rs.complete = true
		stepsBegan := time.Now()
		err := round(ctx, r)
		run.RoundTimes = append(run.RoundTimes, time.Since(stepsBegan))
		if err != nil {
			return run, err
		}
		if ab.RoundDone != nil {
			ab.RoundDone(r, time.Since(roundBegan))
		}
		if rs.complete {
			run.RoundsDone++
			if ab.Decided != nil {
				if done, why := ab.Decided(run); done {
					run.Stopped = why
					break
				}
			}
		}
	}
	if ab.Decided != nil && run.Stopped == "" {
		run.Stopped = fmt.Sprintf("undecided: the budget of %d rounds ran out", ab.Rounds)
	}
	if len(rs.empty) > 0 {
		return run, fmt.Errorf("%s: %s", noTransactions, strings.Join(rs.empty, "; "))
	}
	return run, nil
}

// noteEmpty marks step s, target ti's in round r, incomplete when it ran
// its window without a transaction (markEmpty), and lists it then.
func (rs *rounds) noteEmpty(r, ti int, s *result.Step) {
	if markEmpty(s, r) {
		rs.empty = append(rs.empty, fmt.Sprintf("round %d, %s, %d clients", r, rs.ab.Targets[ti].Name, s.Clients))
	}
}

// keep adds steps to target ti's, and counts them toward the round's
// completeness.
func (rs *rounds) keep(ti int, steps ...result.Step) {
	for _, s := range steps {
		rs.complete = rs.complete && s.Complete
	}
	rs.run.Steps[ti] = append(rs.run.Steps[ti], steps...)
}

// turns runs round r with whole-step turns: every target runs its whole
// sweep in turn, in the round's order (RoundOrder).
func (rs *rounds) turns(ctx context.Context, r int) error {
	ab := rs.ab
	order := RoundOrder(ab.Seed, r, len(ab.Targets))
	rs.run.Order = append(rs.run.Order, order)
	for _, ti := range order {
		if err := ctx.Err(); err != nil {
			return err
		}
		if ab.BeforeTurn != nil {
			ab.BeforeTurn(r, ti)
		}
		sw := ab.Targets[ti].Sweep
		sw.Round = r
		sw.AfterStep = func(_ int, s result.Step) {
			if ab.AfterStep != nil {
				markEmpty(&s, r)
				ab.AfterStep(r, ti, s)
			}
		}
		steps, err := sw.Run(ctx)
		for i := range steps {
			rs.noteEmpty(r, ti, &steps[i])
		}
		rs.keep(ti, steps...)
		if err != nil {
			return fmt.Errorf("round %d, target %s: %w", r, ab.Targets[ti].Name, err)
		}
	}
	return nil
}
