package report_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/compare/comparetest"
	"github.com/pgscale/pgscale/internal/golden"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/stats"
)

func TestGoldenTwoTargets(t *testing.T) {
	rep := comparetest.Compare(t, comparetest.Files(t, comparetest.TwoSides(), []int{1, 2}, 6), "tps=-5%", "p99=+20%")
	if rep.Outcome() != stats.Fail || rep.Method != stats.Paired || rep.Rounds != 6 {
		t.Fatalf("outcome=%v method=%v rounds=%d, want a failed paired verdict over 6 rounds", rep.Outcome(), rep.Method, rep.Rounds)
	}
	d := doc(inputsOf(rep), rep)
	golden.Check(t, "two-targets.md", write(t, "markdown", d))
	golden.Check(t, "two-targets.verdict.json", write(t, "verdict", d))
	golden.Check(t, "two-targets.txt", write(t, "text", d))
	golden.Check(t, "two-targets.comment.md", write(t, "comment", d))
}

func TestGoldenThreeTargets(t *testing.T) {
	sides := append(comparetest.TwoSides(), comparetest.Side{Name: "v2", TPS: map[int][]float64{1: comparetest.Scaled(comparetest.Base1, 1.05, 1.06, 1.04), 2: comparetest.Scaled(comparetest.Base2, 1.2, 1.21, 1.19)}})
	inputs := comparetest.Files(t, sides, []int{1, 2}, 6)
	inputs[0].File.AB.SliceS, inputs[0].File.AB.SliceSettleS = 0.1, 0.01 // shared by the three files
	rep := comparetest.Compare(t, inputs, "tps@c=1=-15%")
	if rep.Outcome() != stats.Pass {
		t.Errorf("a 10%% drop with a 15%% bound did not pass: %s", rep.Headline())
	}
	d := doc(inputs, rep)
	golden.Check(t, "three-targets.md", write(t, "markdown", d))
	golden.Check(t, "three-targets.verdict.json", write(t, "verdict", d))
	golden.Check(t, "three-targets.color.txt", write(t, "text", &report.Doc{Analysis: &compare.Analysis{Comparison: rep}, Color: true}))
	golden.Check(t, "three-targets.bmf.json", write(t, "bmf", d))
	golden.Check(t, "three-targets.benchfmt", write(t, "benchfmt", d))
}

func TestGoldenUnpaired(t *testing.T) {
	inputs := comparetest.Files(t, comparetest.TwoSides(), []int{1, 2}, 6)
	for _, in := range inputs {
		in.File.AB = nil // two plain run files
		for i := range in.File.Steps {
			in.File.Steps[i].Round = 0
		}
	}
	rep := comparetest.Compare(t, inputs)
	if rep.Method != stats.Independent {
		t.Fatalf("method %v, want unpaired for files of no A/B run", rep.Method)
	}
	golden.Check(t, "unpaired.md", write(t, "markdown", doc(nil, rep)))
}

// Only rounds that every target completed are paired; the report says the
// comparison is incomplete.
func TestIncompleteRoundsLeftOut(t *testing.T) {
	inputs := comparetest.Files(t, comparetest.TwoSides(), []int{1, 2}, 6)
	cand := inputs[1].File
	last := &cand.Steps[len(cand.Steps)-1]
	last.Complete, last.Reason = false, "server gone"
	cand.Complete, cand.Reason = false, "round 6, target patch: server gone"
	rep := comparetest.Compare(t, inputs)
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

// BMF follows Bencher's documented JSON schema: an object of benchmarks,
// each an object of measures, each an object with a number "value" and
// optional number "lower_value" and "upper_value"; lower ≤ value ≤ upper.
func TestBMFShape(t *testing.T) {
	rep := comparetest.Compare(t, comparetest.Files(t, comparetest.TwoSides(), []int{1, 2}, 6))
	checkBMF(t, write(t, "bmf", doc(nil, rep)))
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

// doc is the document of files and their comparison, as pgscale ab and
// compare make it.
func doc(files []compare.Input, c *compare.Comparison) *report.Doc {
	a := compare.Analyze(files, compare.Compared{Comparison: c})
	return report.NewDoc(a)
}

// inputsOf is no files: a comparison's document without its files' own
// sections.
func inputsOf(*compare.Comparison) []compare.Input { return nil }
