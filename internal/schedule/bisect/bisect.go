package bisect

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pgscale/pgscale/internal/build"
	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/schedule/ab"
	"github.com/pgscale/pgscale/internal/secret"
	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
)

// Rounds is the most rounds a bisect step takes by default to classify
// its commit: counted measures are decided in the first look (round 3),
// time-based ones need more.
const Rounds = 12

// MinChange is the smallest change of interest of a measure that has
// none of its own (the time-based ones): the ends must differ by more,
// and a commit carries part of the change when it moves the measure by
// more.
const MinChange = 0.01

// Spec is pgscale bisect: which commit between a good and a bad one
// carries a change of a measure, the target built at each commit and
// measured in interleaved rounds against the ends of the range that
// holds the change. It is made and checked where it was given: the
// commits resolved, the measure chosen, the log to resume read.
type Spec struct {
	// AB is how every step's A/B rounds run, settled: the experiment,
	// slices, cluster layouts, order seed, confidence, the most rounds;
	// each step gives it its targets (the commits' builds), its
	// directory and what decides it.
	AB ab.Spec
	// Target is the target, without a name (a pooler or proxy fronting a
	// server of its own); its source Source, the Index-th, is written
	// without a revision and built at each commit. Given is the target
	// as given, for the log.
	Target target.Spec
	Source target.Revisioned
	Index  int
	Given  string
	// Good and Bad are the ends as given; Commits the commits from good
	// to bad along bad's first-parent line, with their subjects.
	Good, Bad string
	Commits   []result.BisectCommit
	// Measure is the measure judged, at the one client count of the
	// experiment; MinChange the smallest change of interest, a fraction.
	Measure   compare.MeasureDef
	MinChange float64
	// Out is the bisect's directory: the log (result.BisectFile) and
	// each step's A/B result files.
	Out string
	// Resume, when set, is the log in Out of the bisect to continue, of
	// the same range and measure: the steps it completed are taken from
	// it, and what was built is found in the build cache.
	Resume *result.Bisect
	// Continue is how the user continues the bisect once interrupted, in
	// the words they run it with ("pgscale bisect --resume DIR"): the
	// log's reason and the error say it (empty: they do not).
	Continue string
	// Say words the remedies a step's comparison names in the why the
	// log keeps (compare.Options.Say).
	Say diagnose.Say
}

// EndsError says the ends do not differ by more than the smallest
// change of interest MinChange (Outcome result.BisectNoChange: nothing
// to bisect), or could not be told apart in the Rounds they took
// (result.BisectUndecided); What is the measure's change from one to the
// other. What would bisect them (a smaller change of interest, more
// rounds, a counted measure) the edge words, as the user gives it.
type EndsError struct {
	Outcome   string
	What      string
	MinChange float64
	Rounds    int
}

// Error says why the ends cannot be bisected.
func (e *EndsError) Error() string {
	if e.Outcome == result.BisectNoChange {
		return fmt.Sprintf("bisect: the ends do not differ beyond the smallest change of interest (%s): %s; nothing to bisect", pct(e.MinChange), e.What)
	}
	return fmt.Sprintf("bisect: the ends could not be told apart from noise in %s: %s (smallest change of interest %s)",
		prose.Count(e.Rounds, "round"), e.What, pct(e.MinChange))
}

// Run runs a bisect: it measures both ends (refusing when they do not differ beyond the
// smallest change of interest), then measures midpoints, each built and
// run in interleaved rounds against the two ends of the interval that
// holds the change until the verdict's outcomes classify it, and names
// the commits that carry the change. The log is written after every
// step, also when the bisect stops early; it returns the log and its
// directory.
func Run(ctx context.Context, spec Spec) (*result.Bisect, string, error) {
	r, err := open(&spec)
	if err != nil {
		return nil, "", err
	}
	err = r.run(ctx)
	r.log.Finished = time.Now().UTC()
	switch {
	case err == nil:
		r.log.Complete, r.log.Reason = true, ""
	case ctx.Err() != nil:
		r.log.Reason = fmt.Sprintf("interrupted at step %d", max(len(r.log.Steps)-1, 0))
		continues := ""
		if c := spec.Continue; c != "" {
			r.log.Reason += "; " + c + " continues"
			continues = " (" + c + " continues)"
		}
		err = fmt.Errorf("interrupted; the %s done are in %s%s: %w", prose.Count(r.done(), "step"), r.path(), continues, ctx.Err())
	default:
		var ee *EndsError
		if errors.As(err, &ee) {
			r.log.Complete, r.log.Outcome = true, ee.Outcome
		} else {
			r.log.Reason = err.Error()
		}
	}
	if werr := r.save(); werr != nil {
		err = errors.Join(err, werr)
	}
	return r.log, r.dir, err
}

