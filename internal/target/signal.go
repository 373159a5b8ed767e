package target

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// StopOnSignal stops the cluster and exits with status 1 when the process
// gets SIGINT or SIGTERM: for programs (the benchmarks under bench/) that
// otherwise would die with the cluster's directory left behind. pgscale's
// own commands cancel their context instead and clean up on the way out.
func (c *Cluster) StopOnSignal() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		fmt.Fprintf(os.Stderr, "%v: stopping the ephemeral cluster\n", s)
		c.Stop()
		os.Exit(1)
	}()
}
