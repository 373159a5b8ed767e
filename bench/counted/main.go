// Command counted runs the counted A/B experiments of
// docs/counting-instructions.md, each a pgscale ab of two settings
// targets under Valgrind, select-only at one client, and tallies them:
// per experiment, how many runs had a significant measure and how many
// one of interest (significant and not negligible), each measure's
// changes over the runs, and the first run's why.
//
//	go run ./bench/counted -runs 20 false-alarms
//	go run ./bench/counted -runs 10 aa-cache
//	go run ./bench/counted -runs 1 shared-buffers query-id
//	go run ./bench/counted -tally DIR
//
// The runs go to -out (default bench-counted-TIME/), one directory each
// (EXPERIMENT-N) with both result files and the verdict; a run already
// there is not run again, so an interrupted batch resumes. -tally compares
// the files of a directory again with the pgscale given (the analysis of
// this build) and prints the tables without running anything.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pgscale/pgscale/bench/internal/benchkit"
	"github.com/pgscale/pgscale/internal/report"
)

// experiment is one kind of counted A/B run: the candidate's settings
// (cycled through, run by run), what to count and how many transactions.
type experiment struct {
	name     string
	settings []string
	count    string
	txn      int
	says     string
}

// experiments are the runs the documentation's figures come from.
var experiments = []experiment{
	{"false-alarms", []string{"wal_buffers=8MB", "maintenance_work_mem=256MB", "checkpoint_timeout=15min", "max_locks_per_transaction=128"},
		"instructions", 3000, "settings that change nothing a select-only transaction executes: every run significant and of interest is a false alarm"},
	{"aa-cache", []string{""}, "instructions,cache", 3000, "an A/A run with the cache simulation: two clusters of the same settings"},
	{"layout-cache", []string{"wal_buffers=8MB", "max_locks_per_transaction=128"}, "instructions,cache", 3000,
		"settings that move shared memory and change nothing executed, with the cache simulation"},
	{"shared-buffers", []string{"shared_buffers=12MB"}, "instructions,cache", 5000, "shared_buffers=12MB at scale 1: 10 000 keys a step read more pages than 12 MB hold"},
	{"query-id", []string{"compute_query_id=off"}, "instructions,cache", 3000, "compute_query_id=off: pg_stat_statements tracks nothing"},
}

func main() {
	runs := flag.Int("runs", 1, "runs of each experiment")
	rounds := flag.Int("rounds", 3, "rounds of each run")
	bin := flag.String("pgscale", "", "pgscale binary (default: build it)")
	out := flag.String("out", "", "directory of the runs (default bench-counted-TIME)")
	tally := flag.String("tally", "", "tally the runs in this directory again, running nothing")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: counted [flags] EXPERIMENT...\nexperiments:\n")
		for _, e := range experiments {
			fmt.Fprintf(os.Stderr, "  %-15s %s\n", e.name, e.says)
		}
		flag.PrintDefaults()
	}
	flag.Parse()
	if err := run(*runs, *rounds, *bin, *out, *tally, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "counted:", err)
		os.Exit(1)
	}
}

func run(runs, rounds int, bin, out, tally string, names []string) error {
	ws, err := benchkit.Open("counted", bin)
	if err != nil {
		return err
	}
	defer ws.Close()
	if tally != "" {
		return tallyDir(ws.Pgscale, tally)
	}
	if len(names) == 0 {
		flag.Usage()
		return fmt.Errorf("name an experiment")
	}
	if out == "" {
		out = "bench-counted-" + time.Now().UTC().Format("20060102T150405Z")
	}
	for _, n := range names {
		e, ok := find(n)
		if !ok {
			return fmt.Errorf("no experiment %q", n)
		}
		for i := 1; i <= runs; i++ {
			if err := runOne(ws.Pgscale, out, e, i, rounds); err != nil {
				return err
			}
		}
	}
	return tallyDir(ws.Pgscale, out)
}

func find(name string) (experiment, bool) {
	for _, e := range experiments {
		if e.name == name {
			return e, true
		}
	}
	return experiment{}, false
}

// runOne runs experiment e's run i into OUT/NAME-i, unless it is there.
func runOne(bin, out string, e experiment, i, rounds int) error {
	dir := filepath.Join(out, fmt.Sprintf("%s-%d", e.name, i))
	if _, err := os.Stat(filepath.Join(dir, "verdict.json")); err == nil {
		return nil
	}
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	set := e.settings[(i-1)%len(e.settings)]
	args := []string{"ab", "--target", "a=settings:", "--target", "b=settings:" + set, "-S", "-c", "1", "-t", strconv.Itoa(e.txn),
		"--rounds", strconv.Itoa(rounds), "--count", e.count, "--out", dir, "--verdict", filepath.Join(dir, "verdict.json")}
	began := time.Now()
	fmt.Fprintf(os.Stderr, "%s %d: pgscale %s\n", e.name, i, strings.Join(args, " "))
	cmd := exec.Command(bin, args...)
	log, err := os.Create(filepath.Join(dir, "output.txt"))
	if err != nil {
		return err
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			return fmt.Errorf("%s %d: %v (see %s)", e.name, i, err, log.Name())
		}
	}
	fmt.Fprintf(os.Stderr, "%s %d: %.0f s\n", e.name, i, time.Since(began).Seconds())
	return nil
}

