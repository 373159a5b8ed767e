// Command flakes finds flaky tests before CI does: it runs the tests a -run
// pattern picks in the packages named, -n times in each condition — quiet,
// and under CPU hogs it starts itself (this program run again as a busy
// loop, one per -hog) — alternating the conditions round by round, each
// round one `go test -json` process (-count=1 as CI runs it, or -count K
// runs in one process for cheap tests). It parses the
// JSON events and prints, per test and condition, its runs, failures and
// skips, the load average the rounds ran at, and the first failure
// messages of every test that failed. It exits 1 when a test failed.
//
//	go run ./bench/flakes -n 10 -run 'TestSleepIsUnderLoaded' ./internal/probe
//	go run ./bench/flakes -n 5 -hog 4 -conditions hog -run 'TestCounted' ./internal/integration
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// hogEnv makes the program a CPU hog instead.
const hogEnv = "PGSCALE_FLAKES_HOG"

func main() {
	if os.Getenv(hogEnv) == "1" {
		spin()
	}
	o := options{}
	flag.IntVar(&o.n, "n", 10, "rounds: each condition runs the tests this many times (times -count)")
	flag.IntVar(&o.count, "count", 1, "go test -count of each round: runs of each test in one test process (cheaper, but the runs share the process and its package's set-up)")
	flag.StringVar(&o.run, "run", "", "go test -run pattern (required)")
	flag.StringVar(&o.conditions, "conditions", "quiet,hog", "conditions, in the order each round runs them: quiet, hog")
	flag.IntVar(&o.hogs, "hog", runtime.NumCPU(), "CPU hogs (busy processes) under the hog condition")
	flag.StringVar(&o.timeout, "timeout", "30m", "go test -timeout of each round")
	flag.BoolVar(&o.race, "race", false, "run the tests under the race detector")
	flag.BoolVar(&o.short, "short", false, "go test -short")
	flag.StringVar(&o.jsonDir, "keep", "", "directory to keep each round's go test -json output in")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: go run ./bench/flakes [flags] -run PATTERN PACKAGES...\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	o.pkgs = flag.Args()
	if o.run == "" || len(o.pkgs) == 0 || o.n < 1 || o.count < 1 {
		flag.Usage()
		os.Exit(2)
	}
	failed, err := run(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "flakes:", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}

type options struct {
	n, count                 int
	run, conditions, timeout string
	hogs                     int
	race, short              bool
	jsonDir                  string
	pkgs                     []string
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

// key names one test of one package.
type key struct{ pkg, test string }

// tally is one test's outcomes in one condition.
type tally struct {
	runs, fails, skips int
	took               time.Duration // summed over the runs
	// failures holds the first failing runs' messages (the test's
	// output lines that name a _test.go file, or its last lines).
	failures []string
}

// condition is one condition's rounds: what ran, at what load.
type condition struct {
	name        string
	rounds      int
	took        time.Duration
	loadMin     float64
	loadMax     float64
	pkgFailures []string // a package that failed outside any test (build, TestMain, timeout)
	tests       map[key]*tally
}

func run(o options) (bool, error) {
	var conds []*condition
	for _, c := range strings.Split(o.conditions, ",") {
		c = strings.TrimSpace(c)
		if c != "quiet" && c != "hog" {
			return false, fmt.Errorf("unknown condition %q (want quiet or hog)", c)
		}
		conds = append(conds, &condition{name: c, tests: map[key]*tally{}, loadMin: -1})
	}
	if o.jsonDir != "" {
		if err := os.MkdirAll(o.jsonDir, 0o755); err != nil {
			return false, err
		}
	}
	h := &hogs{}
	defer h.stop()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		h.stop() // the hogs are ours to end, by pid
		os.Exit(130)
	}()
	fmt.Fprintf(os.Stderr, "flakes: %d rounds of %s, -run %q %s, %d CPUs, %d hogs under hog\n",
		o.n, o.conditions, o.run, strings.Join(o.pkgs, " "), runtime.NumCPU(), o.hogs)
	for r := 1; r <= o.n; r++ {
		for _, c := range conds {
			if c.name == "hog" {
				if err := h.start(o.hogs); err != nil {
					return false, err
				}
				time.Sleep(time.Second) // let the load reach the machine
			}
			l0 := loadAvg()
			t0 := time.Now()
			out, err := goTest(o)
			took := time.Since(t0)
			l1 := loadAvg()
			if c.name == "hog" {
				h.stop()
			}
			if err != nil {
				return false, err
			}
			if o.jsonDir != "" {
				_ = os.WriteFile(fmt.Sprintf("%s/%s-%02d.json", o.jsonDir, c.name, r), out, 0o644)
			}
			c.rounds++
			c.took += took
			for _, l := range []float64{l0, l1} {
				if c.loadMin < 0 || l < c.loadMin {
					c.loadMin = l
				}
				c.loadMax = max(c.loadMax, l)
			}
			ran, failed := c.add(out)
			fmt.Fprintf(os.Stderr, "round %d %-5s %5.0f s, load %.1f-%.1f: %d tests, %d failed\n", r, c.name, took.Seconds(), l0, l1, ran, failed)
		}
	}
	return report(os.Stdout, o, conds), nil
}

// goTest runs one round: go test -json, with the test binary's own
// failures in its JSON (a failing go test exits 1, which is no error here).
func goTest(o options) ([]byte, error) {
	args := []string{"test", "-json", "-count=" + strconv.Itoa(o.count), "-p", "1", "-timeout", o.timeout, "-run", o.run}
	if o.race {
		args = append(args, "-race")
	}
	if o.short {
		args = append(args, "-short")
	}
	args = append(args, o.pkgs...)
	cmd := exec.Command("go", args...)
	cmd.Stderr = os.Stderr // build errors
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(out) > 0 {
		err = nil
	}
	if err != nil {
		return nil, fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
	}
	return out, nil
}

// event is one line of go test -json (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// add counts one round's events; it returns how many tests ran and
// failed in it.
func (c *condition) add(out []byte) (ran, failed int) {
	output := map[key][]string{}
	testFailed := map[string]bool{} // packages with a failed test this round
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		k := key{e.Package, e.Test}
		switch e.Action {
		case "output":
			output[k] = append(output[k], strings.TrimRight(e.Output, "\n"))
		case "pass", "fail", "skip":
			if e.Test == "" {
				if e.Action == "fail" && !testFailed[e.Package] {
					c.pkgFailures = append(c.pkgFailures, e.Package+": "+lastLines(output[k], 6))
					failed++
				}
				continue
			}
			t := c.tests[k]
			if t == nil {
				t = &tally{}
				c.tests[k] = t
			}
			if e.Action == "skip" {
				t.skips++
				continue
			}
			t.runs++
			ran++
			t.took += time.Duration(e.Elapsed * float64(time.Second))
			if e.Action == "fail" {
				testFailed[e.Package] = true
				t.fails++
				failed++
				if len(t.failures) < 3 {
					t.failures = append(t.failures, messages(output[k]))
				}
			}
		}
	}
	return ran, failed
}

