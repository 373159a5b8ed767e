package microbench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pgscale/pgscale/internal/micro"
	"github.com/pgscale/pgscale/internal/probe"
	"github.com/pgscale/pgscale/internal/probeopt"
	"github.com/pgscale/pgscale/internal/target"
)

// ExecVar is the environment variable a counted run (micro --count)
// sets to the command that runs a benchmark program under Valgrind: the
// command puts it in front of its benchmark program (go test -exec
// "$PGSCALE_MICRO_EXEC", $PGSCALE_MICRO_EXEC ./bench). It is empty in
// a run that counts nothing, so the same command serves both.
const ExecVar = "PGSCALE_MICRO_EXEC"

// microCountBudget is about how long, natively, the N iterations of a
// counted benchmark take (N from its calibration run, whose times a
// loaded machine stretches): enough that the 50-100 thousand
// instructions a Go runtime's scheduler and collector add to a process at
// random are a fraction of a percent of the difference counted (at 2 ms,
// under load, N was 1237 for a 4000-instruction iteration and the count
// 1.5 % high), little enough that under callgrind, some 50 times slower,
// the 3N iterations of the two counts take a few seconds.
const microCountBudget = 10 * time.Millisecond

// microCount counts a micro-benchmark command's instructions under
// callgrind: each benchmark alone, in a process of its own, for N and 2N
// iterations (or, where the program chooses its iterations by time, for
// T and 2T seconds, reading the iterations it reports); the difference of
// the two counts divided by the difference of the iterations is what one
// more iteration costs, the process's start, the harness and the
// benchmark's set-up cancelled.
type microCount struct {
	valgrind *target.Valgrind
	counting *micro.Counting
	cache    bool
	options  []string
	// benches are the benchmarks every target reported in its
	// calibration run, the baseline's order; iters their N, secs their T.
	benches []string
	iters   map[string]int
	secs    map[string]float64
	// timed are the targets whose program refused to run a fixed number
	// of iterations (Counting.Timed), counted by time.
	timed map[string]bool
	work  string
}

// newMicroCount is what counts spec's benchmarks: its format's way of
// running one for a number of iterations, under spec.Valgrind.
func newMicroCount(spec Spec) *microCount {
	c := &microCount{valgrind: spec.Valgrind, counting: spec.Format.Count, cache: spec.Count.Cache, iters: map[string]int{}, secs: map[string]float64{}, timed: map[string]bool{}}
	c.options = []string{"--tool=callgrind", "--trace-children=yes", "--separate-threads=yes", "--dump-line=no", "--dump-instr=no", "-q"}
	if l := c.counting.Loop; l[0] != "" {
		c.options = append(c.options, "--dump-after="+l[0], "--dump-before="+l[1])
	}
	if c.cache {
		c.options = append(c.options, probeopt.CacheSimOptions()...)
	}
	return c
}

// Countable says why a command's benchmarks cannot be counted, nil when
// they can: its format's program cannot run one benchmark for a number
// of iterations it obeys or reports, or the command does not run its
// program through $PGSCALE_MICRO_EXEC.
func Countable(command string, format micro.Format) error {
	if format.Count == nil {
		var can []string
		for _, f := range micro.Formats() {
			if f.Count != nil {
				can = append(can, f.Name)
			}
		}
		return fmt.Errorf("the %s format's program cannot be run for a fixed number of iterations, which counting needs (formats that can: %s)", format.Name, strings.Join(can, ", "))
	}
	if !strings.Contains(command, ExecVar) {
		return fmt.Errorf("the command must run its benchmark program through $%s, which is Valgrind when counting and empty otherwise: go test -exec \"$%s\" ..., or $%s ./bench ...", ExecVar, ExecVar, ExecVar)
	}
	return nil
}

// record is what the run file keeps of the counting.
func (c *microCount) record(calibration []micro.TargetRun, trees []microTree) *micro.Counted {
	events := "instructions"
	if c.cache {
		events += ",cache"
	}
	r := &micro.Counted{Events: events, Valgrind: c.valgrind.Version, Options: c.options, Calibration: calibration}
	if c.counting.Loop[0] != "" {
		r.Loop = c.counting.Loop[:]
	}
	for _, t := range trees {
		if c.timed[t.name] {
			r.Timed = append(r.Timed, t.name)
		}
	}
	if len(r.Timed) < len(trees) {
		r.Iterations = c.iters
	}
	if len(r.Timed) > 0 {
		r.Seconds = c.secs
	}
	return r
}

