package micro

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"
)

// goFormat is Go's benchmark format, as go test -bench prints it, read by
// x/perf's benchfmt: ns/op, B/op, allocs/op, MB/s and every metric of
// b.ReportMetric, in the units the lines write.
var goFormat = Format{
	Name:  "go",
	Usage: "Go's benchmark format (go test -bench; golang.org/x/perf/benchfmt)",
	Parse: parseGo,
	Count: &Counting{
		Args: func(bench string, iters int) []string {
			return []string{"-test.run=^$", "-test.bench=" + goBenchPattern(bench), "-test.benchtime=" + strconv.Itoa(iters) + "x", "-test.count=1"}
		},
		// Under Valgrind 3.19 a Go program dies of the signals of
		// asynchronous preemption (callgrind's signal bookkeeping asserts)
		// and of RDTSCP (which Valgrind's CPU claims and cannot run);
		// one P keeps the runtime's idle threads from spinning.
		Env:   []string{"GODEBUG+=asyncpreemptoff=1,cpu.rdtscp=off", "GOMAXPROCS=1"},
		Clock: []string{"runtime.sysmon"},
		Needs: "a test binary run through $PGSCALE_MICRO_EXEC (go test -exec \"$PGSCALE_MICRO_EXEC\")",
	},
}

// goBenchPattern is the -test.bench pattern of one benchmark: each
// level of its name anchored ("^BenchmarkSum$/^n=1000$").
func goBenchPattern(bench string) string {
	parts := strings.Split(bench, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

func parseGo(out []byte) ([]Sample, error) {
	r := benchfmt.NewReader(bytes.NewReader(out), "output")
	var samples []Sample
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.SyntaxError:
			return nil, fmt.Errorf("go benchmark format, line %d: %s", rec.Line, rec.Msg)
		case *benchfmt.Result:
			s := Sample{Name: goName(rec.Name), Iters: rec.Iters}
			for _, v := range rec.Values {
				unit, val := v.OrigUnit, v.OrigValue
				if unit == "" {
					unit, val = v.Unit, v.Value
				}
				s.Values = append(s.Values, Value{Unit: unit, Value: val, Higher: higherUnit(unit)})
			}
			samples = append(samples, s)
		}
	}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("go benchmark format: %w", err)
	}
	return samples, nil
}

// goName is a benchmark's name as go test -bench selects it, without the
// GOMAXPROCS suffix the line adds (benchfmt's reading of a trailing
// "-N"): "BenchmarkSum/n=1000".
func goName(n benchfmt.Name) string {
	base, parts := n.Parts()
	if k := len(parts); k > 0 && len(parts[k-1]) > 0 && parts[k-1][0] == '-' {
		parts = parts[:k-1]
	}
	return "Benchmark" + string(base) + string(bytes.Join(parts, nil))
}
