// Package comparetest builds the result files of synthetic A/B runs, for
// the tests of packages that compare and render comparisons.
package comparetest

import (
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/report/remedy"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
)

// Side is one synthetic target: per client count, per round, tps; latency
// and CPU follow from it so every measure has values.
type Side struct {
	Name string
	TPS  map[int][]float64
}

// Files builds the result files of one A/B run from synthetic per-round
// figures. Files built this way are what pgscale ab writes, minus the
// per-interval series.
func Files(t testing.TB, sides []Side, clients []int, rounds int) []compare.Input {
	t.Helper()
	ab := &result.AB{Run: "20260101T000000Z-test", Baseline: sides[0].Name, Rounds: rounds, RoundsDone: rounds, OrderSeed: 7}
	for _, s := range sides {
		ab.Targets = append(ab.Targets, result.ABTarget{Name: s.Name, Spec: s.Name + "=settings:", File: s.Name + ".json"})
	}
	for r := 0; r < rounds; r++ {
		var order []string
		for _, s := range sides {
			order = append(order, s.Name)
		}
		ab.Order = append(ab.Order, order)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var out []compare.Input
	for _, s := range sides {
		f := &result.File{Schema: result.Schema, Version: result.Version, Complete: true, Started: start, Finished: start,
			Environment: result.Environment{OS: "linux/amd64", CPUModel: "Test CPU", CPUs: 2},
			Target:      result.Target{Kind: "ephemeral", Name: s.Name},
			Workload: result.Workload{Name: "select-only", Protocol: "prepared", Scale: 1, DurationS: 3,
				Scripts: []result.Script{{Name: "builtin:select-only", Weight: 1, Source: "SELECT 1"}}},
			AB: ab}
		for r := 1; r <= rounds; r++ {
			for _, c := range clients {
				tps := s.TPS[c][(r-1)%len(s.TPS[c])] // cycling, for more rounds than given
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
			t.Fatalf("synthetic file %s: %v", s.Name, err)
		}
		out = append(out, compare.Input{Name: s.Name, File: f})
	}
	return out
}

// Layouts puts the rounds of files from Files on cluster layouts of per
// rounds each, as an A/B run records them: with reshuffled, a run that
// re-created its clusters every per rounds; without, one that recorded
// its layouts but kept its clusters (give per = rounds).
func Layouts(inputs []compare.Input, rounds, per int, reshuffled bool) {
	ab := inputs[0].File.AB // shared by the files
	ab.Layouts = nil
	for r := 1; r <= rounds; r++ {
		n := (r-1)/per + 1
		if len(ab.Layouts) < n {
			ab.Layouts = append(ab.Layouts, result.Layout{Layout: n, Servers: map[string]string{}})
		}
		ab.Layouts[n-1].Rounds = append(ab.Layouts[n-1].Rounds, r)
	}
	if reshuffled {
		ab.Reshuffle = per
	}
}

// Scaled returns xs, each multiplied by the next of factors (cycling).
func Scaled(xs []float64, factors ...float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x * factors[i%len(factors)]
	}
	return out
}

// Base1 and Base2 are per-round tps of a baseline at 1 and 2 clients.
var (
	Base1 = []float64{10000, 10400, 9800, 10100, 10300, 9900}
	Base2 = []float64{18000, 18600, 17500, 18200, 18400, 17900}
)

// TwoSides are a baseline and a candidate about 10 % slower at c=1 and
// unchanged at c=2.
func TwoSides() []Side {
	return []Side{
		{"master", map[int][]float64{1: Base1, 2: Base2}},
		{"patch", map[int][]float64{1: Scaled(Base1, 0.90, 0.91, 0.89, 0.905), 2: Scaled(Base2, 1.01, 0.99, 1.0, 0.995)}},
	}
}

// Compare compares inputs with the bounds given, failing the test on an
// error.
func Compare(t testing.TB, inputs []compare.Input, bounds ...string) *compare.Comparison {
	t.Helper()
	b, err := stats.ParseBounds(bounds)
	if err != nil {
		t.Fatal(err)
	}
	c, err := compare.Compare(inputs, compare.Options{Bounds: b, Say: remedy.Say})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Counted makes files from Files those of servers counted under Valgrind
// (--count): each target records Valgrind, and each step the counts
// count(side, round) returns (side indexes inputs, rounds count from 1).
func Counted(inputs []compare.Input, count func(side, round int) *result.Instructions) {
	for i, in := range inputs {
		in.File.Target.Valgrind = &result.Valgrind{Version: "valgrind-3.19.0", Options: []string{"--tool=callgrind"}, ASLR: "off (setarch -R)"}
		for j := range in.File.Steps {
			s := &in.File.Steps[j]
			s.Probes = &result.Probes{}
			s.Probes.SetInstructions(count(i, s.Round))
		}
	}
}
