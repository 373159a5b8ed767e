package plan

import (
	"context"
	"fmt"
	"time"

	"github.com/pgscale/pgscale/internal/disturb"
	"github.com/pgscale/pgscale/internal/probe"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
)

// counting reports whether the run counts the server's instructions
// (--count instructions).
func (c *Common) counting() bool { return c.Probes.On(probe.NameInstructions) }

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
	c.Probes.Set(probe.NameCounters, false)
	c.Cluster.Valgrind = v
	// Every target counts on a server of its own, started the same way:
	// on a shared server the first target to run pays, in its count, for
	// what a fresh server does once (0.5 % in the first round here), and
	// a counted server's layout is already fixed (no address-space
	// randomisation, a fixed environment), so it is not re-created.
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
func (c *Common) countFromHere(ctx context.Context, p *prepared) error {
	cl := p.srv.Origin().Cluster
	if !c.counting() || cl == nil || !cl.Counts() || cl.UnderValgrind() {
		return nil
	}
	began := time.Now()
	c.notice(prefixed(p.name, "counting instructions: the data is made; restarting the server under Valgrind..."))
	if err := cl.Count(ctx); err != nil {
		return named(p.name, fmt.Errorf("restart the server under Valgrind: %w", err))
	}
	c.notice(prefixed(p.name, fmt.Sprintf("counting instructions: the server runs under Valgrind (restarted in %v)", time.Since(began).Round(100*time.Millisecond))))
	return nil
}

// callgrind is how the probes reach a server run under Valgrind, nil for
// any other.
func callgrind(c *target.Cluster) *probe.Callgrind {
	if c == nil || !c.UnderValgrind() {
		return nil
	}
	return &probe.Callgrind{Control: c.Callgrind, Out: c.CallgrindOut}
}

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
// steps of every target and round, run one after the other.
func (c *Common) countNotice(targets, rounds int) {
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
	if c.Probes.CacheSim {
		perTxn, what = 2.0*cacheSlower/countedTPS, "counting instructions and simulating caches: the servers run under Valgrind's callgrind, 100 times slower or more"
	}
	total := countedStartup + time.Duration(steps)*countedStep + time.Duration(float64(txn)*perTxn*float64(time.Second))
	c.notice(fmt.Sprintf("%s; "+
		"%d steps of %d transactions in all, a first round of them not counted (and as many again to warm up each step): expect about %v for select-only, longer for heavier transactions",
		what, steps, txn, total.Round(time.Second)))
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
	if _, err := w.Run(ctx); err != nil {
		return fmt.Errorf("warm-up round: %w", err)
	}
	return nil
}
