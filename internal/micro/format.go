package micro

import (
	"fmt"
	"io/fs"
	"strings"
	"time"
)

// Sample is one benchmark's figures from one run of a benchmark command:
// a value per iteration (or per the format's own unit) for each measure
// the format reports.
type Sample struct {
	// Name is the benchmark's full name as the format writes it
	// ("BenchmarkSum/n=100-2", "BM_Sort/1024", "test_parse").
	Name string `json:"name"`
	// Iters is how many iterations the value is of; 0 when the format
	// does not say.
	Iters int `json:"iters,omitempty"`
	// Threads is how many threads ran the benchmark's loop together,
	// when the format says and it is more than one (Google Benchmark's
	// ->Threads(N)); a counted run counts only benchmarks of one.
	Threads int `json:"threads,omitempty"`
	// Values are the measures, the benchmark's primary one (its time)
	// first.
	Values []Value `json:"values"`
}

// Value is one measure of a sample.
type Value struct {
	// Unit names the measure: "ns/op", "B/op", "allocs/op", "MB/s",
	// a user-defined metric's own unit.
	Unit  string  `json:"unit"`
	Value float64 `json:"value"`
	// Higher marks a measure where higher is better (a throughput);
	// lower is better otherwise.
	Higher bool `json:"higher,omitempty"`
}

// Format is one benchmark output format of the registry.
type Format struct {
	// Name is the --format value.
	Name string
	// Usage says what produces it, for help texts (Help).
	Usage string
	// ToFile says the format's program writes its results to a file it
	// is told of, not to its standard output: the run is given the file
	// too, and Parse reads it.
	ToFile bool
	// Dir, for a Tree format, is the directory its program writes to,
	// which the run is given.
	Dir string
	// Parse reads the command's standard output. It returns an error
	// saying what and where when the output is not in the format, and
	// an empty slice when it holds no benchmark.
	Parse func(out []byte) ([]Sample, error)
	// Tree, for a format whose results are files under a directory (the
	// command's --output DIR: criterion's target/criterion), reads those
	// written since the command started; Parse is then nil.
	Tree func(fsys fs.FS, since time.Time) ([]Sample, error)
	// Count says how the format's program runs one benchmark for a
	// fixed number of iterations, which counting its instructions needs
	// (pgscale micro --count); nil when it cannot.
	Count *Counting
}

// Help is f's Usage with how the run is given the file or directory its
// program writes, by the option the caller names it with ("--output"):
// "pytest-benchmark's JSON (--benchmark-json=FILE; give the file with
// --output)". It goes in the parenthesis ending Usage.
func (f Format) Help(option string) string {
	var given string
	switch {
	case f.ToFile:
		given = "give the file with " + option
	case f.Dir != "":
		given = option + " " + f.Dir
	default:
		return f.Usage
	}
	return strings.TrimSuffix(f.Usage, ")") + "; " + given + ")"
}

// Counting is how a format's benchmark program is counted: its
// arguments that run one benchmark for a fixed number of iterations (or,
// in a program that cannot, for a time), what of the process to count,
// and what it needs to run under Valgrind.
type Counting struct {
	// Args are appended to the program's own arguments: the last of a
	// repeated flag wins in Go's and Google Benchmark's flag parsers.
	Args func(bench string, iters int) []string
	// Timed, for a program that may not take Args (Google Benchmark
	// before 1.8 chooses its iterations by time and refuses
	// --benchmark_min_time=Nx), are the arguments that run one benchmark
	// for at least secs seconds of its own time; the iterations counted
	// are then those it reports. nil: Args always works.
	Timed func(bench string, secs float64) []string
	// Loop names the program's functions that open and close a
	// benchmark's measured loop (Google Benchmark's
	// State::StartKeepRunning and FinishKeepRunning, called from the
	// loop's inline code in the program). Callgrind dumps its counts as
	// the first returns and as the second is entered, and only the
	// process's last loop is counted: the run the program reported,
	// without the process's start, the benchmark's set-up or the runs a
	// harness makes to choose its iterations. Empty: the whole process is
	// counted.
	Loop [2]string
	// Env is the program's environment under Valgrind, added to the
	// command's: NAME=VALUE, or NAME+=VALUE to add to a comma list.
	Env []string
	// Clock names functions that mark a thread working to the clock, not
	// per iteration (Go's runtime.sysmon): such threads are not counted.
	Clock []string
	// Needs says what the program must support, for the error of one
	// that fails when counted ("Google Benchmark's symbols").
	Needs string
}

// formats is the registry: one line per format.
var formats = []Format{
	goFormat,
	gbenchFormat,
	pytestFormat,
	bmfFormat,
	libtestFormat,
	divanFormat,
	criterionFormat,
}

// Formats lists the registered formats in registry order.
func Formats() []Format { return append([]Format(nil), formats...) }

// LookupFormat returns the format called name.
func LookupFormat(name string) (Format, error) {
	var names []string
	for _, f := range formats {
		if f.Name == name {
			return f, nil
		}
		names = append(names, f.Name)
	}
	return Format{}, fmt.Errorf("unknown micro-benchmark format %q (want %s)", name, strings.Join(names, ", "))
}

// higherUnit reports whether a unit is a rate, better when higher:
// "MB/s", "B/s", "items_per_second", "ops".
func higherUnit(unit string) bool {
	u := strings.ToLower(unit)
	return strings.HasSuffix(u, "/s") || strings.HasSuffix(u, "per_second") || strings.HasSuffix(u, "/sec") || u == "ops" || u == "throughput"
}
