package micro

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"
)

// criterionFormat is criterion.rs's own results: for each benchmark,
// DIR/new/benchmark.json (its id and throughput) and DIR/new/estimates.json
// (its estimates in nanoseconds per iteration, each with a confidence
// interval) under the directory criterion writes (target/criterion, given
// as --output). Its typical time, the slope of its linear regression or
// else its mean (what criterion's own report calls "time"), is ns/op; its
// median median-ns/op; a throughput per iteration makes MB/s (bytes),
// elem/s or Mbit/s. The files of benchmarks that did not run this time
// (older results left in the directory) are left out. The files are JSON:
// encoding/json reads them. Criterion calls them its implementation's
// details; both the field names of criterion 0.3 and later (mean,
// median, slope) and the capitalised ones of earlier versions are read.
var criterionFormat = Format{
	Name:  "criterion",
	Usage: "criterion's estimates.json files (cargo bench)",
	Tree:  readCriterion,
	Dir:   "target/criterion",
}

// criterionEstimate is one estimate of estimates.json.
type criterionEstimate struct {
	PointEstimate float64 `json:"point_estimate"`
}

// criterionBenchmark is benchmark.json: the benchmark's id and throughput.
type criterionBenchmark struct {
	FullID     string            `json:"full_id"`
	Throughput map[string]uint64 `json:"throughput"`
}

func readCriterion(fsys fs.FS, since time.Time) ([]Sample, error) {
	var dirs []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || d.Name() != "benchmark.json" || path.Base(path.Dir(p)) != "new" {
			return nil
		}
		if info, err := d.Info(); err != nil || info.ModTime().Before(since) {
			return err // from an earlier run: not this one's
		}
		dirs = append(dirs, path.Dir(p))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("criterion's results: %w", err)
	}
	sort.Strings(dirs)
	var samples []Sample
	for _, dir := range dirs {
		s, err := readCriterionBenchmark(fsys, dir)
		if err != nil {
			return nil, fmt.Errorf("criterion's results, %s: %w", dir, err)
		}
		samples = append(samples, s)
	}
	return samples, nil
}

// readCriterionBenchmark reads one benchmark's new/ directory.
func readCriterionBenchmark(fsys fs.FS, dir string) (Sample, error) {
	var b criterionBenchmark
	if err := readJSON(fsys, path.Join(dir, "benchmark.json"), &b); err != nil {
		return Sample{}, err
	}
	if b.FullID == "" {
		return Sample{}, fmt.Errorf("benchmark.json: no full_id")
	}
	var raw map[string]*criterionEstimate
	if err := readJSON(fsys, path.Join(dir, "estimates.json"), &raw); err != nil {
		return Sample{}, err
	}
	est := map[string]*criterionEstimate{}
	for k, v := range raw {
		est[strings.ReplaceAll(strings.ToLower(k), "_", "")] = v // Mean, mean; MedianAbsDev, median_abs_dev
	}
	typical := est["slope"]
	if typical == nil {
		typical = est["mean"]
	}
	if typical == nil || est["median"] == nil {
		return Sample{}, fmt.Errorf("estimates.json: no mean or median estimate")
	}
	if !(typical.PointEstimate > 0) {
		return Sample{}, fmt.Errorf("estimates.json: a typical time of %v ns", typical.PointEstimate)
	}
	s := Sample{Name: b.FullID, Values: []Value{
		{Unit: "ns/op", Value: typical.PointEstimate},
		{Unit: "median-ns/op", Value: est["median"].PointEstimate},
	}}
	perSecond := 1e9 / typical.PointEstimate
	for kind, n := range b.Throughput {
		switch kind {
		case "Bytes", "BytesDecimal":
			s.Values = append(s.Values, Value{Unit: "MB/s", Value: float64(n) * perSecond / 1e6, Higher: true})
		case "Elements":
			s.Values = append(s.Values, Value{Unit: "elem/s", Value: float64(n) * perSecond, Higher: true})
		case "Bits":
			s.Values = append(s.Values, Value{Unit: "Mbit/s", Value: float64(n) * perSecond / 1e6, Higher: true})
		}
	}
	return s, nil
}

func readJSON(fsys fs.FS, name string, v any) error {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path.Base(name), err)
	}
	return nil
}
