package microbench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/micro"
	"github.com/pgscale/pgscale/internal/target"
)

// The wrapper a counted run puts in $PGSCALE_MICRO_EXEC: the format's
// environment (GODEBUG added to, not replaced), valgrind with its
// options, the program's own arguments, then those that run one
// benchmark for N iterations, each quoted for sh.
func TestMicroCountScript(t *testing.T) {
	f, err := micro.LookupFormat("go")
	if err != nil {
		t.Fatal(err)
	}
	c := &microCount{valgrind: &target.Valgrind{Bin: "/usr/bin/valgrind", Setarch: "/usr/bin/setarch"}, counting: f.Count,
		options: []string{"--tool=callgrind", "-q"}}
	dir := t.TempDir()
	s := c.script(dir, f.Count.Args("BenchmarkSum/n=1000", 6115))
	for _, w := range []string{
		`export GODEBUG="${GODEBUG:+$GODEBUG,}"'asyncpreemptoff=1,cpu.rdtscp=off'`,
		"export GOMAXPROCS='1'",
		`exec '/usr/bin/setarch' "$(uname -m)" '-R' '/usr/bin/valgrind' '--tool=callgrind' '-q' '--callgrind-out-file=` + filepath.Join(dir, "callgrind.out.%p") + `' "$@" '-test.run=^$' '-test.bench=^BenchmarkSum$/^n=1000$' '-test.benchtime=6115x' '-test.count=1'`,
	} {
		if !strings.Contains(s, w) {
			t.Errorf("the script lacks %s:\n%s", w, s)
		}
	}
	if out, err := exec.Command("sh", "-n", "-c", s).CombinedOutput(); err != nil {
		t.Errorf("sh -n: %v\n%s", err, out)
	}
	if q := shellQuote(`it's`); q != `'it'\''s'` {
		t.Errorf("shellQuote: %s", q)
	}
}

// A benchmark's N takes about microCountBudget natively.
func TestCalibratedIters(t *testing.T) {
	for _, tc := range []struct {
		s    micro.Sample
		want int
	}{
		{micro.Sample{Values: []micro.Value{{Unit: "ns/op", Value: 400}}}, 25000},
		{micro.Sample{Values: []micro.Value{{Unit: "ns/op", Value: 3e7}}}, 1},
		{micro.Sample{Iters: 77, Values: []micro.Value{{Unit: "latency", Value: 3}}}, 77},
		{micro.Sample{Values: []micro.Value{{Unit: "latency", Value: 3}}}, 1000},
	} {
		if got := calibratedIters(tc.s); got != tc.want {
			t.Errorf("%+v: %d, want %d", tc.s, got, tc.want)
		}
	}
}

// Calibration counts the benchmarks every target reports that run in one
// thread, a benchmark repeated (--benchmark_repetitions=3) once; the
// others are problems of the run, each said once. A program that does
// not run the 2 iterations the probe asks for (here one that ignores its
// arguments, as Google Benchmark 1.7 refuses --benchmark_min_time=Nx) is
// counted by time in that tree.
func TestMicroCountCalibrate(t *testing.T) {
	f, err := micro.LookupFormat("gbench")
	if err != nil {
		t.Fatal(err)
	}
	bench := func(name string, threads int) string {
		return `{"name": "` + name + `", "iterations": 1000, "real_time": 500, "cpu_time": 400, "time_unit": "ns", "threads": ` + strconv.Itoa(threads) + `}`
	}
	var trees []microTree
	for _, name := range []string{"base", "cand"} {
		dir := t.TempDir()
		bs := []string{bench("BM_A", 1), bench("BM_A", 1), bench("BM_A", 1), bench("BM_T/threads:4", 4)}
		if name == "base" {
			bs = append(bs, bench("BM_B", 1))
		}
		if err := os.WriteFile(filepath.Join(dir, "out.json"), []byte(`{"benchmarks": [`+strings.Join(bs, ",")+`]}`), 0o644); err != nil {
			t.Fatal(err)
		}
		trees = append(trees, microTree{name: name, dir: dir})
	}
	c := &microCount{valgrind: &target.Valgrind{Version: "valgrind-3.19.0"}, counting: f.Count, iters: map[string]int{}, secs: map[string]float64{}, timed: map[string]bool{}}
	defer c.close()
	run := &micro.Run{}
	how, err := c.calibrate(context.Background(), Spec{Command: "$PGSCALE_MICRO_EXEC cat out.json", Format: f}, trees, run)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.benches) != 1 || c.benches[0] != "BM_A" || c.iters["BM_A"] != 20000 || c.secs["BM_A"] != 0.1 {
		t.Errorf("benches %v, N %v, T %v; want BM_A, 20000 iterations (10 ms at 500 ns), 0.1 s", c.benches, c.iters, c.secs)
	}
	wantProblems := []string{
		"BM_T/threads:4: runs its loop in 4 threads, and a counted benchmark runs in one; not counted",
		"BM_B: not reported by every target's calibration run; not counted",
	}
	if strings.Join(run.Problems, "\n") != strings.Join(wantProblems, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(run.Problems, "\n"), strings.Join(wantProblems, "\n"))
	}
	if rc := run.Counted; rc == nil || strings.Join(rc.Timed, ",") != "base,cand" || rc.Iterations != nil || rc.Seconds["BM_A"] != 0.1 || len(rc.Loop) != 2 {
		t.Errorf("the run file's counting: %+v", run.Counted)
	}
	if !strings.Contains(how, "each for T and 2T seconds") || !strings.Contains(how, "(BM_A 0.1 s)") {
		t.Errorf("how: %s", how)
	}
}

// T, the shorter count's time in a program that chooses its iterations
// by time: 0.1 s, or 300 native iterations for a slow benchmark.
func TestTimedSeconds(t *testing.T) {
	for _, tc := range []struct {
		ns   float64
		want float64
	}{{290, 0.1}, {1e6, 0.3}, {2.5e7, 7.5}} {
		if got := timedSeconds(micro.Sample{Values: []micro.Value{{Unit: "ns/op", Value: tc.ns}}}); got != tc.want {
			t.Errorf("%v ns/op: %v s, want %v", tc.ns, got, tc.want)
		}
	}
}