// calibrate runs the command natively once in each tree: the benchmarks
// to count are those every target reports (the others are problems of
// the run, as in a run that counts nothing) that run in one thread, each
// for N iterations, N from the baseline's time per iteration
// (microCountBudget), or where a tree's program cannot run a fixed number
// of iterations (takesIters), for T seconds (timedSeconds). It returns
// how a round counts, for the run's notice.
func (c *microCount) calibrate(ctx context.Context, spec Spec, trees []microTree, run *micro.Run) (string, error) {
	var err error
	if c.work, err = os.MkdirTemp("", "pgscale-micro-count-"); err != nil {
		return "", err
	}
	var cal []micro.TargetRun
	seen := map[string]int{}
	for _, t := range trees {
		start := time.Now()
		samples, err := runMicroOnce(ctx, spec, t, nil)
		if err != nil {
			return "", fmt.Errorf("calibration, %s: %w", t.name, err)
		}
		cal = append(cal, micro.TargetRun{Target: t.name, Seconds: time.Since(start).Seconds(), Samples: samples})
		in := map[string]bool{} // a benchmark repeated (-count 3, --benchmark_repetitions=3) once
		for _, s := range samples {
			if !in[s.Name] {
				seen[s.Name]++
			}
			in[s.Name] = true
		}
	}
	said := map[string]bool{}
	for _, tr := range cal {
		for _, s := range tr.Samples {
			switch {
			case said[s.Name]:
			case seen[s.Name] != len(trees):
				run.Problems = append(run.Problems, fmt.Sprintf("%s: not reported by every target's calibration run; not counted", s.Name))
			case s.Threads > 1:
				run.Problems = append(run.Problems, fmt.Sprintf("%s: runs its loop in %d threads, and a counted benchmark runs in one; not counted", s.Name, s.Threads))
			case tr.Target == cal[0].Target:
				c.benches = append(c.benches, s.Name)
				c.iters[s.Name] = calibratedIters(s)
				c.secs[s.Name] = timedSeconds(s)
			}
			said[s.Name] = true
		}
	}
	if len(c.benches) == 0 {
		run.Counted = c.record(cal, trees)
		return "", errors.New("calibration: no benchmark that every target reports and that runs in one thread")
	}
	var timed []string
	if c.counting.Timed != nil {
		for _, t := range trees {
			if !c.takesIters(ctx, spec, t, c.benches[0]) {
				c.timed[t.name] = true
				timed = append(timed, t.name)
			}
		}
	}
	run.Counted = c.record(cal, trees)
	iters := fmt.Sprintf("each at N and 2N iterations (%s)", itersList(c))
	secs := fmt.Sprintf("for T and 2T seconds, the difference divided by that of the iterations it reports (%s)", secsList(c))
	why := fmt.Sprintf("whose program did not run 2 iterations when asked with %s", strings.Join(c.counting.Args(c.benches[0], 2), " "))
	switch {
	case len(timed) == 0:
		return iters, nil
	case len(timed) == len(trees):
		return fmt.Sprintf("each %s: no target's program ran 2 iterations when asked with %s", secs, strings.Join(c.counting.Args(c.benches[0], 2), " ")), nil
	}
	return fmt.Sprintf("%s; in %s, %s, %s", iters, strings.Join(timed, ", "), why, secs), nil
}

// takesIters reports whether the program in tree t runs a benchmark for
// a fixed number of iterations as the format's arguments ask: run
// natively for 2 iterations of bench, it reports 2. Google Benchmark
// before 1.8 refuses --benchmark_min_time=Nx and exits.
func (c *microCount) takesIters(ctx context.Context, spec Spec, t microTree, bench string) bool {
	dir, err := os.MkdirTemp(c.work, "probe-")
	if err != nil {
		return false
	}
	defer os.RemoveAll(dir)
	var words []string
	for _, a := range c.counting.Args(bench, 2) {
		words = append(words, shellQuote(a))
	}
	wrapper := filepath.Join(dir, "exec")
	script := "#!/bin/sh\n# pgscale, counting instructions: does the program run a fixed number of iterations?\nexec \"$@\" " + strings.Join(words, " ") + "\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		return false
	}
	samples, err := runMicroOnce(ctx, spec, t, []string{ExecVar + "=" + wrapper})
	if err != nil {
		return false
	}
	for _, s := range samples {
		if s.Name == bench && s.Iters == 2 {
			return true
		}
	}
	return false
}

// calibratedIters is a benchmark's N: the iterations that take about
// microCountBudget natively, from its time per iteration; without one
// (a format whose first measure is not a time), the iterations its run
// made.
func calibratedIters(s micro.Sample) int {
	if len(s.Values) > 0 && strings.HasSuffix(s.Values[0].Unit, "ns/op") && s.Values[0].Value > 0 {
		n := math.Ceil(float64(microCountBudget.Nanoseconds()) / s.Values[0].Value)
		return int(math.Min(n, 1e8))
	}
	if s.Iters > 0 {
		return s.Iters
	}
	return 1000
}

