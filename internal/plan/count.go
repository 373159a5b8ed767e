package plan

import (
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
	c.Cluster.Valgrind = v
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
