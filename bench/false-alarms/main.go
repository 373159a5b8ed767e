// Command false-alarms counts a gate's false alarms on a loaded machine:
// A/A runs — the same build as baseline and candidate — of `pgscale
// suite --preset pooler-ci --quick` and of `pgscale ab` with bounds on
// throughput, p99 latency and the server's CPU and context switches per
// transaction, while CPU hogs it starts (this program run again as a busy
// loop, one per -hog) load the machine. Each run's verdict file gives its
// outcome (pass, fail, inconclusive), its rounds and why it stopped; the
// program prints one line per run and a markdown table of the counts. An
// A/A run must never fail; how many are inconclusive says how loud the
// machine is for the bounds given.
//
//	go run ./bench/false-alarms -runs 20 -hog 2
//	go run ./bench/false-alarms -kind suite -runs 20 -base proxy:base.yaml -cand proxy:base.yaml
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/pgscale/pgscale/bench/internal/benchkit"
	"github.com/pgscale/pgscale/internal/report"
)

// hogEnv makes the program a CPU hog instead.
const hogEnv = "PGSCALE_FALSE_ALARMS_HOG"

func main() {
	if os.Getenv(hogEnv) == "1" {
		spin()
	}
	runs := flag.Int("runs", 20, "A/A runs of each kind")
	kind := flag.String("kind", "both", "ab, suite or both")
	hogs := flag.Int("hog", runtime.NumCPU(), "CPU hogs to start (busy loops), 0 for none")
	rounds := flag.String("rounds", "auto:12", "ab's --rounds")
	bounds := flag.String("bound", "tps=-5%,p99=+10%,server-cpu/txn=+5%,server-ctx/txn=+5%", "ab's bounds")
	base := flag.String("base", "pgbouncer:", "the suite's base pooler (--param base=)")
	cand := flag.String("cand", "", "the suite's cand pooler (default: base again, an A/A run)")
	bin := flag.String("pgscale", "", "pgscale binary (default: build it)")
	flag.Parse()
	if *cand == "" {
		*cand = *base
	}
	if err := run(*runs, *kind, *hogs, *rounds, *bounds, *base, *cand, *bin); err != nil {
		fmt.Fprintln(os.Stderr, "false-alarms:", err)
		os.Exit(1)
	}
}

// spin keeps a CPU busy until killed (or an hour passes).
func spin() {
	deadline := time.Now().Add(time.Hour)
	x := uint64(1)
	for time.Now().Before(deadline) {
		for i := 0; i < 1e7; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	os.Exit(int(x & 0))
}

// outcome is one run's verdict.
type outcome struct {
	kind, outcome, stopped string
	rounds, exit           int
	took                   time.Duration
	load                   string
}

func run(runs int, kind string, hogs int, rounds, bounds, base, cand, bin string) error {
	ws, err := benchkit.Open("false-alarms", bin)
	if err != nil {
		return err
	}
	defer ws.Close()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var procs []*os.Process
	defer func() {
		for _, p := range procs {
			_ = p.Kill()
			_, _ = p.Wait()
		}
	}()
	for i := 0; i < hogs; i++ {
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), hogEnv+"=1")
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("start a CPU hog: %w", err)
		}
		procs = append(procs, cmd.Process)
	}
	fmt.Fprintf(os.Stderr, "%d CPU hogs (busy loops) on %d CPUs\n", hogs, runtime.NumCPU())
	var all []outcome
	for i := 1; i <= runs; i++ {
		for _, k := range []string{"ab", "suite"} {
			if kind != "both" && kind != k {
				continue
			}
			dir := filepath.Join(ws.Dir, fmt.Sprintf("%s-%d", k, i))
			verdict := dir + ".verdict.json"
			var args []string
			if k == "ab" {
				args = []string{"ab", "--target", "a=settings:", "--target", "b=settings:", "-S", "-c", "4", "-T", "2", "--warmup", "0.5",
					"--rounds", rounds, "--bound", bounds, "--out", dir, "--verdict", verdict}
			} else {
				args = []string{"suite", "--preset", "pooler-ci", "--quick", "--param", "base=" + base, "--param", "cand=" + cand,
					"--out", dir, "--verdict", verdict}
			}
			o := outcome{kind: k, load: loadAvg()}
			t0 := time.Now()
			cmd := exec.Command(ws.Pgscale, args...)
			cmd.Stderr = nil
			out, err := cmd.Output()
			o.took = time.Since(t0)
			if ee, ok := err.(*exec.ExitError); ok {
				o.exit = ee.ExitCode()
			} else if err != nil {
				return err
			}
			v, err := readVerdict(verdict)
			if err != nil {
				return fmt.Errorf("%s run %d (exit %d): %w\n%s", k, i, o.exit, err, out)
			}
			o.outcome, o.stopped, o.rounds = v.Outcome, stoppedOf(v), v.Rounds
			fmt.Printf("%s %2d: exit %d, %s, %s, %v (load %s)\n", k, i, o.exit, o.outcome, o.stopped, o.took.Round(time.Second), o.load)
			if v.Outcome == "fail" {
				fmt.Printf("  FALSE ALARM: %s\n", v.Headline)
			}
			all = append(all, o)
		}
	}
	table(all)
	return nil
}

// stoppedOf is why a run stopped: its own words, or for a suite each
// cell's rounds.
func stoppedOf(v *report.Verdict) string {
	if v.Stopped != "" {
		return v.Stopped
	}
	return "fixed rounds"
}

func readVerdict(path string) (*report.Verdict, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var v report.Verdict
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// loadAvg is the machine's 1-minute load average.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}

// table prints the counts per kind.
func table(all []outcome) {
	fmt.Println()
	fmt.Println("| run | runs | pass | fail | inconclusive | exit codes | median time |")
	fmt.Println("| --- | ---: | ---: | ---: | ---: | --- | ---: |")
	for _, k := range []string{"ab", "suite"} {
		var n, pass, fail, inc int
		codes := map[int]int{}
		var took []float64
		for _, o := range all {
			if o.kind != k {
				continue
			}
			n++
			codes[o.exit]++
			took = append(took, o.took.Seconds())
			switch o.outcome {
			case "pass":
				pass++
			case "fail":
				fail++
			case "inconclusive":
				inc++
			}
		}
		if n == 0 {
			continue
		}
		var cs []string
		for _, c := range []int{0, 1, 2, 3, 4} {
			if codes[c] > 0 {
				cs = append(cs, fmt.Sprintf("%d×%d", codes[c], c))
			}
		}
		fmt.Printf("| %s | %d | %d | %d | %d | %s | %.0f s |\n", k, n, pass, fail, inc, strings.Join(cs, ", "), benchkit.Summary(took).Median)
	}
}
