package bisect

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pgscale/pgscale/internal/build"
	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/schedule/ab"
	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/target"
)

// step classifies commit mid of the interval (lo, hi], or with mid -1 the
// ends (lo the good end, hi the bad one): from the log when a complete
// step there did (a resumed bisect), else by building the commits and
// measuring them in interleaved rounds. It returns an error only when the
// bisect cannot go on (interrupted, or the ends could not be measured); a
// midpoint that does not build or cannot be classified comes back
// skipped.
func (r *bisectRun) step(ctx context.Context, lo, mid, hi, stepsLeft int) (*result.BisectStep, error) {
	l := r.log
	ends := mid < 0
	st := &result.BisectStep{N: len(l.Steps), Lo: l.Commits[lo].Hash, Left: hi - lo, StepsLeft: stepsLeft}
	idx, measured := []int{lo, hi}, hi
	if ends {
		st.Commit = l.Commits[hi].Hash
	} else {
		st.Commit, st.Hi = l.Commits[mid].Hash, l.Commits[hi].Hash
		idx, measured = []int{lo, mid, hi}, mid
	}
	for i := range l.Steps {
		if p := &l.Steps[i]; p.Complete && p.Commit == st.Commit && p.Lo == st.Lo && p.Hi == st.Hi {
			r.notice(fmt.Sprintf("step %d (%s) is in the log: %s", p.N, short(p.Commit), p.Why))
			return p, nil
		}
	}
	r.announce(st, mid)
	l.Steps = append(l.Steps, *st)
	st = &l.Steps[len(l.Steps)-1]
	// A midpoint whose build is known to fail (the build cache remembers
	// it) is skipped at once, and its instant is no step for the estimate;
	// pgscale build of it tries again.
	if !ends {
		if skipped, err := r.knownFailure(ctx, st, mid); skipped || err != nil {
			return st, err
		}
	}
	began := time.Now()
	defer func() { r.stepTime = append(r.stepTime, time.Since(began)) }()

	// Build what is not built yet in this run: the commit, and the ends
	// of its interval (in the build cache since their own step).
	for _, c := range idx {
		b, err := r.buildCommit(ctx, c)
		st.BuildS += b.took.Seconds()
		if c == measured {
			st.Build = b.record()
		}
		if err == nil {
			continue
		}
		var be *build.Error
		if ctx.Err() != nil || ends || c != measured || !errors.As(err, &be) {
			if ctx.Err() != nil {
				st.Why = "interrupted while building " + short(l.Commits[c].Hash)
				return st, ctx.Err()
			}
			return st, fmt.Errorf("bisect step %d: %w", st.N, err)
		}
		// A midpoint that does not build is skipped (the ends built:
		// their step came first).
		st.Build.Failed = fmt.Sprintf("phase %s (log: %s)", be.Phase, be.Log)
		st.Class, st.Complete = result.BisectUnbuildable, true
		st.Why = fmt.Sprintf("%s does not build: its build failed in phase %s (log: %s); skipped, as git bisect skip does", short(st.Commit), be.Phase, be.Log)
		r.notice(fmt.Sprintf("step %d: %s", st.N, st.Why))
		return st, r.save()
	}
	measureBegan := time.Now()
	files, err := r.measure(ctx, st, idx)
	st.MeasureS = time.Since(measureBegan).Seconds()
	if ctx.Err() != nil {
		st.Why = "interrupted while measuring"
		return st, ctx.Err()
	}
	var cls classification
	if files != nil {
		cls = r.classify(files, lo, mid, hi, false)
		st.Rounds, st.Stopped = files[0].AB.RoundsDone, files[0].AB.Stopped
		r.stepData(st, files[0].AB)
	}
	st.Class, st.Why, st.FromLo, st.ToHi = cls.class, cls.words, cls.fromLo, cls.toHi
	if st.DataUncovered() && cls.decided {
		st.Why += fmt.Sprintf("; but each commit ran on data of its own (%s), on one cluster layout: the changes include what each one's data built differently, which this interval does not cover", st.DataWhy)
	}
	switch {
	case err != nil && ends:
		return st, fmt.Errorf("bisect: measuring the ends: %w", err)
	case err != nil && !cls.decided:
		st.Class, st.Why = result.BisectSkipped, fmt.Sprintf("%s could not be measured (%v); skipped, as git bisect skip does", short(st.Commit), err)
	case !cls.decided && !ends:
		st.Class, st.Why = result.BisectSkipped, fmt.Sprintf("%s; skipped after %s, as git bisect skip does", cls.words, prose.Count(st.Rounds, "round"))
	}
	st.Values = map[string]float64{}
	for _, i := range idx {
		if v, ok := cls.values[short(l.Commits[i].Hash)]; ok {
			st.Values[l.Commits[i].Hash] = v
			l.Commits[i].Value = &v
		}
	}
	st.Complete = true
	r.notice(fmt.Sprintf("step %d: %s (built in %v, measured in %v, %s)", st.N, st.Why,
		secs(st.BuildS), secs(st.MeasureS), prose.Count(st.Rounds, "round")))
	return st, r.save()
}

