package report_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
)

// side is one synthetic target: per client count, per round, tps; latency
// and CPU follow from it so every measure has values.
type side struct {
	name string
	tps  map[int][]float64
}

// abFiles builds the result files of one A/B run from synthetic per-round
// figures. Files built this way are what pgscale ab writes, minus the
// per-interval series.
func abFiles(t *testing.T, sides []side, clients []int, rounds int) []report.Input {
	t.Helper()
	ab := &result.AB{Run: "20260101T000000Z-test", Baseline: sides[0].name, Rounds: rounds, RoundsDone: rounds, OrderSeed: 7}
	for _, s := range sides {
		ab.Targets = append(ab.Targets, result.ABTarget{Name: s.name, Spec: s.name + "=settings:", File: s.name + ".json"})
	}
	for r := 0; r < rounds; r++ {
		var order []string
		for _, s := range sides {
			order = append(order, s.name)
		}
		ab.Order = append(ab.Order, order)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var out []report.Input
	for _, s := range sides {
		f := &result.File{Schema: result.Schema, Version: result.Version, Complete: true, Started: start, Finished: start,
			Environment: result.Environment{OS: "linux/amd64", CPUModel: "Test CPU", CPUs: 2},
			Target:      result.Target{Kind: "ephemeral", Name: s.name},
			Workload: result.Workload{Name: "select-only", Protocol: "prepared", Scale: 1, DurationS: 3,
				Scripts: []result.Script{{Name: "builtin:select-only", Weight: 1, Source: "SELECT 1"}}},
			AB: ab}
		for r := 1; r <= rounds; r++ {
			for _, c := range clients {
				tps := s.tps[c][r-1]
				n := int64(tps * 3)
				st := result.Step{Clients: c, Round: r, Complete: true, ElapsedS: 3, Started: start}
				st.Summary.TPS = tps
				st.Summary.Transactions = n
				st.Summary.Latency.P50Ms = float64(c) / tps * 1000
				st.Summary.Latency.P99Ms = 3 * float64(c) / tps * 1000
				st.Summary.ClientCPU.PerTxnUS = 10 + float64(r%3)
				st.Intervals = []result.Interval{{Transactions: n}}
				f.Steps = append(f.Steps, st)
			}
		}
		if err := f.Validate(); err != nil {
			t.Fatalf("synthetic file %s: %v", s.name, err)
		}
		out = append(out, report.Input{Name: s.name, File: f})
	}
	return out
}

func scaled(xs []float64, factors ...float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x * factors[i%len(factors)]
	}
	return out
}

var (
	base1 = []float64{10000, 10400, 9800, 10100, 10300, 9900}
	base2 = []float64{18000, 18600, 17500, 18200, 18400, 17900}
)

// twoSides: the candidate is about 10 % slower at c=1 and unchanged at c=2.
func twoSides() []side {
	return []side{
		{"master", map[int][]float64{1: base1, 2: base2}},
		{"patch", map[int][]float64{1: scaled(base1, 0.90, 0.91, 0.89, 0.905), 2: scaled(base2, 1.01, 0.99, 1.0, 0.995)}},
	}
}

// golden compares got with testdata/name.golden; on a mismatch it writes
// testdata/name.got to look at (and to copy over the golden file once
// right).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	want, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want) {
		gotPath := filepath.Join("testdata", name+".got")
		if werr := os.WriteFile(gotPath, got, 0o644); werr != nil {
			t.Fatal(werr)
		}
		if err != nil {
			t.Errorf("%v (output written to %s)", err, gotPath)
			return
		}
		t.Errorf("%s differs from %s; see %s", name, path, gotPath)
		return
	}
	os.Remove(filepath.Join("testdata", name+".got"))
}

