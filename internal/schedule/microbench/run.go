// Package microbench is the schedule of micro-benchmark rounds: a
// project's own benchmark command run in each target's tree in
// interleaved rounds (A B, then B A, ...), timed or counted under
// callgrind (count.go), into a micro.Run. It needs no server, and judges
// nothing (internal/micro does).
package microbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pgscale/pgscale/internal/build"
	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/micro"
	"github.com/pgscale/pgscale/internal/probeopt"
	"github.com/pgscale/pgscale/internal/proc"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/syncio"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
)

// Spec is a micro-benchmark run: one command run in each target's tree,
// in interleaved rounds, its output read in a known format. It is made
// and checked where it is given (the command line, a suite's micro
// cell), and taken as it is.
type Spec struct {
	// Targets are the trees, two or more, the baseline first: a directory
	// as it is, or a git repository's tree at a revision (with patches),
	// exported to a temporary directory.
	Targets []Target
	// Command is a shell command run in each tree (sh -c), with
	// $PGSCALE_MICRO_TARGET set to the target's name.
	Command string
	// Format is the output's format (micro.LookupFormat).
	Format micro.Format
	// Output is the file the command writes its results to, relative to
	// the tree (a directory for a format that reads a tree); empty: its
	// standard output.
	Output string
	// Rounds is a fixed number of rounds or rounds until decided.
	Rounds compare.Rounds
	// Options are how a run that rounds until decided judges each look.
	Options micro.Options
	// Timeout ends a command that has not finished within it; 0: none.
	Timeout time.Duration
	// Keep leaves the exported trees in place.
	Keep bool
	// Count counts the benchmarks' instructions (and with Cache the
	// simulated caches' misses) per iteration under Valgrind's callgrind
	// instead of reading the program's own measures (count.go), Valgrind
	// being Valgrind; the format can count and the command runs its
	// program through $PGSCALE_MICRO_EXEC (Countable).
	Count    probeopt.Count
	Valgrind *target.Valgrind
	// Notices, when set, is told what the run does, a line at a time.
	Notices io.Writer
}

// Target is one tree of a micro-benchmark run: its source, parsed where
// it was given (target.Tree), or a target's own (a suite's micro cell
// that names no tree for it: target.Spec.Source); Spec is it as given,
// recorded in the run file.
type Target struct {
	Name, Spec string
	Source     build.Source
}

// microTree is a target's tree ready to run in.
type microTree struct {
	name, dir string
	temp      bool
}

