package micro_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/micro"
	"github.com/pgscale/pgscale/internal/stats"
)

// simulated is a run of rounds of two targets: each benchmark's time per
// iteration around its centre, with 1 % noise of its own and a drift each
// round shares, the candidate's times multiplied by slow[name]; every
// benchmark also reports allocs/op, 2 on both sides.
func simulated(rounds int, benches []string, centre float64, slow map[string]float64) *micro.Run {
	rng := rand.New(rand.NewPCG(1, 2))
	r := &micro.Run{Version: micro.RunVersion, Command: "bench", Format: "go",
		Targets: []micro.Target{{Name: "base"}, {Name: "cand"}}}
	for i := 0; i < rounds; i++ {
		drift := 1 + 0.05*rng.NormFloat64()
		var round micro.Round
		for _, t := range []string{"base", "cand"} {
			tr := micro.TargetRun{Target: t, Seconds: 1}
			for _, b := range benches {
				v := centre * drift * (1 + 0.01*rng.NormFloat64())
				if t == "cand" && slow[b] != 0 {
					v *= slow[b]
				}
				tr.Samples = append(tr.Samples, micro.Sample{Name: b, Values: []micro.Value{{Unit: "ns/op", Value: v}, {Unit: "allocs/op", Value: 2}}})
			}
			round.Runs = append(round.Runs, tr)
		}
		r.Rounds = append(r.Rounds, round)
	}
	return r
}

func bounds(t *testing.T, specs ...string) []micro.Bound {
	t.Helper()
	bs, err := micro.ParseBounds(specs)
	if err != nil {
		t.Fatal(err)
	}
	return bs
}

// The slowed benchmark fails its bound, the unchanged pass; Holm's
// correction runs over every measure; the group line counts the slower.
func TestAnalyzeFindsTheSlowedBenchmark(t *testing.T) {
	benches := []string{"cached/get", "cached/put", "cached/delete", "plain/get"}
	run := simulated(12, benches, 1000, map[string]float64{"cached/delete": 1.10})
	a, err := micro.Analyze(run, micro.Options{Bounds: bounds(t, "micro:*=+5%")})
	if err != nil {
		t.Fatal(err)
	}
	c := a.Candidates[0]
	if got := c.Headline(); got != "3 of 4 measures within bounds (1 failed, 0 inconclusive)" {
		t.Errorf("headline %q", got)
	}
	if c.Verdict.Total != 8 || c.Verdict.Bounded != 4 {
		t.Errorf("%d measures, %d bounded; want 8 and 4 (allocs/op unbounded)", c.Verdict.Total, c.Verdict.Bounded)
	}
	for _, r := range c.Rows {
		want := stats.NoBound
		if r.Unit == "ns/op" {
			want = stats.Pass
			if r.Bench == "cached/delete" {
				want = stats.Fail
			}
		}
		if r.Outcome != want {
			t.Errorf("%s %s: %s %s, want %s", r.Bench, r.Unit, r.Comparison, r.Outcome, want)
		}
		if r.Unit == "allocs/op" && (r.Change != 0 || r.Effect != stats.NoChange) {
			t.Errorf("allocs/op, the same in every round: %s, %s", r.Comparison, r.Effect)
		}
	}
	out := c.Outside()
	if len(out) != 1 || out[0].Bench != "cached/delete" {
		t.Errorf("outside: %+v", out)
	}
	if len(c.Groups) != 1 || !strings.HasPrefix(c.Groups[0].Line(), "cached: 1 of 3 slower, 1 past its bound, median +") {
		t.Errorf("groups: %+v", c.Groups)
	}
}

// A bound naming a benchmark wins over a pattern; a unit's bound applies
// to that unit only.
func TestBoundResolution(t *testing.T) {
	run := simulated(12, []string{"a/x", "a/y"}, 1000, map[string]float64{"a/x": 1.10})
	a, err := micro.Analyze(run, micro.Options{Bounds: bounds(t, "micro:a/*=+5%", "micro:a/x=+20%", "micro:a/y@allocs/op=+1%")})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range a.Candidates[0].Rows {
		if r.Bound != nil {
			got[r.Bench+" "+r.Unit] = r.Bound.String() + " " + r.Outcome.String()
		}
	}
	want := map[string]string{
		"a/x ns/op":     "micro:a/x@ns/op=+20% pass",
		"a/y ns/op":     "micro:a/y@ns/op=+5% pass",
		"a/y allocs/op": "micro:a/y@allocs/op=+1% pass",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %q, want %q", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("bounded: %v", got)
	}
}

