package micro

import (
	"encoding/json"
	"fmt"
	"sort"
)

// bmfFormat is Bencher's Metric Format: an object of benchmarks, each an
// object of measures (latency in nanoseconds, throughput, or a measure
// of the project's own) with a value and optional bounds. Latency is the
// primary measure when present, else the first by name; throughput is
// higher-better, every other measure lower-better.
var bmfFormat = Format{
	Name:  "bmf",
	Usage: "Bencher Metric Format JSON (bencher run --format json, criterion's and divan's adapters)",
	Parse: parseBMF,
}

func parseBMF(out []byte) ([]Sample, error) {
	var doc map[string]map[string]struct {
		Value *float64 `json:"value"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return nil, fmt.Errorf("bencher metric format: %w", err)
	}
	var names []string
	for n := range doc {
		names = append(names, n)
	}
	sort.Strings(names)
	var samples []Sample
	for _, n := range names {
		var ms []string
		for m := range doc[n] {
			ms = append(ms, m)
		}
		sort.Slice(ms, func(i, j int) bool {
			if (ms[i] == "latency") != (ms[j] == "latency") {
				return ms[i] == "latency"
			}
			return ms[i] < ms[j]
		})
		s := Sample{Name: n}
		for _, m := range ms {
			v := doc[n][m].Value
			if v == nil {
				return nil, fmt.Errorf("bencher metric format: %s: measure %s has no value", n, m)
			}
			s.Values = append(s.Values, Value{Unit: m, Value: *v, Higher: higherUnit(m)})
		}
		if len(s.Values) == 0 {
			return nil, fmt.Errorf("bencher metric format: %s has no measures", n)
		}
		samples = append(samples, s)
	}
	return samples, nil
}
