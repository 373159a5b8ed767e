package rig

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/target"
)

// PoolerExit says a pooler the rig started exited while the run needed
// it.
type PoolerExit struct {
	target string // empty for run's single target
	err    error  // how it ended (Pooler.ExitError)
}

// Error says which target's pooler exited, and how.
func (e *PoolerExit) Error() string {
	s := e.err.Error() + " while the run needed it"
	if e.target != "" {
		s = "target " + e.target + ": " + s
	}
	return s
}

// Blame puts the pooler's exit in front of the reason of a step it cut
// short (nil: none to blame).
func (e *PoolerExit) Blame(s *result.Step) {
	if e != nil && !s.Complete {
		s.Reason = e.Error() + ": " + s.Reason
		e.outage(s)
	}
}

// outage says the clients' last lost connection in a step the pooler's
// exit cut short was the pooler's, not the server's.
func (e *PoolerExit) outage(s *result.Step) {
	if n := len(s.Outages); n > 0 && s.Outages[n-1].Pooler == "" {
		s.Outages[n-1].Pooler = e.err.Error()
	}
}

// ServerCrash says a process of a target's ephemeral server died of a
// signal while the run needed it (target.CrashError): the step stops at
// once, and the run exits 3 with what the server's log says.
type ServerCrash struct {
	target string // empty for run's single target
	err    *target.CrashError
}

// Error says what the server's log says of the crash, and whose server
// it was.
func (e *ServerCrash) Error() string {
	if e.target == "" {
		return e.err.Error()
	}
	return "target " + e.target + ": " + e.err.Error()
}

// Unwrap is the crash as the cluster told it.
func (e *ServerCrash) Unwrap() error { return e.err }

// Guard returns ctx, cancelled with a cause as soon as a pooler the rig
// started exits (*PoolerExit) or a process of one of its ephemeral
// servers dies of a signal (*ServerCrash), so that the step running
// stops at once (its clients would otherwise retry) and says why; stop
// ends the guard, before the servers are stopped on purpose. Relayout
// goes on guarding the servers it makes.
func (r *Rig) Guard(ctx context.Context) (_ context.Context, stop func()) {
	gctx, cancel := context.WithCancelCause(ctx)
	r.cancel, r.unguard = cancel, r.watchServers(cancel)
	return gctx, func() {
		if r.unguard != nil {
			r.unguard()
		}
		cancel(nil)
		r.cancel, r.unguard = nil, nil
	}
}

// watchServers calls cancel with a cause as soon as a pooler exits or a server
// process dies; stop ends the watch.
func (r *Rig) watchServers(cancel context.CancelCauseFunc) (stop func()) {
	a, b := r.watchExits(cancel), r.watchCrashes(cancel)
	return func() { a(); b() }
}

// watchExits calls cancel with a *PoolerExit cause as soon as the pooler
// of one of the targets exits.
func (r *Rig) watchExits(cancel context.CancelCauseFunc) (stop func()) {
	done := make(chan struct{})
	for _, t := range r.targets {
		pb := t.srv.Pooler
		if pb == nil {
			continue
		}
		go func() {
			select {
			case <-pb.Exited():
				cancel(&PoolerExit{target: t.name, err: pb.ExitError()})
			case <-done:
			}
		}()
	}
	var once sync.Once
	return func() { once.Do(func() { close(done) }) }
}

// crashPoll is how often the server logs are read for a process that
// died: a crashed backend's postmaster restarts every other and the
// clients reconnect, so without the watch a backend that dies on every
// transaction kept a counted step reconnecting for minutes.
const crashPoll = 250 * time.Millisecond

// watchCrashes calls cancel with a *ServerCrash cause as soon as the log
// of one of the targets' ephemeral servers says one of its processes
// died of a signal.
func (r *Rig) watchCrashes(cancel context.CancelCauseFunc) (stop func()) {
	done := make(chan struct{})
	seen := map[*target.Cluster]bool{}
	for _, t := range r.targets {
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
						cancel(&ServerCrash{target: t.name, err: e})
						return
					}
				}
			}
		}()
	}
	var once sync.Once
	return func() { once.Do(func() { close(done) }) }
}

// poolerGrace is how long a run that failed waits to see whether one of its
// poolers exited: the clients find a dead pooler (connections refused or
// reset) a moment before this process reaps it.
const poolerGrace = time.Second

// Blame finds, when a run stopped on err (not an interrupt), a pooler
// that exited, and names it as the cause: it returns err as it now reads
// and the pooler's exit (nil when no pooler is to blame), for the reasons
// of the steps it cut short (PoolerExit.Blame).
func (r *Rig) Blame(ctx context.Context, err error) (error, *PoolerExit) {
	var pe *PoolerExit
	var sc *ServerCrash
	if err == nil || ctx.Err() != nil {
		return err, nil
	}
	if errors.As(err, &pe) || errors.As(err, &sc) {
		return err, nil // the guard stopped the step, which says so already
	}
	deadline := time.Now().Add(poolerGrace)
	for r.hasPooler() {
		for _, t := range r.targets {
			if t.srv.Pooler == nil {
				continue
			}
			if exit := t.srv.Pooler.ExitError(); exit != nil {
				pe = &PoolerExit{target: t.name, err: exit}
				return fmt.Errorf("%w: %v", pe, err), pe
			}
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return err, nil
}

func (r *Rig) hasPooler() bool {
	for _, t := range r.targets {
		if t.srv.Pooler != nil {
			return true
		}
	}
	return false
}

// KeepPoolerLogs copies the log of every target's pooler beside the
// result files, as path(name, program) (program: "pgbouncer"), before the
// poolers are stopped and their directories removed, and returns a note
// naming them for the incomplete reason ("" when there is none).
func (r *Rig) KeepPoolerLogs(path func(name, program string) string) string {
	var kept []string
	for _, t := range r.targets {
		pl := t.srv.Pooler
		if pl == nil {
			continue
		}
		p := path(t.name, pl.Program())
		if err := pl.SaveLog(p); err != nil {
			kept = append(kept, fmt.Sprintf("%s's log could not be kept (%v)", pl.Program(), err))
			continue
		}
		kept = append(kept, pl.Program()+"'s log: "+p)
	}
	return strings.Join(kept, "; ")
}

// KeepStartLog keeps, when err is a proxy that could not start, its log
// at path(target, program), and names it in the error it returns.
func KeepStartLog(err error, path func(name, program string) string) error {
	var se *target.StartError
	if !errors.As(err, &se) || se.Log == "" {
		return err
	}
	p := path(se.Target, se.Program)
	if werr := os.MkdirAll(filepath.Dir(p), 0o755); werr == nil {
		if werr = os.WriteFile(p, []byte(se.Log), 0o644); werr == nil {
			return fmt.Errorf("%w; %s's log: %s", err, se.Program, p)
		}
	}
	return err
}

// PoolerLogPath is where a run's pooler log goes: beside the result file,
// named after it and the pooler's program.
func PoolerLogPath(resultPath, program string) string {
	return strings.TrimSuffix(resultPath, filepath.Ext(resultPath)) + "." + program + ".log"
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
			return fmt.Errorf("%w (%s)", &ServerCrash{target: name, err: e}, err.Error())
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
