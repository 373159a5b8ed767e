package micro

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
)

// gbenchFormat is Google Benchmark's JSON (--benchmark_format=json, or
// the file of --benchmark_out): each iteration run's real time per
// iteration as ns/op, its CPU time as cpu-ns/op and each user counter
// under its own name (rates such as items_per_second are higher-better).
// Aggregates (mean, median, stddev of repetitions) are left out: the
// rounds are the repetitions pgscale compares.
var gbenchFormat = Format{
	Name:  "gbench",
	Usage: "Google Benchmark's JSON (--benchmark_format=json)",
	Parse: parseGbench,
	Count: &Counting{
		// Google Benchmark 1.8 and later run N iterations with
		// --benchmark_min_time=Nx; 1.7 (Debian 12's) and earlier refuse
		// it and choose the iterations by time, so a count runs for a
		// time and reads the iterations from the JSON. Either way the
		// benchmark's loop alone is counted: a process runs a benchmark
		// several times to choose its iterations, each time with its
		// set-up, and only its last run is the one it reports.
		Args: func(bench string, iters int) []string {
			return []string{"--benchmark_filter=^" + regexp.QuoteMeta(bench) + "$", "--benchmark_min_time=" + strconv.Itoa(iters) + "x", "--benchmark_repetitions=1"}
		},
		Timed: func(bench string, secs float64) []string {
			return []string{"--benchmark_filter=^" + regexp.QuoteMeta(bench) + "$", "--benchmark_min_time=" + strconv.FormatFloat(secs, 'f', -1, 64), "--benchmark_repetitions=1"}
		},
		Loop:  [2]string{"benchmark::State::StartKeepRunning()", "benchmark::State::FinishKeepRunning()"},
		Needs: "a program linked with Google Benchmark's library, its symbols kept (benchmark::State::StartKeepRunning, whose return starts the counted loop)",
	},
}

// gbenchFields are the keys of a benchmark run that are not user
// counters.
var gbenchFields = map[string]bool{
	"name": true, "family_index": true, "per_family_instance_index": true, "run_name": true, "run_type": true,
	"repetitions": true, "repetition_index": true, "threads": true, "iterations": true, "real_time": true,
	"cpu_time": true, "time_unit": true, "aggregate_name": true, "aggregate_unit": true, "label": true,
	"error_occurred": true, "error_message": true, "big_o": true, "rms": true, "complexity_n": true,
	"skipped": true, "skip_message": true,
}

// gbenchUnits are the time units Google Benchmark writes, in nanoseconds.
var gbenchUnits = map[string]float64{"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}

func parseGbench(out []byte) ([]Sample, error) {
	var doc struct {
		Benchmarks []map[string]json.RawMessage `json:"benchmarks"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return nil, fmt.Errorf("google benchmark JSON: %w", err)
	}
	var samples []Sample
	for i, b := range doc.Benchmarks {
		var f struct {
			Name         string  `json:"name"`
			RunType      string  `json:"run_type"`
			Iterations   int     `json:"iterations"`
			Threads      int     `json:"threads"`
			RealTime     float64 `json:"real_time"`
			CPUTime      float64 `json:"cpu_time"`
			TimeUnit     string  `json:"time_unit"`
			Error        bool    `json:"error_occurred"`
			ErrorMessage string  `json:"error_message"`
			Skipped      any     `json:"skipped"`
		}
		raw, _ := json.Marshal(b)
		if err := json.Unmarshal(raw, &f); err != nil {
			return nil, fmt.Errorf("google benchmark JSON, benchmark %d: %w", i+1, err)
		}
		if f.RunType == "aggregate" {
			continue
		}
		if f.Error {
			return nil, fmt.Errorf("google benchmark JSON: %s failed: %s", f.Name, f.ErrorMessage)
		}
		if f.Name == "" {
			return nil, fmt.Errorf("google benchmark JSON, benchmark %d: no name", i+1)
		}
		if f.TimeUnit == "" {
			f.TimeUnit = "ns"
		}
		scale, ok := gbenchUnits[f.TimeUnit]
		if !ok {
			return nil, fmt.Errorf("google benchmark JSON: %s: unknown time_unit %q", f.Name, f.TimeUnit)
		}
		s := Sample{Name: f.Name, Iters: f.Iterations, Values: []Value{
			{Unit: "ns/op", Value: f.RealTime * scale},
			{Unit: "cpu-ns/op", Value: f.CPUTime * scale},
		}}
		if f.Threads > 1 {
			s.Threads = f.Threads
		}
		var counters []string
		for k := range b {
			if !gbenchFields[k] {
				counters = append(counters, k)
			}
		}
		sort.Strings(counters)
		for _, k := range counters {
			var v float64
			if json.Unmarshal(b[k], &v) != nil {
				continue // a string or object field of a newer version
			}
			s.Values = append(s.Values, Value{Unit: k, Value: v, Higher: higherUnit(k)})
		}
		samples = append(samples, s)
	}
	return samples, nil
}