// timedSeconds is a benchmark's T, the time its shorter count runs for
// in a program that chooses its iterations by time: at least
// microTimedLeast, and long enough for some iterations of a slow
// benchmark under callgrind, which runs a program 50 to 150 times slower
// than natively (with the cache simulation): 300 times its native time
// per iteration, so that its two counts' iterations still differ.
func timedSeconds(s micro.Sample) float64 {
	secs := microTimedLeast.Seconds()
	if len(s.Values) > 0 && strings.HasSuffix(s.Values[0].Unit, "ns/op") {
		secs = math.Max(secs, 300*s.Values[0].Value/1e9)
	}
	return math.Ceil(secs*1000) / 1000
}

// microTimedLeast is the least T (timedSeconds): under callgrind 0.1 s
// is some ten thousand iterations of a benchmark that natively takes
// 300 ns, its loop's count exact to the instruction in a C++ program; the
// loops of a benchmark's two counts (T and 2T, with the runs the program
// makes to choose its iterations) take about half a second under
// callgrind, the two processes about 1.8 s in all here.
const microTimedLeast = 100 * time.Millisecond

// close removes the counting's files.
func (c *microCount) close() {
	if c.work != "" {
		os.RemoveAll(c.work)
	}
}

// round counts every benchmark in one tree: its samples, a value per
// iteration for each counted measure.
func (c *microCount) round(ctx context.Context, spec Spec, t microTree) ([]micro.Sample, error) {
	var out []micro.Sample
	for _, b := range c.benches {
		lo, err := c.count(ctx, spec, t, b, 1)
		if err != nil {
			return nil, err
		}
		hi, err := c.count(ctx, spec, t, b, 2)
		if err != nil {
			return nil, err
		}
		if hi.iters <= lo.iters {
			return nil, fmt.Errorf("counting %s: the program ran %d iterations in its longer count, not more than the %d of its shorter", b, hi.iters, lo.iters)
		}
		if hi.Ir <= lo.Ir {
			return nil, fmt.Errorf("counting %s: %d instructions at %d iterations, not more than %d at %d", b, hi.Ir, hi.iters, lo.Ir, lo.iters)
		}
		n := hi.iters - lo.iters
		per := func(h, l uint64) float64 { return (float64(h) - float64(l)) / float64(n) }
		s := micro.Sample{Name: b, Iters: n, Values: []micro.Value{{Unit: micro.UnitInstructions, Value: per(hi.Ir, lo.Ir)}}}
		if c.cache {
			hs, ls := hi.Sim, lo.Sim
			s.Values = append(s.Values,
				micro.Value{Unit: micro.UnitEstCycles, Value: per(hi.EstCycles(), lo.EstCycles())},
				micro.Value{Unit: micro.UnitL1IMisses, Value: per(hs.I1mr, ls.I1mr)},
				micro.Value{Unit: micro.UnitL1DMisses, Value: per(hs.D1mr+hs.D1mw, ls.D1mr+ls.D1mw)},
				micro.Value{Unit: micro.UnitLLMisses, Value: per(hs.LLMisses(), ls.LLMisses())},
				micro.Value{Unit: micro.UnitBranchMisses, Value: per(hs.BranchMisses(), ls.BranchMisses())})
		}
		out = append(out, s)
	}
	return out, nil
}

// counted is one count: what callgrind counted of the program's
// processes, and the iterations it was of.
type counted struct {
	probe.Cost
	iters int
}

// count runs the command in a tree with its benchmark program under
// callgrind, running one benchmark at size k (1 or 2): k times its N
// iterations, or where the tree's program chooses its iterations by time,
// for k times its T seconds. It returns what the program's processes
// counted, less the threads that work to the clock (or with
// Counting.Loop, the last loop of each process alone), and the
// iterations.
func (c *microCount) count(ctx context.Context, spec Spec, t microTree, bench string, k int) (counted, error) {
	dir, err := os.MkdirTemp(c.work, "run-")
	if err != nil {
		return counted{}, err
	}
	defer os.RemoveAll(dir)
	iters := k * c.iters[bench]
	args := c.counting.Args(bench, iters)
	what := fmt.Sprintf("counting %s (%d iterations)", bench, iters)
	if c.timed[t.name] {
		secs := float64(k) * c.secs[bench]
		iters, args = 0, c.counting.Timed(bench, secs)
		what = fmt.Sprintf("counting %s (%g s)", bench, secs)
	}
	wrapper := filepath.Join(dir, "exec")
	if err := os.WriteFile(wrapper, []byte(c.script(dir, args)), 0o755); err != nil {
		return counted{}, err
	}
	samples, err := runMicroOnce(ctx, spec, t, []string{ExecVar + "=" + wrapper})
	if err != nil {
		if c.counting.Needs != "" {
			return counted{}, fmt.Errorf("%s: %w (counting needs %s)", what, err, c.counting.Needs)
		}
		return counted{}, fmt.Errorf("%s: %w", what, err)
	}
	ran := 0
	for _, s := range samples {
		if s.Name != bench {
			continue
		}
		switch {
		case iters == 0 && s.Iters <= 0:
			return counted{}, fmt.Errorf("%s: the program did not say how many iterations it ran", what)
		case iters == 0:
			ran = s.Iters
		case s.Iters != 0 && s.Iters != iters:
			return counted{}, fmt.Errorf("%s: the program ran %d iterations (counting needs %s)", what, s.Iters, c.counting.Needs)
		default:
			ran = iters
		}
	}
	if ran == 0 {
		return counted{}, fmt.Errorf("%s: the program did not report it", what)
	}
	cost, err := c.read(dir, what)
	return counted{cost, ran}, err
}

