package plan

import (
	"context"
	"fmt"
	"time"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/disturb"
	"github.com/pgscale/pgscale/internal/engine"
	"github.com/pgscale/pgscale/internal/probe"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
)

// counting reports whether the run counts the server's instructions
// (--count instructions).
func (c *Common) counting() bool { return c.Probes.On(probeid.Instructions.Name) }

// checkCount finds what cannot go with --count instructions before
// anything starts, and finds Valgrind: every ephemeral server then runs
// under it. The transactions counted must be exactly those run between
// the window's edges: -t, no connection per transaction, no disturbance.
func (c *Common) checkCount(ds []disturb.Disturbance) error {
	if !c.counting() {
		return nil
	}
	switch {
	case c.Load.Transactions <= 0:
		return usage.Errorf("--count instructions needs -t (transactions per client), not -T: under Valgrind the server runs about 50 times slower, and the count is exact only over whole transactions")
	case c.Load.Connect:
		return usage.Errorf("--count instructions counts the backends connected when the window starts: -C opens a new one for every transaction")
	case len(ds) > 0:
		return usage.Errorf("--count instructions counts the clients' transactions alone: drop --disturb")
	}
	v, err := target.FindValgrind()
	if err != nil {
		return err
	}
	if c.Probes.CacheSim {
		v.Extra = probe.CacheSimOptions()
	}
	// Hardware counters would count Valgrind's work, not the server's.
	c.Probes.Set(probeid.Counters.Name, false)
	c.Cluster.Valgrind = v
	// Every target counts on a server of its own, started the same way:
	// on a shared server the first target to run pays, in its count, for
	// what a fresh server does once (0.5 % in the first round here). Its
	// layout is fixed (no address-space randomisation, a fixed
	// environment), but not its data: what the set-up builds with
	// randomness (an index graph, a sample, a table's physical order)
	// differs from one cluster to the next, so an A/B run re-creates them
	// every round by default (CountedReshuffle).
	c.Cluster.Separate = true
	return nil
}

// native restarts the target's counted server natively, when a suite's
// earlier cell left it under Valgrind: the data and the set-up are made
// at native speed.
func (c *Common) native(ctx context.Context, p *prepared) error {
	cl := p.srv.Origin().Cluster
	if !c.counting() || cl == nil || !cl.UnderValgrind() {
		return nil
	}
	c.notice(prefixed(p.name, "counting instructions: restarting the server natively for the set-up..."))
	if err := cl.Native(ctx); err != nil {
		return named(p.name, fmt.Errorf("restart the server natively: %w", err))
	}
	return nil
}

// countFromHere restarts the target's server under Valgrind once its
// data is made (target.Cluster.Count): only the measured steps and their
// warm-up run under callgrind. The set-up ran natively: an extension's
// 10 000 rows and an index took nine minutes under Valgrind's
// uninstrumented speed, about as many seconds natively. Only the server
// whose instructions are counted (the target's, or the first a proxy
// fronts) runs under Valgrind; replicas and a proxy's other servers stay
// native.
func (c *Common) countFromHere(ctx context.Context, p *prepared, setup time.Duration) error {
	cl := p.srv.Origin().Cluster
	if !c.counting() || cl == nil || !cl.Counts() || cl.UnderValgrind() || c.Probes.PoolerOnly {
		return nil // counting the pooler alone (--count pooler), the server stays native
	}
	began := time.Now()
	c.notice(prefixed(p.name, fmt.Sprintf("counting instructions: the data and set-up made natively in %v; restarting the server under Valgrind...", brief(setup))))
	if err := cl.Count(ctx); err != nil {
		return named(p.name, fmt.Errorf("restart the server under Valgrind: %w", err))
	}
	c.notice(prefixed(p.name, fmt.Sprintf("counting instructions: the server runs under Valgrind (restarted in %v)", brief(time.Since(began)))))
	return nil
}

// countLost says, the moment it happens, that a counted step completed
// its transactions without a count (the instructions probe could not
// run: a connection that timed out under load): the round, the target,
// the step and the cause, in one line. The comparison leaves the round
// out and says so again.
func (c *Common) countLost(round int, name string, s *result.Step) {
	if !c.counting() || !s.Complete {
		return
	}
	if why := compare.CountLost(s); why != "" {
		c.notice(fmt.Sprintf("round %d, target %s, %s: the count is lost (%s); the comparison leaves round %d out",
			round, name, prose.Count(s.Clients, "client"), why, round))
	}
}