// Run runs spec's command in each target's tree in interleaved rounds
// (A B, then B A, ...) and returns what it measured. Rounding until
// decided, it stops once every bounded measure passed or failed (a
// failure alone does not stop it), or at its most rounds. A command
// that fails, prints nothing the format reads, or is interrupted ends the
// run: the rounds before it are kept and the run records the problem (it
// is then incomplete). An error is returned only when nothing could run.
func Run(ctx context.Context, spec Spec) (*micro.Run, error) {
	format := spec.Format
	notice := func(s string) {
		if spec.Notices != nil {
			fmt.Fprintln(spec.Notices, s)
		}
	}
	var counter *microCount
	if spec.Count.Instructions {
		counter = newMicroCount(spec)
		defer counter.close()
	}
	// The machine, so that a history store can file the run's series
	// under its fingerprint as it files a result file's.
	env := result.CollectEnvironment()
	run := &micro.Run{Version: micro.RunVersion, Command: spec.Command, Format: format.Name, Output: spec.Output, Started: time.Now().UTC(), Environment: &env}
	var trees []microTree
	defer func() {
		for _, t := range trees {
			if t.temp && !spec.Keep {
				os.RemoveAll(t.dir)
			}
		}
	}()
	for _, t := range spec.Targets {
		tree, rec, err := microTreeOf(ctx, t)
		if err != nil {
			return nil, err
		}
		if tree.temp {
			notice(fmt.Sprintf("%s: %s exported to %s", t.Name, t.Spec, tree.dir))
		}
		trees = append(trees, tree)
		run.Targets = append(run.Targets, micro.Target{Name: t.Name, Spec: t.Spec, Commit: rec.Commit})
	}
	if counter != nil {
		start := time.Now()
		how, err := counter.calibrate(ctx, spec, trees, run)
		if err != nil {
			run.Problems = append(run.Problems, err.Error())
			notice(err.Error())
			return run, nil
		}
		notice(fmt.Sprintf("counting: calibrated natively in %.1f s; each round counts %d benchmarks per target under callgrind, %s",
			time.Since(start).Seconds(), len(counter.benches), how))
	}
	max := spec.Rounds.N
	if spec.Rounds.Auto {
		max = spec.Rounds.Max
		run.RoundsMax = max
	}
	for r := 0; max == 0 || r < max; r++ {
		order := make([]int, len(trees))
		for i := range order {
			order[i] = i
			if r%2 == 1 {
				order[i] = len(trees) - 1 - i
			}
		}
		var round micro.Round
		for _, ti := range order {
			start := time.Now()
			var samples []micro.Sample
			var err error
			if counter != nil {
				samples, err = counter.round(ctx, spec, trees[ti])
			} else {
				samples, err = runMicroOnce(ctx, spec, trees[ti], nil)
			}
			took := time.Since(start)
			if err != nil {
				run.Problems = append(run.Problems, fmt.Sprintf("round %d, %s: %v", r+1, trees[ti].name, err))
				notice(run.Problems[len(run.Problems)-1])
				return run, nil
			}
			round.Runs = append(round.Runs, micro.TargetRun{Target: trees[ti].name, Seconds: took.Seconds(), Samples: samples})
		}
		run.Rounds = append(run.Rounds, round)
		notice(fmt.Sprintf("round %d: %s", r+1, roundTimes(round)))
		if r == 0 && spec.Rounds.Auto && spec.Rounds.Budget > 0 {
			max = max1(int(spec.Rounds.Budget/roundTime(round)), stats.FirstLook)
			run.RoundsMax = max
		}
		if spec.Rounds.Auto && len(run.Rounds) >= stats.FirstLook {
			opt := spec.Options
			opt.Interim = true
			a, err := micro.Analyze(run, opt)
			if err != nil {
				return nil, usage.Wrap(err)
			}
			// Unlike an A/B run, a failure does not stop it: the others'
			// outcomes are the table the comment shows.
			if decided(a) {
				run.Stopped = "decided"
				break
			}
		}
	}
	if spec.Rounds.Auto && run.Stopped == "" {
		run.Stopped = "max"
	}
	return run, nil
}

// decided reports whether every candidate's bounded measures are decided.
func decided(a *micro.Analysis) bool {
	for _, c := range a.Candidates {
		if !c.Verdict.Decided() {
			return false
		}
	}
	return len(a.Candidates) > 0
}