// knownFailure skips step st when the build cache remembers that commit
// mid's build failed and nothing has built it since: it says when, in
// which phase, and where the build log is, and saves the bisect log.
func (r *bisectRun) knownFailure(ctx context.Context, st *result.BisectStep, mid int) (bool, error) {
	spec, err := r.at(mid)
	if err != nil {
		return false, err
	}
	f, err := target.FailedBuild(ctx, spec, r.spec.AB.Cluster)
	if err != nil || f == nil {
		return false, nil // a build that cannot be planned says so when it is tried
	}
	// Cached: what the step knows of the build came from the cache.
	st.Build = &result.BisectBuild{Key: f.Key, Cached: true, Failed: fmt.Sprintf("at %s, remembered: phase %s (log: %s)", clock(f.When), f.Phase, f.Log)}
	st.Class, st.Complete = result.BisectUnbuildable, true
	st.Why = fmt.Sprintf("%s did not build at %s (cached failure: phase %s, log: %s): skipped, as git bisect skip does (pgscale build of it tries again)",
		short(st.Commit), clock(f.When), f.Phase, f.Log)
	r.notice(fmt.Sprintf("step %d: %s", st.N, st.Why))
	return true, r.save()
}

// announce says what a step measures, how much is left, and an estimate.
func (r *bisectRun) announce(st *result.BisectStep, mid int) {
	l := r.log
	if mid < 0 {
		r.notice(fmt.Sprintf("step %d: the ends, %s (good) and %s (bad), to measure the change to find", st.N, short(st.Lo), short(st.Commit)))
		return
	}
	line := fmt.Sprintf("step %d: %s (commit %d of %d: %s) against %s and %s; %s left, about %s (log₂)",
		st.N, short(st.Commit), mid, len(l.Commits)-1, l.Commits[mid].Subject, short(st.Lo), short(st.Hi),
		prose.Count(st.Left, "commit"), prose.Count(st.StepsLeft, "step"))
	if n := len(r.stepTime); n > 0 {
		var sum time.Duration
		for _, d := range r.stepTime {
			sum += d
		}
		per := sum / time.Duration(n)
		line += fmt.Sprintf(", about %v at %v a step", (per * time.Duration(st.StepsLeft)).Round(time.Second), per.Round(time.Second))
	}
	r.notice(line)
}

// built is how a commit's build was had.
type built struct {
	bld  *build.Build
	took time.Duration
	err  error
}

// record is what the log says of the build.
func (b built) record() *result.BisectBuild {
	rec := &result.BisectBuild{}
	if b.bld == nil {
		return rec
	}
	rec.Key, rec.Cached = b.bld.Key, b.bld.Cached
	if m := b.bld.Manifest; m != nil && !b.bld.Cached {
		for _, p := range m.Phases {
			rec.Phases = append(rec.Phases, result.BisectPhase{Name: p.Name, Seconds: p.Seconds})
		}
	}
	return rec
}

// buildCommit builds commit i (or finds its build), once per run.
func (r *bisectRun) buildCommit(ctx context.Context, i int) (built, error) {
	h := r.log.Commits[i].Hash
	if b, ok := r.built[h]; ok {
		return built{bld: b}, nil
	}
	spec, err := r.at(i)
	if err != nil {
		return built{}, err
	}
	began := time.Now()
	b, err := target.BuildAt(ctx, spec, r.spec.AB.Cluster, r.spec.AB.Notice)
	out := built{bld: b, took: time.Since(began), err: err}
	if err == nil {
		r.built[h] = b
	}
	return out, err
}

// at is the target at commit i, named by its short hash.
func (r *bisectRun) at(i int) (target.Spec, error) {
	s, err := target.AtRevision(r.tgt, r.src, r.log.Commits[i].Hash)
	if err != nil {
		return s, err
	}
	return s.Named(short(r.log.Commits[i].Hash)), nil
}

