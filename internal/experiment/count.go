package experiment

import (
	"fmt"
	"time"

	"github.com/pgscale/pgscale/internal/prose"
)

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

// CountNotice says, before a counted run starts, what it will cost: the
// servers' start and the set-up natively (not estimated: the set-up is
// the user's), the restart under Valgrind, then the steps of every
// target and round, run one after the other, at select-only's speed.
// CountEstimate says it again from the warm-up round, which runs the
// transactions the run will run. Nothing without counting.
func (c *Common) CountNotice(targets, rounds, layouts int) {
	if !c.Counting() {
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
	c.Notice(fmt.Sprintf("%s, after the data and set-up are made natively; "+
		"%d steps of %d transactions in all%s, a first round of them not counted (and as many again to warm up each step): expect about %v for select-only, "+
		"plus the set-up; a first estimate from the warm-up round follows it",
		what, steps, txn, on, total.Round(time.Second)))
}

// CountEstimate says, after the warm-up round, how long the counted
// rounds will take: a warm-up round runs each step's transactions twice
// (the step's warm-up and its window) at Valgrind's uninstrumented speed;
// a counted step runs its warm-up so, its window instrumented, and spends
// countedStep switching counting. How much slower instrumented code runs
// depends on the code: select-only's windows ran about twice as slow as
// its warm-up here, a query computing distances over float8[] vectors in
// SQL five times (countedSlower). With the cache simulation the warm-up
// round runs instrumented already. relayouts are the clusters made again
// on the way, each with its set-up (taking setup) and warm-up round.
func (c *Common) CountEstimate(warm, setup time.Duration, rounds, steps, relayouts int) {
	if !c.Counting() || rounds <= 0 {
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
		Brief(warm), prose.Count(rounds, "round"), span)
	if relayouts > 0 {
		line += fmt.Sprintf(", with %s made again on the way (each with its set-up and a warm-up round)", prose.Count(relayouts, "cluster layout"))
	}
	c.Notice(line)
}

// countedSlower is how many times slower a counted window runs than the
// same transactions uninstrumented, the least and the most measured here
// (CountEstimate).
var countedSlower = [2]time.Duration{2, 5}

// Brief is a duration as a counted run's notices say it: to the tenth of
// a second, and under a second to the millisecond ("45ms", not "0s").
func Brief(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}