func mustCompare(t *testing.T, inputs []report.Input, bounds ...string) *report.ABReport {
	t.Helper()
	b, err := stats.ParseBounds(bounds)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Compare(inputs, report.CompareOptions{Bounds: b})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func render(t *testing.T, f func(*bytes.Buffer) error) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := f(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestGoldenTwoTargets(t *testing.T) {
	rep := mustCompare(t, abFiles(t, twoSides(), []int{1, 2}, 6), "tps=-5%", "p99=+20%")
	if rep.Passed() || rep.Method != stats.Paired || rep.Rounds != 6 {
		t.Fatalf("passed=%v method=%v rounds=%d, want a failed paired verdict over 6 rounds", rep.Passed(), rep.Method, rep.Rounds)
	}
	golden(t, "two-targets.md", render(t, func(b *bytes.Buffer) error { return report.WriteMarkdown(b, rep) }))
	golden(t, "two-targets.verdict.json", render(t, func(b *bytes.Buffer) error { return report.WriteVerdict(b, rep) }))
	golden(t, "two-targets.txt", render(t, func(b *bytes.Buffer) error { return report.WriteText(b, rep, report.TextOptions{}) }))
}

func TestGoldenThreeTargets(t *testing.T) {
	sides := append(twoSides(), side{"v2", map[int][]float64{1: scaled(base1, 1.05, 1.06, 1.04), 2: scaled(base2, 1.2, 1.21, 1.19)}})
	inputs := abFiles(t, sides, []int{1, 2}, 6)
	inputs[0].File.AB.SliceS, inputs[0].File.AB.SliceSettleS = 0.1, 0.01 // shared by the three files
	rep := mustCompare(t, inputs, "tps@c=1=-15%")
	if !rep.Passed() {
		t.Errorf("a 10%% drop with a 15%% bound failed: %s", rep.Headline())
	}
	golden(t, "three-targets.md", render(t, func(b *bytes.Buffer) error { return report.WriteMarkdown(b, rep) }))
	golden(t, "three-targets.verdict.json", render(t, func(b *bytes.Buffer) error { return report.WriteVerdict(b, rep) }))
	golden(t, "three-targets.color.txt", render(t, func(b *bytes.Buffer) error {
		return report.WriteText(b, rep, report.TextOptions{Color: true})
	}))
	golden(t, "three-targets.bmf.json", render(t, func(b *bytes.Buffer) error { return report.WriteBMF(b, rep) }))
	golden(t, "three-targets.benchfmt", render(t, func(b *bytes.Buffer) error { return report.WriteBenchfmt(b, inputs) }))
}

func TestGoldenUnpaired(t *testing.T) {
	inputs := abFiles(t, twoSides(), []int{1, 2}, 6)
	for _, in := range inputs {
		in.File.AB = nil // two plain run files
		for i := range in.File.Steps {
			in.File.Steps[i].Round = 0
		}
	}
	rep := mustCompare(t, inputs)
	if rep.Method != stats.Independent {
		t.Fatalf("method %v, want unpaired for files of no A/B run", rep.Method)
	}
	golden(t, "unpaired.md", render(t, func(b *bytes.Buffer) error { return report.WriteMarkdown(b, rep) }))
}

// The headline names every failing measure, in the pooler bot's words.
func TestHeadline(t *testing.T) {
	rep := mustCompare(t, abFiles(t, twoSides(), []int{1, 2}, 6), "tps=-5%")
	h := rep.Headline()
	if !strings.HasPrefix(h, "Compared patch with master: 1 of 8 measures outside bounds: tps@c=1 -") || !strings.HasSuffix(h, ", bound -5%") {
		t.Errorf("headline %q", h)
	}
	rep = mustCompare(t, abFiles(t, twoSides(), []int{1, 2}, 6), "tps=-15%")
	if h := rep.Headline(); h != "Compared patch with master: All 8 measures within bounds" {
		t.Errorf("headline %q", h)
	}
}

// Only rounds that every target completed are paired; the report says the
// comparison is incomplete.
func TestIncompleteRoundsLeftOut(t *testing.T) {
	inputs := abFiles(t, twoSides(), []int{1, 2}, 6)
	cand := inputs[1].File
	last := &cand.Steps[len(cand.Steps)-1]
	last.Complete, last.Reason = false, "server gone"
	cand.Complete, cand.Reason = false, "round 6, target patch: server gone"
	rep := mustCompare(t, inputs)
	if rep.Rounds != 5 || rep.RoundsPlanned != 6 || rep.Incomplete == "" {
		t.Errorf("rounds %d of %d, incomplete %q: want 5 of 6, marked incomplete", rep.Rounds, rep.RoundsPlanned, rep.Incomplete)
	}
	for _, row := range rep.Rows {
		if n := row.Cells[0].Assessment.N1; n != 5 {
			t.Errorf("%s: %d rounds compared, want 5", row.Measure.Key(), n)
		}
	}
	v := report.NewVerdict(rep)
	if v.Complete || !strings.Contains(rep.Headline(), "(incomplete)") {
		t.Errorf("verdict complete=%v, headline %q: want both marked incomplete", v.Complete, rep.Headline())
	}
}

// The paired change is the geometric mean of the per-round ratios,
// computed here by hand: ratios 0.90, 0.91, 0.89, 0.905, 0.90, 0.91.
func TestPairedChangeIsGeometricMeanOfRatios(t *testing.T) {
	rep := mustCompare(t, abFiles(t, twoSides(), []int{1, 2}, 6))
	a := rep.Rows[0].Cells[0].Assessment
	if a.Measure.Key() != "tps@c=1" {
		t.Fatalf("first row is %s", a.Measure.Key())
	}
	// exp(mean(ln r)) - 1 with r = .90 .91 .89 .905 .90 .91 = -0.097527
	want := -0.097527
	if d := a.Change - want; d > 1e-5 || d < -1e-5 {
		t.Errorf("change %.6f, want %.6f", a.Change, want)
	}
}

func TestBoundErrors(t *testing.T) {
	for _, b := range []string{"tps=+5%", "nosuch=-5%", "tps@c=3=-5%"} {
		bs, err := stats.ParseBounds([]string{b})
		if err != nil {
			t.Fatal(err)
		}
		err = report.CheckBounds([]int{1, 2}, bs, stats.Options{})
		var be *stats.BoundError
		if !errors.As(err, &be) {
			t.Errorf("CheckBounds(%s) = %v, want a *stats.BoundError", b, err)
		}
	}
	bs, _ := stats.ParseBounds([]string{"tps@c=2=-5%", "client-cpu/txn=+10%"})
	if err := report.CheckBounds([]int{1, 2}, bs, stats.Options{}); err != nil {
		t.Errorf("good bounds rejected: %v", err)
	}
}

// BMF follows Bencher's documented JSON schema: an object of benchmarks,
// each an object of measures, each an object with a number "value" and
// optional number "lower_value" and "upper_value"; lower ≤ value ≤ upper.
func TestBMFShape(t *testing.T) {
	rep := mustCompare(t, abFiles(t, twoSides(), []int{1, 2}, 6))
	checkBMF(t, render(t, func(b *bytes.Buffer) error { return report.WriteBMF(b, rep) }))
}

// checkBMF validates data against Bencher's BMF schema
// (https://bencher.dev/bmf.json) by hand.
func checkBMF(t *testing.T, data []byte) {
	t.Helper()
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("BMF is not a JSON object: %v", err)
	}
	if len(doc) == 0 {
		t.Fatal("BMF holds no benchmark")
	}
	for bench, raw := range doc {
		if bench == "" || len(bench) > 1024 {
			t.Errorf("benchmark name %q: empty or longer than 1024", bench)
		}
		var measures map[string]map[string]json.RawMessage
		if err := json.Unmarshal(raw, &measures); err != nil || len(measures) == 0 {
			t.Errorf("%s: not an object of measure objects: %v", bench, err)
			continue
		}
		for slug, metric := range measures {
			if slug == "" || len(slug) > 64 {
				t.Errorf("%s: measure slug %q: empty or longer than 64", bench, slug)
			}
			vals := map[string]float64{}
			for k, v := range metric {
				if k != "value" && k != "lower_value" && k != "upper_value" {
					t.Errorf("%s/%s: unexpected key %q", bench, slug, k)
				}
				var f float64
				if err := json.Unmarshal(v, &f); err != nil {
					t.Errorf("%s/%s: %s is not a number: %s", bench, slug, k, v)
				}
				vals[k] = f
			}
			if _, ok := metric["value"]; !ok {
				t.Errorf("%s/%s: no value", bench, slug)
			}
			if lo, ok := vals["lower_value"]; ok && lo > vals["value"] {
				t.Errorf("%s/%s: lower_value %v > value %v", bench, slug, lo, vals["value"])
			}
			if hi, ok := vals["upper_value"]; ok && hi < vals["value"] {
				t.Errorf("%s/%s: upper_value %v < value %v", bench, slug, hi, vals["value"])
			}
		}
	}
}