// bisectRun is a bisect under way.
type bisectRun struct {
	spec *Spec
	log  *result.Bisect
	dir  string
	// tgt is the target as parsed, src which of its sources is bisected.
	tgt target.Spec
	src int
	md  compare.MeasureDef
	// worse says the change makes the measure worse from good to bad (a
	// regression); false for an improvement.
	worse bool
	// built lists the commits built (or found built) in this run.
	built map[string]*build.Build
	// stepTime is how long each step run here took, for the estimate.
	stepTime []time.Duration
}

// open starts the log, or takes it back to resume: the step that was
// interrupted (the last) runs again, from the start, its rounds so far
// dropped with its files.
func open(spec *Spec) (*bisectRun, error) {
	r := &bisectRun{spec: spec, tgt: spec.Target, src: spec.Index, md: spec.Measure, built: map[string]*build.Build{}, dir: spec.Out}
	c := &spec.AB.Common
	commits := spec.Commits
	if spec.Resume != nil {
		r.log = spec.Resume
		r.log.Complete, r.log.Reason, r.log.Outcome, r.log.Culprits, r.log.Unresolved = false, "", "", nil, nil
		steps := r.log.Steps[:0]
		for _, st := range r.log.Steps {
			if st.Complete {
				steps = append(steps, st)
			} else if st.Dir != "" {
				os.RemoveAll(filepath.Join(r.dir, st.Dir))
			}
		}
		r.log.Steps = steps
		r.notice(fmt.Sprintf("resuming %s: %s done of the %s", r.path(), prose.Count(r.done(), "step"), prose.Count(len(commits)-1, "commit")))
		return r, nil
	}
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return nil, usage.Errorf("bisect: %v", err)
	}
	argv := make([]string, len(c.Argv))
	for i, a := range c.Argv {
		argv[i] = secret.Redact(a)
	}
	rev := spec.Source
	confidence := spec.AB.Confidence
	if confidence == 0 {
		confidence = stats.DefaultConfidence
	}
	r.log = &result.Bisect{Version: c.Version, Argv: argv, Started: time.Now().UTC(), Target: secret.Redact(spec.Given),
		Source: rev.Source.Path, What: rev.What, Good: spec.Good, Bad: spec.Bad, Measure: r.md.Name,
		Step: compare.StepLabel(c.Load.Clients[0]), Unit: r.md.Unit, Lower: r.md.Direction == stats.LowerIsBetter, Counted: r.md.Counted,
		MinChange: spec.MinChange, Confidence: confidence, RoundsMax: spec.AB.RoundsMax, Commits: commits}
	r.notice(fmt.Sprintf("%s from %s to %s: %s of %s, built at each commit, judged by %s@%s (smallest change of interest %s); log %s",
		prose.Count(len(commits)-1, "commit"), short(commits[0].Hash), short(commits[len(commits)-1].Hash), rev.What, rev.Source.Path,
		r.md.Name, r.log.Step, pct(spec.MinChange), r.path()))
	if c.Counting() && spec.AB.Reshuffle == 0 {
		r.notice("each step counts its commits on one cluster layout: where their storage agrees (the same catalog version and extension files), on byte-identical copies of one data, so that a change is the code's on that data; where it does not, each commit makes its own, and the step says that its change may then be the data's")
	}
	return r, r.save()
}