// measure runs a step's interleaved rounds over the commits idx (lo, the
// midpoint and hi; the ends: lo and hi), lo the baseline, rounding until
// classify decides.
func (r *bisectRun) measure(ctx context.Context, st *result.BisectStep, idx []int) ([]*result.File, error) {
	var targets []target.Spec
	for _, i := range idx {
		s, err := r.at(i)
		if err != nil {
			return nil, err
		}
		targets = append(targets, s)
	}
	lo, mid, hi := idx[0], -1, idx[len(idx)-1]
	if len(idx) == 3 {
		mid = idx[1]
	}
	st.Dir = fmt.Sprintf("step-%02d-%s", st.N, short(st.Commit))
	spec := r.spec.AB
	spec.Targets, spec.Out = targets, filepath.Join(r.dir, st.Dir)
	spec.Decider = &classifier{r: r, st: st, lo: lo, mid: mid, hi: hi}
	files, _, err := ab.Run(ctx, spec)
	return files, err
}

// classifier decides a step's rounds: they are enough once its commit is
// classified (classify), which it says.
type classifier struct {
	r           *bisectRun
	st          *result.BisectStep
	lo, mid, hi int
}

// Decided classifies the step from the files of its rounds so far.
func (c *classifier) Decided(files []*result.File) (bool, string) {
	cl := c.r.classify(files, c.lo, c.mid, c.hi, true)
	c.r.notice(fmt.Sprintf("step %d, after round %d: %s", c.st.N, files[0].AB.RoundsDone, cl.words))
	return cl.decided, cl.words
}

// classification is what the rounds so far say of a step's commit.
type classification struct {
	decided        bool
	class, words   string
	fromLo, toHi   *result.BisectChange
	values         map[string]float64
	fromOut, toOut stats.Outcome
}

// classify judges a step from its files. The ends: the bad end against
// the good one, in both directions, against the smallest change of
// interest — a change past it either way is the change to find (class
// BisectBad), within it both ways nothing to bisect (BisectNeither). A
// midpoint: the changes from lo to it and from it to hi, each against
// the interval's tolerance in the direction of the change (tolerance):
// no change from lo and a change to hi is good, the other way round bad,
// both changes part of a split change, neither a change spread too thin.
// Until every outcome it needs is pass or fail, it is undecided. With
// interim, only the outcomes are worked out (a look between rounds);
// else the changes' why too.
func (r *bisectRun) classify(files []*result.File, lo, mid, hi int, interim bool) classification {
	l := r.log
	byName := map[string]*result.File{}
	for _, f := range files {
		byName[f.Target.Name] = f
	}
	name := func(i int) string { return short(l.Commits[i].Hash) }
	out := classification{values: map[string]float64{}}
	if mid < 0 {
		tol := l.MinChange
		up, upOut, err1 := r.pair(byName, looked{name(lo), name(hi), tol, true}, interim, out.values)
		down, downOut, err2 := r.pair(byName, looked{name(lo), name(hi), tol, false}, interim, out.values)
		if err := errors.Join(err1, err2); err != nil {
			out.words = err.Error()
			return out
		}
		out.fromLo = up
		switch {
		case upOut == stats.Fail:
			out.decided, out.class = true, result.BisectBad
		case downOut == stats.Fail:
			out.decided, out.class, out.fromLo = true, result.BisectBad, down
		case upOut == stats.Pass && downOut == stats.Pass:
			out.decided, out.class = true, result.BisectNeither
		}
		c := out.fromLo
		switch {
		case out.class == result.BisectBad:
			out.words = fmt.Sprintf("the ends differ: %s from %s to %s, past the smallest change of interest (%s)", changeText(c), name(lo), name(hi), pct(tol))
		case out.decided:
			out.words = fmt.Sprintf("the ends do not differ: %s from %s to %s, within the smallest change of interest (%s)", changeText(c), name(lo), name(hi), pct(tol))
		default:
			out.words = fmt.Sprintf("undecided: %s from %s to %s against the smallest change of interest %s", changeText(c), name(lo), name(hi), pct(tol))
		}
		return out
	}
	tol := r.tolerance(r.spanChange(lo, hi))
	var errs []error
	var err error
	out.fromLo, out.fromOut, err = r.pair(byName, looked{name(lo), name(mid), tol, r.worse}, interim, out.values)
	errs = append(errs, err)
	out.toHi, out.toOut, err = r.pair(byName, looked{name(mid), name(hi), tol, r.worse}, interim, out.values)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		out.words = err.Error()
		return out
	}
	from := fmt.Sprintf("%s from %s (%s against %s)", changeText(out.fromLo), name(lo), outcomeWord(out.fromOut), signed(tol, r.worse, l.Lower))
	to := fmt.Sprintf("%s to %s (%s)", changeText(out.toHi), name(hi), outcomeWord(out.toOut))
	m := name(mid)
	switch {
	case out.fromOut == stats.Pass && out.toOut == stats.Fail:
		out.decided, out.class = true, result.BisectGood
		out.words = fmt.Sprintf("%s is good (like %s): %s, %s", m, name(lo), from, to)
	case out.fromOut == stats.Fail && out.toOut == stats.Pass:
		out.decided, out.class = true, result.BisectBad
		out.words = fmt.Sprintf("%s is bad (like %s): %s, %s", m, name(hi), from, to)
	case out.fromOut == stats.Fail && out.toOut == stats.Fail:
		out.decided, out.class = true, result.BisectPart
		out.words = fmt.Sprintf("%s carries part of the change, and a part lies after it: %s, %s", m, from, to)
	case out.fromOut == stats.Pass && out.toOut == stats.Pass:
		out.decided, out.class = true, result.BisectNeither
		out.words = fmt.Sprintf("%s is within the tolerance of both ends: %s, %s", m, from, to)
	default:
		out.words = fmt.Sprintf("%s is not classified yet: %s, %s", m, from, to)
	}
	return out
}

