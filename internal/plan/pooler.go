package plan

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
)

// poolerExited says a pooler this process started exited while the run
// needed it.
type poolerExited struct {
	target string // empty for run's single target
	err    error  // how it ended (Pooler.ExitError)
}

func (e *poolerExited) Error() string {
	s := e.err.Error() + " while the run needed it"
	if e.target != "" {
		s = "target " + e.target + ": " + s
	}
	return s
}

// watchPoolers returns ctx, cancelled with a *poolerExited cause as soon as
// the pooler of one of targets exits, so that the step running stops at
// once (its clients would otherwise retry for ReconnectTimeout) and says
// why. stop ends the watch; call it before the poolers are stopped.
func watchPoolers(ctx context.Context, targets []*prepared) (_ context.Context, stop func()) {
	wctx, cancel := context.WithCancelCause(ctx)
	stopWatch := watchPoolersWith(targets, cancel)
	return wctx, func() { stopWatch(); cancel(nil) }
}

// watchPoolersWith calls cancel with a cause as soon as the pooler of one
// of targets exits (*poolerExited) or a process of one's ephemeral server
// dies of a signal (*serverCrashed, crash.go); stop ends the watch.
func watchPoolersWith(targets []*prepared, cancel context.CancelCauseFunc) (stop func()) {
	a, b := watchExits(targets, cancel), watchCrashesWith(targets, cancel)
	return func() { a(); b() }
}

// watchExits calls cancel with a *poolerExited cause as soon as the
// pooler of one of targets exits; stop ends the watch (before a pooler is
// stopped on purpose: at the end, or to re-create it for a new layout).
func watchExits(targets []*prepared, cancel context.CancelCauseFunc) (stop func()) {
	done := make(chan struct{})
	for _, t := range targets {
		pb := t.srv.Pooler
		if pb == nil {
			continue
		}
		go func() {
			select {
			case <-pb.Exited():
				cancel(&poolerExited{target: t.name, err: pb.ExitError()})
			case <-done:
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

// blamePooler finds, when a run stopped on err (not an interrupt), a pooler
// that exited, and names it as the cause: it returns err as it now reads
// and the pooler's exit (nil when no pooler is to blame), for the reasons of
// the steps it cut short (blameStep).
func blamePooler(ctx context.Context, targets []*prepared, err error) (error, *poolerExited) {
	var pe *poolerExited
	var sc *serverCrashed
	if err == nil || ctx.Err() != nil {
		return err, nil
	}
	if errors.As(err, &pe) || errors.As(err, &sc) {
		return err, nil // the watch stopped the step, which says so already
	}
	deadline := time.Now().Add(poolerGrace)
	for hasPooler(targets) {
		for _, t := range targets {
			if t.srv.Pooler == nil {
				continue
			}
			if exit := t.srv.Pooler.ExitError(); exit != nil {
				pe = &poolerExited{target: t.name, err: exit}
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

// blameStep puts the pooler's exit in front of the reason of a step it cut
// short.
func blameStep(s *result.Step, pe *poolerExited) {
	if pe != nil && !s.Complete {
		s.Reason = pe.Error() + ": " + s.Reason
		blameOutage(s, pe)
	}
}

// blameOutage says the clients' last lost connection in a step the
// pooler's exit cut short was the pooler's, not the server's.
func blameOutage(s *result.Step, pe *poolerExited) {
	if n := len(s.Outages); n > 0 && s.Outages[n-1].Pooler == "" {
		s.Outages[n-1].Pooler = pe.err.Error()
	}
}

func hasPooler(targets []*prepared) bool {
	for _, t := range targets {
		if t.srv.Pooler != nil {
			return true
		}
	}
	return false
}

// keepPoolerLogs copies the log of every target's pooler beside the result
// files, as path(name, program) (program: "pgbouncer"), before the poolers
// are stopped and their directories removed, and returns a note naming
// them for the incomplete reason ("" when there is none).
func keepPoolerLogs(targets []*prepared, path func(name, program string) string) string {
	var kept []string
	for _, t := range targets {
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

// keepStartLog keeps, when err is a proxy that could not start, its log
// at path(target, program), and names it in the error it returns.
func keepStartLog(err error, path func(name, program string) string) error {
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

// poolerLogPath is where a run's pooler log goes: beside the result file,
// named after it and the pooler's program.
func poolerLogPath(resultPath, program string) string {
	return strings.TrimSuffix(resultPath, filepath.Ext(resultPath)) + "." + program + ".log"
}

// openFilesSlack is what pgscale keeps open besides its clients'
// connections: the probes' and disturbances' own connections, result and
// log files, perf's pipes, the Go runtime's epoll and timers.
const openFilesSlack = 64

// checkOpenFiles makes room in pgscale's open-files limit for clients
// clients holding perClient connections each, plus sessions of its own:
// it raises the soft limit to the hard one (Go does so at start-up; a
// parent may have started it lower since), and a count that still cannot
// fit is a usage error naming the limit.
func checkOpenFiles(clients, perClient, sessions int) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("read the open-files limit: %w", err)
	}
	need := uint64(clients*perClient + sessions + openFilesSlack)
	if lim.Cur < need && lim.Cur < lim.Max {
		raised := lim
		raised.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err == nil {
			lim = raised
		}
	}
	if need <= lim.Cur {
		return nil
	}
	conns := "one connection per client"
	if perClient > 1 {
		conns = fmt.Sprintf("a connection per client to each of %d targets", perClient)
	}
	return usage.Errorf("-c %d: %d clients need about %d open files in pgscale (%s), but its open-files limit is %d (hard limit %d, ulimit -Hn): use fewer clients or raise the hard limit",
		clients, clients, need, conns, lim.Cur, lim.Max)
}
