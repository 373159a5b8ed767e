package plan

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/pgscale/pgscale/internal/target"
)

// serverCrashed says a process of a target's ephemeral server died of a
// signal while the run needed it (target.CrashError): the step stops at
// once, and the run exits 3 with what the server's log says.
type serverCrashed struct {
	target string // empty for run's single target
	err    *target.CrashError
}

func (e *serverCrashed) Error() string {
	if e.target == "" {
		return e.err.Error()
	}
	return "target " + e.target + ": " + e.err.Error()
}

func (e *serverCrashed) Unwrap() error { return e.err }

// crashPoll is how often the server logs are read for a process that
// died: a crashed backend's postmaster restarts every other and the
// clients reconnect, so without the watch a backend that dies on every
// transaction kept a counted step reconnecting for minutes.
const crashPoll = 250 * time.Millisecond

// watchCrashesWith calls cancel with a *serverCrashed cause as soon as the
// log of one of the targets' ephemeral servers says one of its processes
// died of a signal; stop ends the watch (before a cluster is stopped or
// re-created on purpose).
func watchCrashesWith(targets []*prepared, cancel context.CancelCauseFunc) (stop func()) {
	done := make(chan struct{})
	seen := map[*target.Cluster]bool{}
	for _, t := range targets {
		cl := t.srv.Origin().Cluster
		if cl == nil || seen[cl] {
			continue
		}
		seen[cl] = true
		from := cl.LogSize()
		go func() {
			tick := time.NewTicker(crashPoll)
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-tick.C:
					if e := cl.Crash(from); e != nil {
						e.Ext = oneExtension(t.srv.Origin())
						cancel(&serverCrashed{target: t.name, err: e})
						return
					}
				}
			}
		}()
	}
	var once sync.Once
	return func() { once.Do(func() { close(done) }) }
}

// blameCrash names, when a set-up failed, a server process that died of a
// signal since the log was at from as its cause: the set-up's own error
// is then only the lost connection ("unexpected EOF").
func blameCrash(name string, srv *target.Server, from int64, err error) error {
	cl := srv.Cluster
	if err == nil || cl == nil {
		return err
	}
	// The postmaster logs the death a moment after the client saw it.
	for deadline := time.Now().Add(time.Second); ; time.Sleep(50 * time.Millisecond) {
		if e := cl.Crash(from); e != nil {
			e.Ext = oneExtension(srv)
			return fmt.Errorf("%w (%s)", &serverCrashed{target: name, err: e}, err.Error())
		}
		if time.Now().After(deadline) {
			return err
		}
	}
}

// oneExtension is the source of the server's extension when it was built
// with exactly one (ext=SOURCE), for a crash's advice; "" otherwise.
func oneExtension(srv *target.Server) string {
	if b := srv.Info.Build; b != nil && len(b.Extensions) == 1 {
		return b.Extensions[0].Source
	}
	return ""
}