// tallyDir compares every run in dir again and prints, per experiment,
// the tallies and each measure's changes.
func tallyDir(bin, dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	byExp := map[string][]string{}
	var order []string
	for _, en := range entries {
		name, _, ok := cutLast(en.Name(), "-")
		if !en.IsDir() || !ok {
			continue
		}
		if _, seen := byExp[name]; !seen {
			order = append(order, name)
		}
		byExp[name] = append(byExp[name], filepath.Join(dir, en.Name()))
	}
	sort.Strings(order)
	for _, name := range order {
		var vs []report.Verdict
		var settings []string
		for _, run := range byExp[name] {
			v, set, err := compareAgain(bin, run)
			if err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", run, err)
				continue
			}
			vs = append(vs, v)
			settings = append(settings, set)
		}
		printTally(name, vs, settings)
	}
	return nil
}

// compareAgain compares a run's two result files with this build and
// returns the verdict, and the candidate's settings.
func compareAgain(bin, run string) (report.Verdict, string, error) {
	var v report.Verdict
	path := filepath.Join(run, "again.verdict.json")
	cmd := exec.Command(bin, "compare", filepath.Join(run, "a.json"), filepath.Join(run, "b.json"), "--verdict", path)
	if out, err := cmd.CombinedOutput(); err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			return v, "", fmt.Errorf("compare: %v: %s", err, out)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return v, "", err
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return v, "", err
	}
	var f struct {
		Command []string `json:"command"`
	}
	if data, err := os.ReadFile(filepath.Join(run, "b.json")); err == nil && json.Unmarshal(data, &f) == nil {
		for i, a := range f.Command {
			if a == "--target" && i+1 < len(f.Command) && strings.HasPrefix(f.Command[i+1], "b=") {
				return v, strings.TrimPrefix(f.Command[i+1], "b=settings:"), nil
			}
		}
	}
	return v, "", nil
}

// printTally prints one experiment's table in markdown.
func printTally(name string, vs []report.Verdict, settings []string) {
	if len(vs) == 0 {
		return
	}
	significant, interest := 0, 0
	type row struct {
		changes               []float64
		sig, negl, reg, impro int
	}
	rows := map[string]*row{}
	var keys []string
	for _, v := range vs {
		anySig, anyInterest := false, false
		for _, m := range v.Candidates[0].Measures {
			r := rows[m.Key]
			if r == nil {
				r = &row{}
				rows[m.Key] = r
				keys = append(keys, m.Key)
			}
			if m.Change != nil {
				r.changes = append(r.changes, *m.Change)
			}
			if m.Significant {
				anySig = true
				r.sig++
			}
			switch m.Effect {
			case "negligible":
				r.negl++
			case "regressed":
				r.reg++
				anyInterest = true
			case "improved":
				r.impro++
				anyInterest = true
			}
		}
		if anySig {
			significant++
		}
		if anyInterest {
			interest++
		}
	}
	fmt.Printf("### %s: %d runs (candidates: %s)\n\n", name, len(vs), strings.Join(dedupe(settings), ", "))
	fmt.Printf("Runs with a significant measure: %d of %d; with one of interest (significant, not negligible): %d of %d.\n\n",
		significant, len(vs), interest, len(vs))
	fmt.Println("| measure | median change | smallest | largest | significant | negligible | regressed | improved |")
	fmt.Println("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, k := range keys {
		r := rows[k]
		s := benchkit.Summary(r.changes)
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, c := range r.changes {
			lo, hi = math.Min(lo, c), math.Max(hi, c)
		}
		fmt.Printf("| %s | %+.4f%% | %+.4f%% | %+.4f%% | %d | %d | %d | %d |\n", k, 100*s.Median, 100*lo, 100*hi, r.sig, r.negl, r.reg, r.impro)
	}
	fmt.Println()
	if w := vs[0].Candidates[0].Why; w != nil {
		fmt.Println("The first run's why:")
		fmt.Println()
		for _, t := range w.Text {
			fmt.Println("> " + t)
		}
		fmt.Println()
	}
}

func cutLast(s, sep string) (string, string, bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	if _, err := strconv.Atoi(s[i+1:]); err != nil {
		return s, "", false
	}
	return s[:i], s[i+1:], true
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if x == "" {
			x = "(the same)"
		}
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