func max1(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// roundTime is a round's time, all its runs.
func roundTime(r micro.Round) time.Duration {
	var s float64
	for _, tr := range r.Runs {
		s += tr.Seconds
	}
	return time.Duration(s * float64(time.Second))
}

// roundTimes says how long each run of a round took: "base 3.1 s, cand 3.0 s".
func roundTimes(r micro.Round) string {
	var parts []string
	for _, tr := range r.Runs {
		parts = append(parts, fmt.Sprintf("%s %.1f s", tr.Target, tr.Seconds))
	}
	return strings.Join(parts, ", ")
}

// microTreeOf is the tree of a target: a directory as it is, or a tree at
// a revision (with patches) exported to a temporary directory; for a
// target spec of a kind that builds (src:, an ext= extension, a proxy's
// build:), the source it builds from.
func microTreeOf(ctx context.Context, t Target) (microTree, build.SourceRecord, error) {
	src := t.Source
	if src.Rev == "" && len(src.Patches) == 0 {
		dir, err := filepath.Abs(src.Path)
		if err == nil {
			var fi os.FileInfo
			if fi, err = os.Stat(dir); err == nil && !fi.IsDir() {
				err = errors.New("not a directory")
			}
		}
		if err != nil {
			return microTree{}, build.SourceRecord{}, usage.Errorf("target %s: %s: %v", t.Name, src.Path, err)
		}
		rec, _ := build.ResolveSource(ctx, src)
		return microTree{name: t.Name, dir: dir}, rec, nil
	}
	dir, err := os.MkdirTemp("", "pgscale-micro-"+t.Name+"-")
	if err != nil {
		return microTree{}, build.SourceRecord{}, err
	}
	rec, err := build.Export(ctx, src, dir, nil)
	if err != nil {
		os.RemoveAll(dir)
		return microTree{}, build.SourceRecord{}, usage.Errorf("target %s: %v", t.Name, err)
	}
	return microTree{name: t.Name, dir: dir, temp: true}, rec, nil
}

// runMicroOnce runs the command once in a tree, its environment with env
// added, and reads its benchmarks. $PGSCALE_MICRO_EXEC is empty unless env
// sets it (microcount.go).
func runMicroOnce(ctx context.Context, spec Spec, t microTree, env []string) ([]micro.Sample, error) {
	format := spec.Format
	var out, errOut syncio.Buffer
	var file string
	if spec.Output != "" {
		file = filepath.Join(t.dir, spec.Output)
		if format.Tree == nil {
			os.Remove(file)
		}
	}
	// What the command writes from now on is this run's: a directory of
	// results (criterion's) keeps those of earlier runs beside them. File
	// times are kept to the second by some file systems.
	since := time.Now().Truncate(time.Second)
	err := proc.Run(ctx, proc.Spec{
		Name: "the benchmark command", Path: "/bin/sh", Args: []string{"-c", spec.Command}, Dir: t.dir,
		Env:    append(append(os.Environ(), "PGSCALE_MICRO_TARGET="+t.name, ExecVar+"="), env...),
		Output: &out, Stderr: &errOut, Timeout: spec.Timeout,
	})
	if err != nil {
		last := proc.LastLines(errOut.String(), 1)
		if last == "" {
			last = proc.LastLines(out.String(), 1)
		}
		if last != "" {
			return nil, fmt.Errorf("%v: %s", err, strings.TrimSpace(last))
		}
		return nil, err
	}
	data := []byte(out.String())
	where := "its output"
	if file != "" && format.Tree != nil {
		samples, err := format.Tree(os.DirFS(file), since)
		if err != nil {
			return nil, err
		}
		if len(samples) == 0 {
			return nil, fmt.Errorf("the command wrote no %s results under %s", format.Name, spec.Output)
		}
		return samples, nil
	}
	if file != "" {
		if data, err = os.ReadFile(file); err != nil {
			return nil, fmt.Errorf("the command wrote no %s: %v", spec.Output, err)
		}
		where = spec.Output
	}
	samples, err := format.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", where, err)
	}
	if len(samples) == 0 {
		return nil, fmt.Errorf("%s holds no benchmark in the %s format", where, format.Name)
	}
	return samples, nil
}

// itersList says each counted benchmark's N: "BenchmarkSum/n=1000 6667, ...".
func itersList(c *microCount) string {
	var parts []string
	for _, b := range c.benches {
		parts = append(parts, fmt.Sprintf("%s %d", b, c.iters[b]))
	}
	return strings.Join(parts, ", ")
}

// secsList says each counted benchmark's T: "BM_Sum/1000 0.1 s, ...".
func secsList(c *microCount) string {
	var parts []string
	for _, b := range c.benches {
		parts = append(parts, fmt.Sprintf("%s %g s", b, c.secs[b]))
	}
	return strings.Join(parts, ", ")
}
