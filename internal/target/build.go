package target

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/pgscale/pgscale/internal/build"
	"github.com/pgscale/pgscale/internal/usage"
)

// builder is an Arg whose server is built before it starts (src:, and
// settings: with ext=); its plan builds it, and pgscale build makes it
// ahead of a run.
type builder interface {
	// needsBuild says the target has something to build (a settings:
	// target only with extensions).
	needsBuild() bool
	build(ctx context.Context, spec Spec, o *opening) (*build.Build, error)
	// key is the build's cache key, found without building.
	key(ctx context.Context, spec Spec, o *opening) (string, error)
}

// BuildKey returns the build cache's key of what spec's target is started
// from, without building it (pgscale build --prune keeps those).
func BuildKey(ctx context.Context, spec Spec, opt ClusterOptions) (string, error) {
	b, ok := spec.Arg.(builder)
	if !ok || !spec.kind().builds || !b.needsBuild() {
		return "", usage.Errorf("%s: a %s: target is not built from source", spec, spec.Kind)
	}
	k, err := b.key(ctx, spec, newOpening(opt, Needs{}, nil))
	if err != nil {
		return "", usage.Wrap(named(spec, err))
	}
	return k, nil
}

// Build makes what spec's target is started from (a src: target's build),
// or finds it in the build cache (opt.BuildCache), saying what it does
// through log; nothing starts. A failed build is a usage error whose first
// line names the target, the phase and the log; a target of a kind that
// builds nothing is a usage error too.
func Build(ctx context.Context, spec Spec, opt ClusterOptions, log func(string)) (*build.Build, error) {
	b, ok := spec.Arg.(builder)
	if !ok || !spec.kind().builds || !b.needsBuild() {
		return nil, usage.Errorf("%s: this target builds nothing; pgscale build takes src: targets and settings: targets with ext=", spec)
	}
	return b.build(ctx, spec, newOpening(opt, Needs{}, log))
}

// buildProgressEvery is how often a long phase says it is still running.
const buildProgressEvery = time.Minute

// buildProgress says, one line per phase, what a build is doing:
// "building master: make… (configure took 46s)", a line a minute in a long
// phase ("building master: make (2m0s)…"), and how it ended.
type buildProgress struct {
	name, source string
	log          func(string)
	started      time.Time
	done         chan struct{}
	once         sync.Once

	mu    sync.Mutex
	built bool      // a phase ran: the build was not in the cache
	phase string    // the phase running, "" between phases
	since time.Time // when it started
	last  string    // the phase that ended last, and how long it took
}

func newBuildProgress(spec Spec, source string, log func(string)) *buildProgress {
	name := spec.Name
	if name == "" {
		name = source
	}
	p := &buildProgress{name: name, source: source, log: log, started: time.Now(), done: make(chan struct{})}
	go p.tick()
	return p
}

// event sees a phase start or end.
func (p *buildProgress) event(e build.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e.Phase == build.PhaseCached {
		return
	}
	if e.Done {
		p.last, p.phase = fmt.Sprintf("%s took %s", e.Phase, roundDuration(e.Elapsed)), ""
		return
	}
	if !p.built {
		p.built = true
		if e.Phase == build.PhaseCopy {
			// The server was found (or is the installed one): only the
			// extensions are built, into a copy of it.
			p.log(fmt.Sprintf("building %s: %s is not in the build cache (key %s); the server is, so only its extensions are built (seconds)",
				p.name, p.source, short(e.Key)))
		} else {
			p.log(fmt.Sprintf("building %s: %s is not in the build cache (key %s); building it takes minutes", p.name, p.source, short(e.Key)))
		}
	}
	msg := fmt.Sprintf("building %s: %s…", p.name, e.Phase)
	if e.Phase == build.PhaseWait {
		msg = fmt.Sprintf("building %s: another pgscale is making the same build; waiting for it…", p.name)
	}
	if p.last != "" {
		msg += " (" + p.last + ")"
	}
	p.phase, p.since = e.Phase, time.Now()
	p.log(msg)
}

// tick says every buildProgressEvery that a long phase still runs.
func (p *buildProgress) tick() {
	t := time.NewTicker(buildProgressEvery)
	defer t.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-t.C:
			p.mu.Lock()
			if p.phase != "" && time.Since(p.since) >= buildProgressEvery {
				p.log(fmt.Sprintf("building %s: %s (%s)…", p.name, p.phase, roundDuration(time.Since(p.since))))
			}
			p.mu.Unlock()
		}
	}
}

// stop ends the ticks.
func (p *buildProgress) stop() { p.once.Do(func() { close(p.done) }) }

// finished says which build the target runs: made now, or found in the
// cache.
func (p *buildProgress) finished(b *build.Build) {
	if b.Cached {
		made := ""
		if m := b.Manifest; m != nil {
			made = fmt.Sprintf(", made %s in %s", m.Created.UTC().Format("2006-01-02 15:04 UTC"), roundDuration(m.Duration()))
		}
		p.log(fmt.Sprintf("target %s: %s is built (from the build cache: %s%s)", p.name, p.source, b.Root, made))
		return
	}
	var phases []string
	if m := b.Manifest; m != nil {
		for _, ph := range m.Phases {
			if d := time.Duration(ph.Seconds * float64(time.Second)); d >= time.Second {
				phases = append(phases, ph.Name+" "+roundDuration(d).String())
			}
		}
	}
	took := ""
	if len(phases) > 0 {
		took = " (" + strings.Join(phases, ", ") + ")"
	}
	p.log(fmt.Sprintf("building %s: done in %s%s: %s", p.name, roundDuration(time.Since(p.started)), took, b.Root))
}

func short(key string) string {
	if len(key) > 8 {
		return key[:8]
	}
	return key
}

func roundDuration(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(time.Second)
	}
	return d.Round(10 * time.Millisecond)
}