// read adds up callgrind's files in dir: every thread of every process
// the program ran, but those working to the clock; with Counting.Loop,
// of each process only the part between the return of the loop's first
// function and the entry to its second, its last such part: the run the
// program reported.
func (c *microCount) read(dir, what string) (probe.Cost, error) {
	files, _ := filepath.Glob(filepath.Join(dir, "callgrind.out.*"))
	type part struct{ pid, n int }
	costs, triggers := map[part]probe.Cost{}, map[part]string{}
	var total probe.Cost
	threads := 0
	for _, name := range files {
		if fi, err := os.Stat(name); err == nil && fi.Size() == 0 {
			continue // with --separate-threads, the process's own file is empty
		}
		f, err := os.Open(name)
		if err != nil {
			return probe.Cost{}, err
		}
		d, err := probe.ParseCallgrind(f)
		f.Close()
		if err != nil {
			return probe.Cost{}, fmt.Errorf("%s: %s: %w", what, filepath.Base(name), err)
		}
		if c.clockThread(d) {
			continue
		}
		p := part{d.PID, d.Part}
		costs[p] = costs[p].Add(d.Total())
		triggers[p] = d.Trigger
		total = total.Add(d.Total())
		threads++
	}
	if threads == 0 || total.Ir == 0 {
		return probe.Cost{}, fmt.Errorf("%s: callgrind counted nothing: the command did not run its benchmark program through $%s", what, ExecVar)
	}
	loop := c.counting.Loop
	if loop[0] == "" {
		return total, nil
	}
	last := map[int]int{}
	for p, trig := range triggers {
		if trig == "--dump-before="+loop[1] && triggers[part{p.pid, p.n - 1}] == "--dump-after="+loop[0] && p.n > last[p.pid] {
			last[p.pid] = p.n
		}
	}
	if len(last) == 0 {
		return probe.Cost{}, fmt.Errorf("%s: callgrind saw no loop of the benchmark's (from a return of %s to a call of %s): counting needs %s", what, loop[0], loop[1], c.counting.Needs)
	}
	var inLoop probe.Cost
	for pid, n := range last {
		inLoop = inLoop.Add(costs[part{pid, n}])
	}
	return inLoop, nil
}

// clockThread reports whether a thread's dump holds a function that
// works to the clock (Counting.Clock).
func (c *microCount) clockThread(d *probe.CallgrindDump) bool {
	for f := range d.Self {
		for _, name := range c.counting.Clock {
			if f.Name == name {
				return true
			}
		}
	}
	return false
}

// script is the program's wrapper: its environment under Valgrind, then
// valgrind (without address-space randomisation, when setarch is found)
// running the program with args, those that run one benchmark at the
// count's size, appended.
func (c *microCount) script(dir string, args []string) string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n# pgscale, counting instructions: the benchmark program under callgrind\n")
	for _, kv := range c.counting.Env {
		if name, v, ok := strings.Cut(kv, "+="); ok {
			fmt.Fprintf(&b, "export %s=\"${%s:+$%s,}\"%s\n", name, name, name, shellQuote(v))
		} else if name, v, ok := strings.Cut(kv, "="); ok {
			fmt.Fprintf(&b, "export %s=%s\n", name, shellQuote(v))
		}
	}
	argv := []string{c.valgrind.Bin}
	if c.valgrind.Setarch != "" {
		argv = []string{c.valgrind.Setarch, "\"$(uname -m)\"", "-R", c.valgrind.Bin}
	}
	var words []string
	for i, a := range argv {
		if i == 1 && c.valgrind.Setarch != "" {
			words = append(words, a) // the machine's name, expanded
			continue
		}
		words = append(words, shellQuote(a))
	}
	for _, o := range append(c.options, "--callgrind-out-file="+filepath.Join(dir, "callgrind.out.%p")) {
		words = append(words, shellQuote(o))
	}
	words = append(words, `"$@"`)
	for _, a := range args {
		words = append(words, shellQuote(a))
	}
	b.WriteString("exec " + strings.Join(words, " ") + "\n")
	return b.String()
}

// shellQuote quotes a word for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
