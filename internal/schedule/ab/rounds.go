package ab

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/experiment"
	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/rig"
)

// record is what an A/B run did, also when it stopped early.
type record struct {
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
	// for all without a reshuffle).
	Layouts []int
	// Stopped says why a run that rounds until decided stopped: decided,
	// or the budget of rounds or time that ran out; empty otherwise.
	Stopped string
	// Warmups holds how long each layout's warm-up round took, by
	// layout (counting), and RoundTimes how long each round started
	// took: its steps, its layout's making apart.
	Warmups    map[int]time.Duration
	RoundTimes []time.Duration
}

// rounds is an A/B run under way on its rig: what it did so far, and
// what the rounds found of their steps. With whole-step turns (no slice)
// every target runs its whole sweep once per round, in an order drawn at
// random for that round (RoundOrder), so drift and warm-up hit every
// target alike; the engine's warm-up, run at the start of every step, is
// the per-target, per-round warm-up that is not counted. With slices
// every step of a round runs all targets at once (slices).
type rounds struct {
	r    *rig.Rig
	spec *Spec
	run  *record
	// reshuffle is the rounds per cluster layout (0: one layout);
	// layouts the layouts made, and setupTook what making the first took.
	reshuffle int
	layouts   []result.Layout
	setupTook time.Duration
	// started is when the run started, recorded in its files.
	started time.Time
	// warmup says every target's whole sweep runs once before round 1
	// and on every new layout, the same transactions as a round but
	// unwatched and not recorded, so that round 1 starts from the state
	// every later round starts from. Counting instructions needs it:
	// without it a fresh server's first round read pages into shared
	// buffers that later rounds found there, and counted up to 1 % more
	// (shared_buffers=12MB at scale 1), while the next rounds counted the
	// same to within 2 instructions. estimated says its estimate was said.
	warmup, estimated bool
	// deadline, when set, stops the run before a round that would end
	// past it, at the pace of the rounds so far.
	deadline time.Time
	// complete says whether every step of the current round so far
	// completed; empty lists the steps that ran their window without a
	// transaction.
	complete bool
	empty    []string
}

// newRounds is the run of spec on r, before its first round: the rounds
// per cluster layout it will use (reshuffle).
func newRounds(r *rig.Rig, spec *Spec, setupTook time.Duration, started time.Time) *rounds {
	rs := &rounds{r: r, spec: spec, run: &record{Steps: make([][]result.Step, len(spec.Targets))}, setupTook: setupTook, started: started,
		warmup: spec.Counting()}
	rs.reshuffle = rs.reshuffles()
	return rs
}

// reshuffles is the rounds per cluster layout the run uses:
// spec.Reshuffle when the targets run on more than one server and one of
// those is an ephemeral cluster this process can re-create, and the
// rounds make two layouts at least; 0 (one layout) otherwise.
func (rs *rounds) reshuffles() int {
	n := rs.spec.Reshuffle
	if n <= 0 || !rs.r.Layouts() {
		return 0
	}
	if rs.spec.Rounds < 2*n {
		if rs.spec.OneLayout != "" {
			rs.spec.Notice(rs.spec.OneLayout)
		}
		return 0
	}
	return n
}

