package micro

import (
	"encoding/json"
	"fmt"
	"sort"
)

// pytestFormat is pytest-benchmark's JSON (--benchmark-json=FILE), a
// file the command writes: each test's median time per call as ns/op,
// and every numeric extra_info value (benchmark.extra_info) under its own
// name, lower is better.
var pytestFormat = Format{
	Name:   "pytest",
	Usage:  "pytest-benchmark's JSON (--benchmark-json=FILE)",
	ToFile: true,
	Parse:  parsePytest,
}

func parsePytest(out []byte) ([]Sample, error) {
	var doc struct {
		Benchmarks []struct {
			Name      string                     `json:"name"`
			Fullname  string                     `json:"fullname"`
			ExtraInfo map[string]json.RawMessage `json:"extra_info"`
			Stats     *struct {
				Median     float64 `json:"median"`
				Iterations int     `json:"iterations"`
				Rounds     int     `json:"rounds"`
			} `json:"stats"`
		} `json:"benchmarks"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return nil, fmt.Errorf("pytest-benchmark JSON: %w", err)
	}
	var samples []Sample
	for i, b := range doc.Benchmarks {
		name := b.Fullname
		if name == "" {
			name = b.Name
		}
		if name == "" {
			return nil, fmt.Errorf("pytest-benchmark JSON, benchmark %d: no name", i+1)
		}
		if b.Stats == nil {
			return nil, fmt.Errorf("pytest-benchmark JSON: %s has no stats", name)
		}
		s := Sample{Name: name, Iters: b.Stats.Iterations * b.Stats.Rounds, Values: []Value{{Unit: "ns/op", Value: b.Stats.Median * 1e9}}}
		var keys []string
		for k := range b.ExtraInfo {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			var v float64
			if json.Unmarshal(b.ExtraInfo[k], &v) == nil {
				s.Values = append(s.Values, Value{Unit: k, Value: v, Higher: higherUnit(k)})
			}
		}
		samples = append(samples, s)
	}
	return samples, nil
}
