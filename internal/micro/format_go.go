package micro

import (
	"bytes"
	"fmt"

	"golang.org/x/perf/benchfmt"
)

// goFormat is Go's benchmark format, as go test -bench prints it, read by
// x/perf's benchfmt: ns/op, B/op, allocs/op, MB/s and every metric of
// b.ReportMetric, in the units the lines write.
var goFormat = Format{
	Name:  "go",
	Usage: "Go's benchmark format (go test -bench; golang.org/x/perf/benchfmt)",
	Parse: parseGo,
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