// spanChange is the change measured across the interval (lo, hi]: the
// ends' change, or the one the step that made the interval measured.
func (r *bisectRun) spanChange(lo, hi int) *result.BisectChange {
	l := r.log
	a, b := l.Commits[lo].Hash, l.Commits[hi].Hash
	for i := len(l.Steps) - 1; i >= 0; i-- {
		s := l.Steps[i]
		if !s.Complete {
			continue
		}
		for _, c := range []*result.BisectChange{s.FromLo, s.ToHi} {
			if c != nil && c.From == short(a) && c.To == short(b) {
				return c
			}
		}
	}
	return l.Change
}

// tolerance is the change an interval's midpoint is judged against: the
// smallest change of interest, or a quarter of the interval's change when
// that is more, so that the rounds needed stay few where the noise is
// wide against the smallest change of interest: a time-based measure's,
// and a counted one's that is not exact (a pooler's instructions per
// transaction move by a per cent from one cluster layout to the next,
// with its timers and event loop). A part of the change smaller than the
// quarter is not told apart from none.
func (r *bisectRun) tolerance(c *result.BisectChange) float64 {
	tol := r.log.MinChange
	if c != nil {
		tol = math.Max(tol, math.Abs(c.Change)/4)
	}
	return tol
}

// looked is a change looked for between two commits (target names),
// from and to: past tol in the measure's bad direction (worse), or in
// its good one.
type looked struct {
	from, to string
	tol      float64
	worse    bool
}

// pair compares commit c.to with commit c.from, the bound at c.tol in
// the measure's bad direction placed on the side that makes worse the
// direction looked for: worse asks whether to is worse than from by more
// than tol, !worse whether it is better. It returns the change from
// from to to (with its why unless interim), the outcome (fail: a change
// past tol; pass: none), and records both sides' central values.
func (r *bisectRun) pair(files map[string]*result.File, c looked, interim bool, values map[string]float64) (*result.BisectChange, stats.Outcome, error) {
	from, to, tol, worse := c.from, c.to, c.tol, c.worse
	l := r.log
	base, cand := from, to
	if !worse {
		base, cand = to, from
	}
	pctTol := 100 * tol
	if !l.Lower {
		pctTol = -pctTol
	}
	bound := stats.Bound{Measure: l.Measure, Step: l.Step, Percent: pctTol}
	opt := compare.Options{Bounds: stats.Bounds{bound}, Stats: stats.Options{Confidence: l.Confidence}, Interim: interim || !worse, Say: r.spec.Say}
	judged, a, err := r.compare(files, base, cand, opt)
	if err != nil {
		return nil, stats.NoBound, err
	}
	ch := &result.BisectChange{From: from, To: to, Tolerance: signedTol(tol, worse, l.Lower), Outcome: a.Outcome.String(), Rounds: judged.Rounds}
	shown, sa := judged, a
	if !worse {
		// The numbers and the why of to against from, as they read.
		if shown, sa, err = r.compare(files, from, to, compare.Options{Stats: stats.Options{Confidence: l.Confidence}, Interim: interim, Say: r.spec.Say}); err != nil {
			return nil, stats.NoBound, err
		}
	}
	ch.Change, ch.Lo, ch.Hi = sa.Change, sa.Lo, sa.Hi
	if !math.IsNaN(sa.Base) {
		values[from] = sa.Base
	}
	if !math.IsNaN(sa.Cand) {
		values[to] = sa.Cand
	}
	if !interim && len(shown.Why) > 0 {
		ch.Why, ch.Functions = r.why(shown.Why[0])
	}
	return ch, a.Outcome, nil
}

