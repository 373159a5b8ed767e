package target

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/pgscale/pgscale/internal/build"
	"github.com/pgscale/pgscale/internal/usage"
)

// builder is an Arg whose server or program is built before it starts
// (src:, settings: with ext=, proxy: with build:); its plan builds it, and
// pgscale build makes it ahead of a run.
type builder interface {
	// needsBuild says the target has something to build (a settings:
	// target only with extensions).
	needsBuild() bool
	// what is the build to make, and how progress lines name its source.
	what(spec Spec, o *opening) (build.Spec, string, error)
}

// buildOf finds b's build in the cache or makes it (runBuild).
func buildOf(ctx context.Context, spec Spec, b builder, o *opening) (*build.Build, error) {
	w, source, err := b.what(spec, o)
	if err != nil {
		return nil, usage.Wrap(named(spec, err))
	}
	return runBuild(ctx, spec, source, w, o)
}

// builderOf is spec's builder when it builds something.
func builderOf(spec Spec) (builder, error) {
	b, ok := spec.Arg.(builder)
	if !ok || !spec.kind().builds || !b.needsBuild() {
		return nil, usage.Errorf("%s: this target builds nothing; pgscale build takes src: targets, settings: targets with ext=, pgbouncer: targets with src= and proxy: definitions with build:", spec)
	}
	return b, nil
}

// BuildKey returns the build cache's key of what spec's target is started
// from, without building it (pgscale build --prune keeps those).
func BuildKey(ctx context.Context, spec Spec, opt ClusterOptions) (string, error) {
	b, err := builderOf(spec)
	if err != nil {
		return "", err
	}
	w, _, err := b.what(spec, newOpening(opt, Needs{}, nil))
	if err == nil {
		var k string
		if k, err = opt.builder().Key(ctx, w); err == nil {
			return k, nil
		}
	}
	return "", usage.Wrap(named(spec, err))
}

// BuildStatus says, without building anything, what opening spec's target
// builds first: nothing (""), or whether its build is in the build cache
// ("pgscale_loop@base for the installed server (...): in the build cache
// (8477b03f)", or "...: not in the build cache (key 8477b03f): built
// before the run"). What would stop the build before it starts (no
// development headers, headers of another version, a revision that does
// not exist) is the usage error the run would give.
func BuildStatus(ctx context.Context, spec Spec, opt ClusterOptions) (string, error) {
	b, ok := spec.Arg.(builder)
	if !ok || !spec.kind().builds || !b.needsBuild() {
		return "", nil
	}
	w, source, err := b.what(spec, newOpening(opt, Needs{}, nil))
	if err != nil {
		return "", usage.Wrap(named(spec, err))
	}
	bld, key, err := opt.builder().Find(ctx, w)
	if err != nil {
		var he *build.HeadersError
		if errors.As(err, &he) {
			err = he
		}
		return "", usage.Wrap(named(spec, err))
	}
	if bld != nil {
		return fmt.Sprintf("%s: in the build cache (%s)", source, short(key)), nil
	}
	return fmt.Sprintf("%s: not in the build cache (key %s): built before the run", source, short(key)), nil
}

// Build makes what spec's target is started from (a src: target's build,
// a settings: target's extensions), or finds it in the build cache
// (opt.BuildCache), saying what it does through log; nothing starts. A
// failed build is a usage error whose first line names the target, the
// phase and the log; a target that builds nothing is a usage error too.
func Build(ctx context.Context, spec Spec, opt ClusterOptions, log func(string)) (*build.Build, error) {
	b, err := builderOf(spec)
	if err != nil {
		return nil, err
	}
	return buildOf(ctx, spec, b, newOpening(opt, Needs{}, log))
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
		what := p.source
		if p.name == p.source {
			what = "it"
		}
		if e.Phase == build.PhaseCopy {
			// The server was found (or is the installed one): only the
			// extensions are built, into a copy of it.
			p.log(fmt.Sprintf("building %s: %s is not in the build cache (key %s); the server is, so only its extensions are built (seconds)",
				p.name, what, short(e.Key)))
		} else {
			p.log(fmt.Sprintf("building %s: %s is not in the build cache (key %s); building it takes minutes", p.name, what, short(e.Key)))
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
		if p.name == p.source {
			p.log(fmt.Sprintf("%s is built (from the build cache: %s%s)", p.source, b.Root, made))
		} else {
			p.log(fmt.Sprintf("target %s: %s is built (from the build cache: %s%s)", p.name, p.source, b.Root, made))
		}
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
