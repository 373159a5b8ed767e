package build

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/pgscale/pgscale/internal/proc"
	"github.com/pgscale/pgscale/internal/prose"
)

// session is one build in progress: its log, its environment and where it
// reports progress. Each phase's commands write to the log.
type session struct {
	name, key string
	log       *os.File
	logPath   string
	env       []string
	progress  func(Event)
	phases    []PhaseRecord
}

// phase runs fn as the named phase: it reports the start and the end, times
// it, and turns a failure into an *Error carrying the phase's last lines.
func (s *session) phase(ctx context.Context, name string, fn func() error) error {
	s.emit(Event{Name: s.name, Key: s.key, Phase: name})
	fmt.Fprintf(s.log, "\n== %s (%s)\n", name, time.Now().UTC().Format(time.RFC3339))
	start := time.Now()
	from, _ := s.log.Seek(0, io.SeekCurrent)
	err := fn()
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	took := time.Since(start)
	if err != nil {
		if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		fmt.Fprintf(s.log, "== %s failed after %s: %v\n", name, took.Round(time.Millisecond), err)
		out := make([]byte, 0)
		if end, _ := s.log.Seek(0, io.SeekCurrent); end > from {
			out = make([]byte, end-from)
			s.log.ReadAt(out, from)
		}
		return &Error{Name: s.name, Key: s.key, Phase: name, Tail: tailLines(string(out), 20), Err: err}
	}
	s.phases = append(s.phases, PhaseRecord{Name: name, Seconds: took.Seconds()})
	s.emit(Event{Name: s.name, Key: s.key, Phase: name, Done: true, Elapsed: took})
	return nil
}

func (s *session) emit(e Event) {
	if s.progress != nil {
		s.progress(e)
	}
}

// run runs a command in dir with the session's environment (plus extra),
// its output going to the log. The command runs in a process group of its
// own, killed whole when ctx ends, so no compiler outlives an interrupted
// build.
func (s *session) run(ctx context.Context, dir string, extra []string, name string, args ...string) error {
	fmt.Fprintf(s.log, "$ (cd %s && %s)\n", dir, prose.Command(append([]string{name}, args...)))
	err := proc.Run(ctx, proc.Spec{Name: name, Path: name, Args: args, Dir: dir,
		Env: append(append([]string(nil), s.env...), extra...), Output: s.log})
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