// CountedReshuffle is the rounds per cluster layout of a counted A/B run
// not given --reshuffle: a new layout every round. A cluster counts the
// same to the instruction from round to round, so its rounds repeat one
// value; what varies is the cluster — a vector index's graph built anew
// made 1 % more distance calls on one cluster than another, where one
// cluster's rounds said ± 0.000 % — and only new clusters put that in
// the interval.
const CountedReshuffle = 1

// What a counted run costs, measured here (docs/counting-instructions.md): select-only at one and two clients ran about 1 000
// counted transactions a second under callgrind, the warm-up (as many
// transactions, uninstrumented) about twice as fast, and each step spent
// about 2 s connecting under Valgrind, vacuuming and switching counting
// on and off; starting a cluster and creating scale 1 took about 15 s.
// With the cache simulation (--count instructions,cache) the counted
// transactions ran about cacheSlower times slower again, and the warm-up
// as slowly (it runs instrumented, to warm the simulated caches).
const (
	countedTPS     = 1000
	countedStep    = 2 * time.Second
	countedStartup = 15 * time.Second
	cacheSlower    = 3
)

// countNotice says, before a counted run starts, what it will cost: the
// servers' start and the set-up natively (not estimated: the set-up is
// the user's), the restart under Valgrind, then the steps of every
// target and round, run one after the other, at select-only's speed.
// countEstimate says it again from the warm-up round, which runs the
// transactions the run will run.
func (c *Common) countNotice(targets, rounds, layouts int) {
	if !c.counting() {
		return
	}
	steps := targets * rounds * len(c.Load.Clients)
	var txn int
	for _, n := range c.Load.Clients {
		txn += n * c.Load.Transactions
	}
	txn *= targets * rounds
	perTxn, what := 1.5/countedTPS, "counting instructions: the servers run under Valgrind's callgrind, 30 to 50 times slower"
	if c.Probes.PoolerOnly {
		what = "counting the pooler's instructions alone: the pooler runs under Valgrind's callgrind, its servers natively"
	}
	if c.Probes.CacheSim {
		perTxn, what = 2.0*cacheSlower/countedTPS, "counting instructions and simulating caches: the servers run under Valgrind's callgrind, 100 times slower or more"
	}
	total := countedStartup + time.Duration(steps)*countedStep + time.Duration(float64(txn)*perTxn*float64(time.Second))
	on := ""
	if layouts > 1 {
		on = fmt.Sprintf(", on %s (each made with its set-up and a warm-up round)", prose.Count(layouts, "cluster layout"))
	}
	c.notice(fmt.Sprintf("%s, after the data and set-up are made natively; "+
		"%d steps of %d transactions in all%s, a first round of them not counted (and as many again to warm up each step): expect about %v for select-only, "+
		"plus the set-up; a first estimate from the warm-up round follows it",
		what, steps, txn, on, total.Round(time.Second)))
}

// countEstimate says, after the warm-up round, how long the counted
// rounds will take: a warm-up round runs each step's transactions twice
// (the step's warm-up and its window) at Valgrind's uninstrumented speed;
// a counted step runs its warm-up so, its window instrumented, and spends
// countedStep switching counting. How much slower instrumented code runs
// depends on the code: select-only's windows ran about twice as slow as
// its warm-up here, a query computing distances over float8[] vectors in
// SQL five times (countedSlower). With the cache simulation the warm-up
// round runs instrumented already. relayouts are the clusters made again
// on the way, each with its set-up and warm-up round.
func (c *Common) countEstimate(warm, setup time.Duration, rounds, steps, relayouts int) {
	if !c.counting() || rounds <= 0 {
		return
	}
	half := warm / 2
	lo := time.Duration(rounds) * (half + half*countedSlower[0] + time.Duration(steps)*countedStep)
	hi := time.Duration(rounds) * (half + half*countedSlower[1] + time.Duration(steps)*countedStep)
	if c.Probes.CacheSim {
		lo = time.Duration(rounds) * (warm + time.Duration(steps)*countedStep)
		hi = lo
	}
	more := time.Duration(relayouts) * (setup + warm)
	lo, hi = lo+more, hi+more
	span := fmt.Sprintf("%v to %v", lo.Round(time.Second), hi.Round(time.Second))
	if lo == hi {
		span = lo.Round(time.Second).String()
	}
	line := fmt.Sprintf("counting instructions: the warm-up round took %v; the %s to count: expect about %s more (the heavier the transactions' code, the longer)",
		brief(warm), prose.Count(rounds, "round"), span)
	if relayouts > 0 {
		line += fmt.Sprintf(", with %s made again on the way (each with its set-up and a warm-up round)", prose.Count(relayouts, "cluster layout"))
	}
	c.notice(line)
}