// compare compares cand with base and returns the comparison and the
// assessment of the bisect's measure.
func (r *bisectRun) compare(files map[string]*result.File, base, cand string, opt compare.Options) (*compare.Comparison, stats.Assessment, error) {
	bf, cf := files[base], files[cand]
	if bf == nil || cf == nil {
		return nil, stats.Assessment{}, fmt.Errorf("no result file of %s and %s", base, cand)
	}
	c, err := compare.Compare([]compare.Input{{Name: base, File: bf}, {Name: cand, File: cf}}, opt)
	if err != nil {
		return nil, stats.Assessment{}, err
	}
	for _, row := range c.Rows {
		if row.Measure.Name == r.log.Measure && row.Measure.Step == r.log.Step {
			return c, row.Cells[0].Assessment, nil
		}
	}
	return nil, stats.Assessment{}, fmt.Errorf("%s@%s was not measured (no step holds it)", r.log.Measure, r.log.Step)
}

// why is a differential diagnosis in the log's words: its sentences, and
// the functions the bisect's measure moved in (counted runs).
func (r *bisectRun) why(d diagnose.Differential) ([]string, []result.BisectFunction) {
	var fns []result.BisectFunction
	for _, c := range d.Counted {
		if c.Measure != r.log.Measure {
			continue
		}
		for _, f := range c.Self {
			fns = append(fns, result.BisectFunction{Function: f.Name(), Base: f.Base, Cand: f.Cand, Delta: f.Delta, Share: f.Share})
		}
		if f := c.Inside; f != nil {
			fns = append(fns, result.BisectFunction{Function: f.Name(), Base: f.Base, Cand: f.Cand, Delta: f.Delta, Share: f.Share, Inside: true})
		}
	}
	return d.Sentences(), fns
}

// signedTol is the tolerance as a signed change in the direction looked
// for.
func signedTol(tol float64, worse, lower bool) float64 {
	if worse != lower {
		return -tol
	}
	return tol
}

// signed writes the tolerance as a signed percentage.
func signed(tol float64, worse, lower bool) string {
	t := signedTol(tol, worse, lower)
	if t >= 0 {
		return "+" + pct(t)
	}
	return pct(t)
}

// outcomeWord says an outcome against the tolerance.
func outcomeWord(o stats.Outcome) string {
	switch o {
	case stats.Pass:
		return "no change"
	case stats.Fail:
		return "changed"
	}
	return "undecided"
}

// clock says when t was: its time of day, with the date when that was not
// today.
func clock(t time.Time) string {
	t = t.Local()
	if y, m, d := t.Date(); y == time.Now().Year() && m == time.Now().Month() && d == time.Now().Day() {
		return t.Format("15:04")
	}
	return t.Format("2006-01-02 15:04")
}

// ceilLog2 is ⌈log₂ n⌉ for n ≥ 1.
func ceilLog2(n int) int {
	k := 0
	for 1<<k < n {
		k++
	}
	return k
}

// secs is seconds as a duration, rounded for a line of text.
func secs(s float64) time.Duration {
	return time.Duration(s * float64(time.Second)).Round(100 * time.Millisecond)
}

// stepData records what a counted step's commits ran on, from its run's
// layouts: copies of the lower commit's data, or data of their own (and
// why), and on how many layouts.
func (r *bisectRun) stepData(st *result.BisectStep, run *result.AB) {
	if !r.log.Counted || run == nil {
		return
	}
	st.Layouts = max(len(run.Layouts), 1)
	st.Data, st.DataWhy = result.BisectDataOwn, "the run made each commit's own"
	var why []string
	copied := false
	for _, l := range run.Layouts {
		if l.Data == nil {
			continue
		}
		copied = copied || len(l.Data.Copies) > 0
		for _, n := range sortedNames(l.Data.Own) {
			if w := n + ": " + l.Data.Own[n]; !slices.Contains(why, w) {
				why = append(why, w)
			}
		}
	}
	switch {
	case copied && len(why) == 0:
		st.Data, st.DataWhy = result.BisectDataCopies, ""
	case len(why) > 0:
		st.DataWhy = strings.Join(why, "; ")
	case r.spec.AB.Data.Separate:
		st.DataWhy = "each was asked to make its own"
	}
}

// sortedNames are a map's keys, sorted.
func sortedNames(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// diffStat is git diff --stat of commit against parent, within dir (the
// source's directory, when it is inside a larger repository).
func diffStat(ctx context.Context, dir, parent, commit string) string {
	out, err := build.Git(ctx, dir, "diff", "--stat", parent, commit, "--", ".")
	if err != nil {
		return err.Error()
	}
	return out
}