// run measures the ends, then the midpoints, and names the culprits.
func (r *bisectRun) run(ctx context.Context) error {
	l := r.log
	n := len(l.Commits) - 1
	ends, err := r.step(ctx, 0, -1, n, ceilLog2(n))
	if err != nil {
		return err
	}
	l.Change = ends.FromLo
	if ends.Class != result.BisectBad {
		return r.endsRefused(ends)
	}
	r.worse = (l.Change.Change > 0) == l.Lower
	s := newSearch(n, l.Change)
	for {
		lo, mid, hi, ok := s.next()
		if !ok {
			break
		}
		_, steps := s.left()
		st, err := r.step(ctx, lo, mid, hi, steps)
		if err != nil {
			return err
		}
		l.Commits[mid].Status = st.Class
		s.learn(mid, st.Class, st.FromLo, st.ToHi)
	}
	r.conclude(ctx, s)
	return r.save()
}

// endsRefused is the error of ends that do not differ, or could not be
// told apart.
func (r *bisectRun) endsRefused(ends *result.BisectStep) error {
	l := r.log
	c := l.Change
	what := fmt.Sprintf("%s@%s %s from %s to %s", l.Measure, l.Step, changeText(c), short(l.Commits[0].Hash), short(l.Commits[len(l.Commits)-1].Hash))
	if ends.Class == result.BisectNeither {
		return &EndsError{Outcome: result.BisectNoChange, What: what, MinChange: l.MinChange}
	}
	return &EndsError{Outcome: result.BisectUndecided, What: what, MinChange: l.MinChange, Rounds: ends.Rounds}
}

// conclude names the culprits and what could not be resolved.
func (r *bisectRun) conclude(ctx context.Context, s *search) {
	l := r.log
	total := math.Log1p(l.Change.Change)
	for _, f := range s.found {
		c := result.BisectCulprit{Commit: l.Commits[f.hi], Parent: l.Commits[f.lo].Hash, Change: *f.change,
			DiffStat: diffStat(ctx, l.Source, l.Commits[f.lo].Hash, l.Commits[f.hi].Hash)}
		if total != 0 {
			c.Share = math.Log1p(f.change.Change) / total
		}
		l.Commits[f.hi].Status = result.BisectBad
		l.Culprits = append(l.Culprits, c)
	}
	for _, u := range s.unresolved {
		l.Unresolved = append(l.Unresolved, result.BisectRange{After: l.Commits[u.lo].Hash, First: l.Commits[u.lo+1].Hash, Last: l.Commits[u.hi].Hash, Why: u.why})
	}
	switch {
	case len(l.Culprits)+len(l.Unresolved) > 1 && len(l.Culprits) > 0:
		l.Outcome = result.BisectSplit
	case len(l.Culprits) == 1:
		l.Outcome = result.BisectFound
	default:
		l.Outcome = result.BisectUndetermined
	}
	for _, c := range l.Culprits {
		r.notice(fmt.Sprintf("%s carries %s (%.0f%% of the change): %s", short(c.Commit.Hash), changeText(&c.Change), 100*c.Share, c.Commit.Subject))
	}
}

// save writes the log.
func (r *bisectRun) save() error {
	if err := result.WriteBisect(r.path(), r.log); err != nil {
		return fmt.Errorf("bisect log: %w", err)
	}
	return nil
}

func (r *bisectRun) path() string { return filepath.Join(r.dir, result.BisectFile) }

// done counts the steps the log holds complete.
func (r *bisectRun) done() int {
	n := 0
	for _, s := range r.log.Steps {
		if s.Complete {
			n++
		}
	}
	return n
}

// notice says a line of the bisect's progress.
func (r *bisectRun) notice(s string) { r.spec.AB.Notice("bisect: " + s) }

// short is a commit's abbreviated hash.
func short(h string) string { return result.BisectCommit{Hash: h}.Short() }

// pct writes a fraction as a percentage: "0.1%", "1.02%".
func pct(x float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", 100*x), "0"), ".") + "%"
}

// changeText writes a change with its interval: "+1.02% ± 0.01%".
func changeText(c *result.BisectChange) string {
	if c == nil {
		return "unmeasured"
	}
	return stats.FormatChange(c.Change, c.Lo, c.Hi)
}