// round runs round r: whole-step turns, or slices.
func (rs *rounds) round(ctx context.Context, r int) error {
	if rs.spec.Slice > 0 {
		return rs.slices(ctx, r)
	}
	return rs.turns(ctx, r)
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

// all runs the rounds, each by round (whole-step turns or slices): it
// readies each round's layout, records its order and counts the rounds in
// which every step completed, asking decided after each complete one when
// the run rounds until decided; at the end it says which steps completed no
// transaction. On an interrupt or a step that could not complete (the
// server gone, every client failed) it stops at once and returns what was
// done, with the error; the steps of the unfinished round are kept, the
// failed one marked incomplete. A step that ran its window without a
// single transaction is marked incomplete too, but the run goes on: its
// round is not counted in RoundsDone, and it returns an error at the end.
func (rs *rounds) all(ctx context.Context, round func(ctx context.Context, r int) error, decided func() (bool, string)) (*record, error) {
	spec, run := rs.spec, rs.run
	if spec.Rounds < 1 {
		return nil, fmt.Errorf("ab: rounds must be at least 1, got %d", spec.Rounds)
	}
	if spec.RoundsMax > 0 && spec.Budget > 0 && rs.deadline.IsZero() {
		rs.deadline = time.Now().Add(spec.Budget)
	}
	if rs.warmup && spec.Slice == 0 {
		if err := rs.warmUp(ctx, 1); err != nil {
			return run, err
		}
	}
	began := time.Now()
	for r := 1; r <= spec.Rounds; r++ {
		if err := ctx.Err(); err != nil {
			return run, err
		}
		if !rs.deadline.IsZero() && r > 1 {
			pace := time.Since(began) / time.Duration(r-1)
			if time.Now().Add(pace).After(rs.deadline) {
				run.Stopped = fmt.Sprintf("undecided: the time budget ran out after %d rounds", r-1)
				break
			}
		}
		roundBegan := time.Now()
		if err := rs.layout(ctx, r); err != nil {
			return run, err
		}
		rs.complete = true
		stepsBegan := time.Now()
		err := round(ctx, r)
		run.RoundTimes = append(run.RoundTimes, time.Since(stepsBegan))
		if err != nil {
			return run, err
		}
		rs.roundDone(r, time.Since(roundBegan))
		if rs.complete {
			run.RoundsDone++
			if spec.RoundsMax > 0 {
				if done, why := decided(); done {
					run.Stopped = why
					break
				}
			}
		}
	}
	if spec.RoundsMax > 0 && run.Stopped == "" {
		run.Stopped = fmt.Sprintf("undecided: the budget of %d rounds ran out", spec.Rounds)
	}
	if len(rs.empty) > 0 {
		return run, fmt.Errorf("%s: %s", noTransactions, strings.Join(rs.empty, "; "))
	}
	return run, nil
}

// layout readies round r's layout: a new one every reshuffle rounds
// (rig.Relayout), warmed up as the first was, and records it.
func (rs *rounds) layout(ctx context.Context, r int) error {
	n := 1
	if rs.reshuffle > 0 {
		n = (r-1)/rs.reshuffle + 1
		if r > 1 && (r-1)%rs.reshuffle == 0 {
			began := time.Now()
			if err := rs.r.Relayout(ctx, n); err != nil {
				return fmt.Errorf("round %d, cluster layout %d: %w", r, n, err)
			}
			rs.layouts = append(rs.layouts, rs.r.Layout(n, time.Since(began)))
			// New servers start cold, as the first did: their first
			// round would count reads the later ones do not make.
			if rs.warmup && rs.spec.Slice == 0 {
				if err := rs.warmUp(ctx, n); err != nil {
					return fmt.Errorf("round %d, cluster layout %d: %w", r, n, err)
				}
			}
		}
	}
	rs.run.Layouts = append(rs.run.Layouts, n)
	return nil
}

// warmUp runs every target's whole sweep once, unwatched and not
// recorded, on layout n, and records how long it took; after the first,
// it says what the counted rounds will take.
func (rs *rounds) warmUp(ctx context.Context, n int) error {
	began := time.Now()
	defer func() {
		if rs.run.Warmups == nil {
			rs.run.Warmups = map[int]time.Duration{}
		}
		rs.run.Warmups[n] = time.Since(began)
	}()
	for ti, t := range rs.r.Targets() {
		for i, c := range rs.spec.Load.Clients {
			if _, err := rs.r.Step(ctx, ti, rig.StepOf{Index: i, Clients: c, Warmup: true}); err != nil {
				if strings.HasPrefix(err.Error(), "target "+t.Name()+": ") {
					return fmt.Errorf("warm-up round, %w", err) // it names its target already
				}
				return fmt.Errorf("warm-up round, target %s: %w", t.Name(), err)
			}
		}
	}
	if !rs.estimated {
		rs.estimated = true // said once
		relayouts := 0
		if rs.reshuffle > 0 {
			relayouts = (rs.spec.Rounds+rs.reshuffle-1)/rs.reshuffle - 1
		}
		rs.spec.CountEstimate(time.Since(began), rs.setupTook, rs.spec.Rounds, len(rs.spec.Targets)*len(rs.spec.Load.Clients), relayouts)
	}
	return nil
}

// roundDone says, after round r of a counted run (the first like the
// rest: with a new layout every round, the first that made one), how long
// the others will take: as long as it did.
func (rs *rounds) roundDone(r int, took time.Duration) {
	c := rs.spec
	left := c.Rounds - r
	if !c.Counting() || left <= 0 || !(r == 1 && rs.reshuffle == 0 || r == 2 && rs.reshuffle == 1) {
		return
	}
	c.Notice(fmt.Sprintf("counting instructions: round %d took %v; expect about %v more for the other %s",
		r, experiment.Brief(took), (time.Duration(left) * took).Round(time.Second), prose.Count(left, "round")))
}

// noteEmpty marks step s, target ti's in round r, incomplete when it ran
// its window without a transaction (markEmpty), and lists it then.
func (rs *rounds) noteEmpty(r, ti int, s *result.Step) {
	if markEmpty(s, r) {
		rs.empty = append(rs.empty, fmt.Sprintf("round %d, %s, %d clients", r, rs.spec.Targets[ti].Name, s.Clients))
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

// stepEnd tells a step of round r, target ti's, as it ends, and a
// counted step's lost count at once.
func (rs *rounds) stepEnd(r, ti int, s result.Step) {
	name := rs.spec.Targets[ti].Name
	rs.spec.Events().Observe(observe.StepEnd{Step: s, Target: name})
	rs.countLost(r, name, &s)
}

// turns runs round r with whole-step turns: every target runs its whole
// sweep in turn, in the round's order (RoundOrder).
func (rs *rounds) turns(ctx context.Context, r int) error {
	spec := rs.spec
	order := RoundOrder(spec.OrderSeed, r, len(spec.Targets))
	rs.run.Order = append(rs.run.Order, order)
	for _, ti := range order {
		if err := ctx.Err(); err != nil {
			return err
		}
		spec.Events().Observe(observe.RoundStart{Round: r, Rounds: spec.Rounds, Auto: spec.RoundsMax > 0, Slice: spec.Slice, Target: spec.Targets[ti].Name})
		var steps []result.Step
		var err error
		for i, n := range spec.Load.Clients {
			var s *result.Step
			if s, err = rs.r.Step(ctx, ti, rig.StepOf{Index: i, Clients: n, Round: r}); s != nil {
				steps = append(steps, *s)
				diagnose.Scaling(steps)
				last := steps[len(steps)-1]
				markEmpty(&last, r)
				rs.stepEnd(r, ti, last)
			}
			if err != nil {
				break
			}
		}
		for i := range steps {
			rs.noteEmpty(r, ti, &steps[i])
		}
		rs.keep(ti, steps...)
		if err != nil {
			return fmt.Errorf("round %d, target %s: %w", r, spec.Targets[ti].Name, err)
		}
	}
	return nil
}
