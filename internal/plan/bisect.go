package plan

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
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/secret"
	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
)

// BisectRounds is the most rounds a bisect step takes by default to
// classify its commit: counted measures are decided in the first look
// (round 3), time-based ones need more.
const BisectRounds = 12

// BisectMinChange is the smallest change of interest of a measure that
// has none of its own (the time-based ones): the ends must differ by
// more, and a commit carries part of the change when it moves the
// measure by more.
const BisectMinChange = 0.01

// BisectSpec is pgscale bisect: which commit between a good and a bad one
// carries a change of a measure, the target built at each commit and
// measured in interleaved rounds against the ends of the range that
// holds the change.
type BisectSpec struct {
	Common
	// Target is the target spec as given (without NAME=): one of its
	// sources is written without a revision, and is built at each
	// commit (target.BisectSource).
	Target string
	// Good and Bad are the ends: revisions of that source's repository.
	Good, Bad string
	// Measure is the measure judged (compare.Measures); empty chooses
	// instr/txn when counting instructions (pooler-instr/txn for a pooler:
	// pgbouncer: or proxy:), else tps (pooler-cpu/txn for one).
	Measure string
	// MinChange is the smallest change of interest, a fraction; 0 takes
	// the measure's own (instr/txn's 0.1 %), else BisectMinChange.
	MinChange float64
	// RoundsMax is the most rounds a step takes (default BisectRounds):
	// each rounds until its commit is classified.
	RoundsMax  int
	Confidence float64
	// How each step's A/B rounds run, as ABSpec's fields of these names.
	OrderSeed      string
	Slice, Settle  time.Duration
	SliceGiven     bool
	Reshuffle      int
	ReshuffleGiven bool
	// Out is the bisect's directory: the log (result.BisectFile) and
	// each step's A/B result files (default results/bisect-<UTC time>).
	Out string
	// Resume continues the bisect whose log is in Out: the steps it
	// completed are taken from it, and what was built is found in the
	// build cache.
	Resume bool
}

// BisectEndsError says the ends do not differ by more than the smallest
// change of interest (Outcome result.BisectNoChange: nothing to bisect),
// or could not be told apart in the rounds allowed
// (result.BisectUndecided).
type BisectEndsError struct {
	Outcome string
	Msg     string
}

func (e *BisectEndsError) Error() string { return e.Msg }

