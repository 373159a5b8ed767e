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

	"github.com/pgscale/pgscale/internal/micro"
	"github.com/pgscale/pgscale/internal/probe"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
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
// iterations; the difference of the two counts divided by N is what one
// more iteration costs, the process's start, the harness and the
// benchmark's set-up cancelled.
type microCount struct {
	valgrind *target.Valgrind
	counting *micro.Counting
	cache    bool
	options  []string
	// benches are the benchmarks every target reported in its
	// calibration run, the baseline's order; iters their N.
	benches []string
	iters   map[string]int
	work    string
}

// newMicroCount checks what counting needs before anything runs: a
// format that can run one benchmark for a fixed number of iterations, a
// command that runs its program through $PGSCALE_MICRO_EXEC, Valgrind.
func newMicroCount(spec MicroSpec, format micro.Format) (*microCount, error) {
	if format.Count == nil {
		var can []string
		for _, f := range micro.Formats() {
			if f.Count != nil {
				can = append(can, f.Name)
			}
		}
		return nil, usage.Errorf("--count: the %s format's program cannot be run for a fixed number of iterations, which counting needs (formats that can: %s)", format.Name, strings.Join(can, ", "))
	}
	if !strings.Contains(spec.Command, ExecVar) {
		return nil, usage.Errorf("--count: the command must run its benchmark program through $%s, which is Valgrind when counting and empty otherwise: go test -exec \"$%s\" ..., or $%s ./bench ...", ExecVar, ExecVar, ExecVar)
	}
	v, err := target.FindValgrind()
	if err != nil {
		return nil, err
	}
	c := &microCount{valgrind: v, counting: format.Count, cache: spec.Count.Cache, iters: map[string]int{}}
	c.options = []string{"--tool=callgrind", "--trace-children=yes", "--separate-threads=yes", "--dump-line=no", "--dump-instr=no", "-q"}
	if c.cache {
		c.options = append(c.options, probe.CacheSimOptions()...)
	}
	return c, nil
}

// record is what the run file keeps of the counting.
func (c *microCount) record(calibration []micro.TargetRun) *micro.Counted {
	events := "instructions"
	if c.cache {
		events += ",cache"
	}
	return &micro.Counted{Events: events, Valgrind: c.valgrind.Version, Options: c.options, Iterations: c.iters, Calibration: calibration}
}

// calibrate runs the command natively once in each tree: the benchmarks
// to count are those every target reports (the others are problems of
// the run, as in a run that counts nothing), each for N iterations, N
// from the baseline's time per iteration (microCountBudget).
func (c *microCount) calibrate(ctx context.Context, spec MicroSpec, format micro.Format, trees []microTree, run *micro.Run) error {
	var err error
	if c.work, err = os.MkdirTemp("", "pgscale-micro-count-"); err != nil {
		return err
	}
	var cal []micro.TargetRun
	seen := map[string]int{}
	for _, t := range trees {
		start := time.Now()
		samples, err := runMicroOnce(ctx, spec, format, t, nil)
		if err != nil {
			return fmt.Errorf("calibration, %s: %w", t.name, err)
		}
		cal = append(cal, micro.TargetRun{Target: t.name, Seconds: time.Since(start).Seconds(), Samples: samples})
		for _, s := range samples {
			seen[s.Name]++
		}
	}
	run.Counted = c.record(cal)
	for _, s := range cal[0].Samples {
		if seen[s.Name] != len(trees) || c.iters[s.Name] != 0 {
			continue
		}
		c.benches = append(c.benches, s.Name)
		c.iters[s.Name] = calibratedIters(s)
	}
	for _, tr := range cal {
		for _, s := range tr.Samples {
			if seen[s.Name] != len(trees) && c.iters[s.Name] == 0 {
				c.iters[s.Name] = -1 // said once
				run.Problems = append(run.Problems, fmt.Sprintf("%s: not reported by every target's calibration run; not counted", s.Name))
			}
		}
	}
	for name, n := range c.iters {
		if n < 0 {
			delete(c.iters, name)
		}
	}
	if len(c.benches) == 0 {
		return errors.New("calibration: no benchmark that every target reports")
	}
	return nil
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

// close removes the counting's files.
func (c *microCount) close() {
	if c.work != "" {
		os.RemoveAll(c.work)
	}
}

// round counts every benchmark in one tree: its samples, a value per
// iteration for each counted measure.
func (c *microCount) round(ctx context.Context, spec MicroSpec, format micro.Format, t microTree) ([]micro.Sample, error) {
	var out []micro.Sample
	for _, b := range c.benches {
		n := c.iters[b]
		lo, err := c.count(ctx, spec, format, t, b, n)
		if err != nil {
			return nil, err
		}
		hi, err := c.count(ctx, spec, format, t, b, 2*n)
		if err != nil {
			return nil, err
		}
		if hi.Ir <= lo.Ir {
			return nil, fmt.Errorf("counting %s: %d instructions at %d iterations, not more than %d at %d", b, hi.Ir, 2*n, lo.Ir, n)
		}
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

// count runs the command in a tree with its benchmark program under
// callgrind, running one benchmark for iters iterations, and returns
// what the program's processes counted, less the threads that work to
// the clock.
func (c *microCount) count(ctx context.Context, spec MicroSpec, format micro.Format, t microTree, bench string, iters int) (probe.Cost, error) {
	dir, err := os.MkdirTemp(c.work, "run-")
	if err != nil {
		return probe.Cost{}, err
	}
	defer os.RemoveAll(dir)
	wrapper := filepath.Join(dir, "exec")
	if err := os.WriteFile(wrapper, []byte(c.script(dir, bench, iters)), 0o755); err != nil {
		return probe.Cost{}, err
	}
	what := fmt.Sprintf("counting %s (%d iterations)", bench, iters)
	samples, err := runMicroOnce(ctx, spec, format, t, []string{ExecVar + "=" + wrapper})
	if err != nil {
		if c.counting.Needs != "" {
			return probe.Cost{}, fmt.Errorf("%s: %w (counting needs %s)", what, err, c.counting.Needs)
		}
		return probe.Cost{}, fmt.Errorf("%s: %w", what, err)
	}
	ran := false
	for _, s := range samples {
		if s.Name != bench {
			continue
		}
		if s.Iters != 0 && s.Iters != iters {
			return probe.Cost{}, fmt.Errorf("%s: the program ran %d iterations (counting needs %s)", what, s.Iters, c.counting.Needs)
		}
		ran = true
	}
	if !ran {
		return probe.Cost{}, fmt.Errorf("%s: the program did not report it", what)
	}
	return c.read(dir, what)
}

// read adds up callgrind's files in dir: every thread of every process
// the program ran, but those working to the clock.
func (c *microCount) read(dir, what string) (probe.Cost, error) {
	files, _ := filepath.Glob(filepath.Join(dir, "callgrind.out.*"))
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
		total = total.Add(d.Total())
		threads++
	}
	if threads == 0 || total.Ir == 0 {
		return probe.Cost{}, fmt.Errorf("%s: callgrind counted nothing: the command did not run its benchmark program through $%s", what, ExecVar)
	}
	return total, nil
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
// running the program with the arguments that run bench for iters
// iterations appended.
func (c *microCount) script(dir, bench string, iters int) string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n# pgscale micro --count: the benchmark program under callgrind\n")
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
	for _, a := range c.counting.Args(bench, iters) {
		words = append(words, shellQuote(a))
	}
	b.WriteString("exec " + strings.Join(words, " ") + "\n")
	return b.String()
}

// shellQuote quotes a word for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