// Bounds that match nothing, or have the wrong sign, or are not micro
// bounds are the user's mistake, said in one line.
func TestBoundErrors(t *testing.T) {
	run := simulated(6, []string{"a/x"}, 1000, nil)
	for spec, want := range map[string]string{
		"micro:b/*=+5%":      `bound "micro:b/*=+5%": matches the primary measure of no benchmark of this run`,
		"micro:a/x@MB/s=-5%": `bound "micro:a/x@MB/s=-5%": matches no benchmark's MB/s of this run`,
		"micro:a/x=-5%":      "lower-is-better, so its bound is the largest increase allowed",
	} {
		_, err := micro.Analyze(run, micro.Options{Bounds: bounds(t, spec)})
		var be *stats.BoundError
		if !errors.As(err, &be) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want a bound error with %q", spec, err, want)
		}
	}
	if _, err := micro.ParseBound("tps=-5%"); err == nil || !strings.Contains(err.Error(), "micro:NAME=±N%") {
		t.Errorf("a macro bound: %v", err)
	}
}

// A benchmark one side does not report is left out with one line, and
// the rest judged.
func TestAnalyzeMissingBenchmark(t *testing.T) {
	run := simulated(6, []string{"a", "b"}, 1000, nil)
	for i := range run.Rounds {
		tr := &run.Rounds[i].Runs[1]
		tr.Samples = tr.Samples[:1]
	}
	a, err := micro.Analyze(run, micro.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Problems) != 1 || a.Problems[0] != "b: not reported by cand; left out" {
		t.Errorf("problems: %q", a.Problems)
	}
	if rows := a.Candidates[0].Rows; len(rows) != 2 || rows[0].Bench != "a" {
		t.Errorf("rows: %+v", rows)
	}
	if a.Complete() {
		t.Error("complete with a benchmark left out")
	}
}

// Without bounds the headline says how many changed, never "within
// bounds".
func TestHeadlineWithoutBounds(t *testing.T) {
	a, err := micro.Analyze(simulated(8, []string{"a", "b"}, 1000, map[string]float64{"b": 1.5}), micro.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Candidates[0].Headline(); got != "no bounds given: 1 of 4 measures changed significantly (1 slower, 0 faster)" {
		t.Errorf("headline %q", got)
	}
}

// Bounds written for a run timed or counted alike (a suite's micro cell,
// Options.Either): a timed run leaves out the bound on instr/op, a counted
// run the bound and group unit of the program's own measures, each said;
// a bound without a unit bounds the primary measure either way. Without
// Either a bound that matches nothing is an error.
func TestAnalyzeEither(t *testing.T) {
	timed := simulated(6, []string{"a/x", "a/y"}, 1000, nil)
	bs := bounds(t, "micro:*@ns/op=+5%", "micro:*@instr/op=+1%")
	if _, err := micro.Analyze(timed, micro.Options{Bounds: bs}); err == nil {
		t.Errorf("a bound on instr/op of a timed run: no error without Either")
	}
	a, err := micro.Analyze(timed, micro.Options{Bounds: bs, GroupUnit: "ns/op", Either: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Unused) != 1 || !strings.HasPrefix(a.Unused[0], "bound micro:*@instr/op=+1%: this run was timed") || a.Candidates[0].Verdict.Bounded != 2 {
		t.Errorf("timed: unused %q, %d bounded", a.Unused, a.Candidates[0].Verdict.Bounded)
	}
	counted := simulated(6, []string{"a/x", "a/y"}, 1000, nil)
	counted.Counted = &micro.Counted{Events: "instructions", Valgrind: "valgrind-3.19.0"}
	for _, r := range counted.Rounds {
		for _, tr := range r.Runs {
			for i := range tr.Samples {
				tr.Samples[i].Values = []micro.Value{{Unit: micro.UnitInstructions, Value: 4009}}
			}
		}
	}
	a, err = micro.Analyze(counted, micro.Options{Bounds: append(bs, bounds(t, "micro:a/x=+2%")...), GroupUnit: "ns/op", Either: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"bound micro:*@ns/op=+5%: this run was counted: it measures instr/op and the simulated caches', not the program's own",
		"group unit ns/op (the groups sum up the primary measure): this run was counted: it measures instr/op and the simulated caches', not the program's own",
	}
	if strings.Join(a.Unused, "\n") != strings.Join(want, "\n") || a.Candidates[0].Verdict.Bounded != 2 || len(a.Candidates[0].Groups) != 1 {
		t.Errorf("counted: unused %q, %d bounded, groups %+v", a.Unused, a.Candidates[0].Verdict.Bounded, a.Candidates[0].Groups)
	}
}