// RunBisect runs a bisect: it resolves the commits from Good to Bad,
// measures both ends (refusing when they do not differ beyond the
// smallest change of interest), then measures midpoints, each built and
// run in interleaved rounds against the two ends of the interval that
// holds the change until the verdict's outcomes classify it, and names
// the commits that carry the change. The log is written after every
// step, also when the bisect stops early; it returns the log and its
// directory.
func RunBisect(ctx context.Context, spec BisectSpec) (*result.Bisect, string, error) {
	r, err := spec.open(ctx)
	if err != nil {
		return nil, "", err
	}
	err = r.run(ctx)
	r.log.Finished = time.Now().UTC()
	switch {
	case err == nil:
		r.log.Complete, r.log.Reason = true, ""
	case ctx.Err() != nil:
		r.log.Reason = fmt.Sprintf("interrupted at step %d; pgscale bisect --resume %s continues", max(len(r.log.Steps)-1, 0), r.dir)
		err = fmt.Errorf("interrupted; the %s done are in %s (pgscale bisect --resume %s continues): %w",
			prose.Count(r.done(), "step"), r.path(), r.dir, ctx.Err())
	default:
		var ee *BisectEndsError
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
	spec *BisectSpec
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

// open checks the spec, resolves the commits and the measure, and starts
// the log, or reads it back to resume.
func (spec *BisectSpec) open(ctx context.Context) (*bisectRun, error) {
	switch {
	case strings.TrimSpace(spec.Target) == "":
		return nil, usage.Errorf("bisect: give the target to build at each commit: src:PATH, settings:,ext=PATH, or proxy:FILE.yaml with a build: source")
	case spec.Good == "" || spec.Bad == "":
		return nil, usage.Errorf("bisect: give both ends: --good REV --bad REV")
	case len(spec.Load.Clients) != 1:
		return nil, usage.Errorf("bisect judges one step: give one client count (-c %d), not %d", firstOr(spec.Load.Clients, 1), len(spec.Load.Clients))
	}
	if spec.RoundsMax == 0 {
		spec.RoundsMax = BisectRounds
	}
	c := spec.Common
	if _, err := c.check(); err != nil {
		return nil, err
	}
	spec.Common.Probes = c.Probes
	if c.counting() {
		// Under Valgrind, wait events, locks and statement times tell
		// Valgrind's pace, and a step judges only the counts: each of these
		// probes is one more backend started under callgrind in every step,
		// about a quarter of a step's time (53 s against 39 s here).
		for _, name := range []string{probeid.Waits.Name, probeid.Locks.Name, probeid.Statements.Name} {
			spec.Common.Probes.Set(name, false)
		}
	}
	t, err := target.ParseSpec("x=" + spec.Target)
	if err != nil {
		return nil, usage.Wrap(fmt.Errorf("bisect: %w", err))
	}
	t.Name = "" // the messages name the target as given
	if target.HasFrontName(t) {
		return nil, usage.Errorf("bisect: %s names another target to front (of=NAME); bisect runs one target: give it a server of its own, of='SPEC' (default of='settings:')", spec.Target)
	}
	t = target.Fronted(t)
	rev, idx, err := target.BisectSource(t)
	if err != nil {
		return nil, err
	}
	r := &bisectRun{spec: spec, tgt: t, src: idx, built: map[string]*build.Build{}}
	if r.md, err = spec.measure(t.Fronts(), c.counting()); err != nil {
		return nil, err
	}
	r.dir = spec.Out
	if r.dir == "" {
		r.dir = filepath.Join("results", "bisect-"+time.Now().UTC().Format("20060102T150405Z"))
	}
	commits, err := bisectCommits(ctx, rev.Source.Path, spec.Good, spec.Bad)
	if err != nil {
		return nil, err
	}
	if spec.Resume {
		if r.log, err = result.ReadBisect(filepath.Join(r.dir, result.BisectFile)); err != nil {
			return nil, usage.Errorf("bisect --resume %s: %v", r.dir, err)
		}
		if err := r.sameRange(commits); err != nil {
			return nil, err
		}
		r.log.Complete, r.log.Reason, r.log.Outcome, r.log.Culprits, r.log.Unresolved = false, "", "", nil, nil
		// The step that was interrupted (the last) runs again, from the
		// start: its rounds so far are dropped with its files.
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
	if err := checkOut(r.dir, true); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(r.dir, result.BisectFile)); err == nil {
		return nil, usage.Errorf("bisect: %s holds a bisect log already: continue it with --resume %s, or choose another --out", r.dir, r.dir)
	}
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return nil, usage.Errorf("bisect: %v", err)
	}
	minChange := spec.MinChange
	if minChange == 0 {
		minChange = r.md.MinChange
	}
	if minChange == 0 {
		minChange = BisectMinChange
	}
	argv := make([]string, len(spec.Argv))
	for i, a := range spec.Argv {
		argv[i] = secret.Redact(a)
	}
	r.log = &result.Bisect{Version: spec.Version, Argv: argv, Started: time.Now().UTC(), Target: secret.Redact(spec.Target),
		Source: rev.Source.Path, What: rev.What, Good: spec.Good, Bad: spec.Bad, Measure: r.md.Name,
		Step: compare.StepLabel(spec.Load.Clients[0]), Unit: r.md.Unit, Lower: r.md.Direction == stats.LowerIsBetter, Counted: r.md.Counted,
		MinChange: minChange, Confidence: spec.confidence(), RoundsMax: spec.RoundsMax, Commits: commits}
	r.notice(fmt.Sprintf("%s from %s to %s: %s of %s, built at each commit, judged by %s@%s (smallest change of interest %s); log %s",
		prose.Count(len(commits)-1, "commit"), short(commits[0].Hash), short(commits[len(commits)-1].Hash), rev.What, rev.Source.Path,
		r.md.Name, r.log.Step, pct(minChange), r.path()))
	if c.counting() && spec.ReshuffleGiven && spec.Reshuffle == 0 {
		r.notice("each step counts its commits on one cluster layout: where their storage agrees (the same catalog version and extension files), on byte-identical copies of one data, so that a change is the code's on that data; where it does not, each commit makes its own, and the step says that its change may then be the data's")
	}
	return r, r.save()
}

// sameRange checks that a resumed log is of the range the command names.
func (r *bisectRun) sameRange(commits []result.BisectCommit) error {
	l := r.log
	if len(l.Commits) != len(commits) || l.Commits[0].Hash != commits[0].Hash || l.Commits[len(l.Commits)-1].Hash != commits[len(commits)-1].Hash {
		return usage.Errorf("bisect --resume %s: its log is of %s..%s, the command names %s..%s (%s..%s): resume it with its own command (pgscale bisect --resume %s alone)",
			r.dir, short(l.Commits[0].Hash), short(l.Commits[len(l.Commits)-1].Hash), r.spec.Good, r.spec.Bad, short(commits[0].Hash), short(commits[len(commits)-1].Hash), r.dir)
	}
	if l.Measure != r.md.Name {
		return usage.Errorf("bisect --resume %s: its log judges %s, the command %s", r.dir, l.Measure, r.md.Name)
	}
	return nil
}

// measure is the measure the bisect judges.
func (spec *BisectSpec) measure(proxy, counting bool) (compare.MeasureDef, error) {
	name := spec.Measure
	if name == "" {
		switch {
		case counting && proxy:
			name = "pooler-instr/txn"
		case counting:
			name = "instr/txn"
		case proxy:
			name = "pooler-cpu/txn"
		default:
			name = "tps"
		}
	}
	var names []string
	for _, md := range compare.Measures() {
		names = append(names, md.Name)
		if md.Name != name {
			continue
		}
		switch {
		case md.Counted && !counting:
			return md, usage.Errorf("--measure %s is counted under Valgrind: add --count instructions", name)
		case !md.Counted && counting:
			return md, usage.Errorf("--measure %s is a time, which Valgrind slows out of all meaning: with --count instructions give a counted measure (instr/txn, pooler-instr/txn, syscalls/txn...)", name)
		}
		return md, nil
	}
	return compare.MeasureDef{}, usage.Errorf("--measure %q: no such measure (want %s)", name, strings.Join(names, ", "))
}

func (spec *BisectSpec) confidence() float64 {
	if spec.Confidence > 0 {
		return spec.Confidence
	}
	return stats.DefaultConfidence
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
		return &BisectEndsError{Outcome: result.BisectNoChange, Msg: fmt.Sprintf("bisect: the ends do not differ beyond the smallest change of interest (%s): %s; nothing to bisect (--min-change sets it)", pct(l.MinChange), what)}
	}
	return &BisectEndsError{Outcome: result.BisectUndecided, Msg: fmt.Sprintf("bisect: the ends could not be told apart from noise in %s: %s (smallest change of interest %s); more rounds (--rounds auto:N) or a counted measure (--count instructions) would decide it",
		prose.Count(ends.Rounds, "round"), what, pct(l.MinChange))}
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
func (r *bisectRun) notice(s string) { r.spec.notice("bisect: " + s) }

// firstOr is the first of xs, or def.
func firstOr(xs []int, def int) int {
	if len(xs) > 0 {
		return xs[0]
	}
	return def
}

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