// countedSlower is how many times slower a counted window runs than the
// same transactions uninstrumented, the least and the most measured here
// (countEstimate).
var countedSlower = [2]time.Duration{2, 5}

// roundEstimate says, after round r of a counted A/B run (the first like
// the rest: with a new layout every round, the first that made one), how
// long the others will take: as long as it did.
func (c *Common) roundEstimate(r int, took time.Duration, left int) {
	if !c.counting() || left <= 0 {
		return
	}
	c.notice(fmt.Sprintf("counting instructions: round %d took %v; expect about %v more for the other %s",
		r, brief(took), (time.Duration(left) * took).Round(time.Second), prose.Count(left, "round")))
}

// warmUpRound runs a counted run's sweep once before its own, unwatched
// and not recorded, as ab runs every target's before round 1
// (AB.WarmupRound): a fresh server's first round reads into shared
// buffers what later rounds find there, and a single run --count counted
// those reads (43 231 instructions a transaction against 42 980 in later
// rounds here).
func (c *Common) warmUpRound(ctx context.Context, sw *Sweep) error {
	if !c.counting() {
		return nil
	}
	c.notice("counting instructions: a warm-up round first, not counted")
	w := *sw
	w.Watchers, w.AfterStep, w.Transactions, w.HoldEdges = nil, nil, nil, true
	w.uncounted()
	began := time.Now()
	if _, err := w.Run(ctx); err != nil {
		return fmt.Errorf("warm-up round: %w", err)
	}
	c.countEstimate(time.Since(began), 0, 1, len(sw.Clients), 0)
	return nil
}

// countProgressEvery is how often a counted step says how far it has
// come: under Valgrind a step of a heavy transaction runs for minutes,
// and without -P nothing else is printed meanwhile.
const countProgressEvery = 30 * time.Second

// countProgress returns what is told each engine interval of a counted
// step: every countProgressEvery, a notice of the transactions done in
// the step's warm-up or its counted window. Nothing without counting.
func (c *Common) countProgress(name string) func(engine.Progress) {
	if !c.counting() {
		return func(engine.Progress) {}
	}
	var (
		last      time.Duration // the step's elapsed time at the last notice
		prev      time.Duration
		warm, win int64
	)
	return func(pr engine.Progress) {
		if pr.Elapsed < prev { // a new step
			last, warm, win = 0, 0, 0
		}
		prev = pr.Elapsed
		if pr.Warmup {
			warm += pr.Counts.Transactions
		} else {
			win += pr.Counts.Transactions
		}
		if pr.Elapsed-last < countProgressEvery {
			return
		}
		last = pr.Elapsed
		per := int64(pr.Clients * c.Load.Transactions)
		what := fmt.Sprintf("%d transactions of the warm-up (not counted)", warm)
		if !pr.Warmup {
			what = fmt.Sprintf("%d of %d transactions counted", win, per)
		}
		c.notice(prefixed(name, fmt.Sprintf("counting instructions: %s, %s: %s, %v into the step",
			prose.Count(pr.Clients, "client"), what, rate(win+warm, pr.Elapsed), pr.Elapsed.Round(time.Second))))
	}
}

// rate is n transactions in d, per second, as a counted step's progress
// says it.
func rate(n int64, d time.Duration) string {
	if d <= 0 {
		return "0 tps"
	}
	return fmt.Sprintf("%.1f tps", float64(n)/d.Seconds())
}

// uncounted marks the sweep's progress as warm-up throughout: a warm-up
// round's windows are not counted either, and its progress must not say
// they are.
func (sw *Sweep) uncounted() {
	if p := sw.Engine.Progress; p != nil {
		sw.Engine.Progress = func(pr engine.Progress) {
			pr.Warmup = true
			p(pr)
		}
	}
}

// brief is a duration as a counted run's notices say it: to the tenth of
// a second, and under a second to the millisecond ("45ms", not "0s").
func brief(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}