// messages picks a failed test's messages: the lines that name a test
// file (t.Error's), else its last lines.
func messages(lines []string) string {
	var out, rest []string
	for _, l := range lines {
		s := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(s, "=== ") || strings.HasPrefix(s, "--- "):
		case strings.Contains(s, "_test.go:") || strings.HasPrefix(s, "panic:"):
			out = append(out, s)
		default:
			rest = append(rest, s)
		}
	}
	if len(out) == 0 {
		if m := lastLines(rest, 6); m != "" {
			return m
		}
		return "(its subtests failed)"
	}
	if len(out) > 4 {
		out = out[:4]
	}
	return strings.Join(out, " | ")
}

func lastLines(lines []string, n int) string {
	var keep []string
	for _, l := range lines {
		if s := strings.TrimSpace(l); s != "" {
			keep = append(keep, s)
		}
	}
	if len(keep) > n {
		keep = keep[len(keep)-n:]
	}
	return strings.Join(keep, " | ")
}

// report prints the table and the failures; it says whether any test
// (or package) failed.
func report(w io.Writer, o options, conds []*condition) bool {
	keys := map[key]bool{}
	for _, c := range conds {
		for k := range c.tests {
			keys[k] = true
		}
	}
	sorted := make([]key, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i].pkg != sorted[j].pkg {
			return sorted[i].pkg < sorted[j].pkg
		}
		return sorted[i].test < sorted[j].test
	})
	count := ""
	if o.count > 1 {
		count = fmt.Sprintf(" -count %d", o.count)
	}
	fmt.Fprintf(w, "`go run ./bench/flakes -n %d%s -run '%s' %s` (%d CPUs", o.n, count, o.run, strings.Join(o.pkgs, " "), runtime.NumCPU())
	if o.race {
		fmt.Fprint(w, ", -race")
	}
	fmt.Fprintln(w, ")")
	fmt.Fprintln(w)
	for _, c := range conds {
		fmt.Fprintf(w, "- %s: %d rounds, %.0f s, load average %.1f-%.1f", c.name, c.rounds, c.took.Seconds(), c.loadMin, c.loadMax)
		if c.name == "hog" {
			fmt.Fprintf(w, " with %d busy processes", o.hogs)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	head, rule := "| package | test |", "| --- | --- |"
	for _, c := range conds {
		head += fmt.Sprintf(" %s runs | %s failed | %s s/run |", c.name, c.name, c.name)
		rule += " ---: | ---: | ---: |"
	}
	fmt.Fprintln(w, head)
	fmt.Fprintln(w, rule)
	failed := false
	for _, k := range sorted {
		line := fmt.Sprintf("| %s | %s |", strings.TrimPrefix(k.pkg, "github.com/pgscale/pgscale/"), k.test)
		for _, c := range conds {
			t := c.tests[k]
			if t == nil {
				line += " 0 | 0 | - |"
				continue
			}
			runs := strconv.Itoa(t.runs)
			if t.skips > 0 {
				runs += fmt.Sprintf(" (+%d skipped)", t.skips)
			}
			per := "-"
			if t.runs > 0 {
				per = fmt.Sprintf("%.1f", t.took.Seconds()/float64(t.runs))
			}
			fails := strconv.Itoa(t.fails)
			if t.fails > 0 {
				fails = "**" + fails + "**"
				failed = true
			}
			line += fmt.Sprintf(" %s | %s | %s |", runs, fails, per)
		}
		fmt.Fprintln(w, line)
	}
	for _, c := range conds {
		for _, k := range sorted {
			if t := c.tests[k]; t != nil && t.fails > 0 {
				fmt.Fprintf(w, "\n%s, %s (%s, %d of %d failed):\n", k.test, strings.TrimPrefix(k.pkg, "github.com/pgscale/pgscale/"), c.name, t.fails, t.runs)
				for _, f := range t.failures {
					fmt.Fprintf(w, "    %s\n", f)
				}
			}
		}
		for _, f := range c.pkgFailures {
			failed = true
			fmt.Fprintf(w, "\npackage failure (%s): %s\n", c.name, f)
		}
	}
	return failed
}

// hogs are the busy processes of the hog condition, started and ended by
// pid.
type hogs struct {
	mu    sync.Mutex
	procs []*os.Process
}

func (h *hogs) start(n int) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), hogEnv+"=1")
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("start a CPU hog: %w", err)
		}
		h.procs = append(h.procs, cmd.Process)
	}
	return nil
}

func (h *hogs) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, p := range h.procs {
		_ = p.Kill()
		_, _ = p.Wait()
	}
	h.procs = nil
}

// loadAvg is the 1-minute load average.
func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}
