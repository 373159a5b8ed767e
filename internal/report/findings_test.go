package report_test

import (
	"math"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/compare/comparetest"
	"github.com/pgscale/pgscale/internal/golden"
	"github.com/pgscale/pgscale/internal/result"
)

// perRound builds a side's per-round values: base × exp(log) for each log.
func perRound(base float64, logs ...float64) []float64 {
	out := make([]float64, len(logs))
	for i, l := range logs {
		out[i] = base * math.Exp(l)
	}
	return out
}

// costs gives every step of the files the slice meter's costs: per
// transaction, in µs, the server's CPU (user, the rest in the kernel),
// its context switches, a pooler's CPU and switches, from per-round
// figures cost(side, round) returns.
func costs(inputs []compare.Input, cost func(side, round int) (cpu, user, ctx, pcpu, pctx float64)) {
	for side, in := range inputs {
		for i := range in.File.Steps {
			s := &in.File.Steps[i]
			n := float64(s.Summary.Transactions)
			cpu, user, ctx, pcpu, pctx := cost(side, s.Round)
			pc, px := pcpu*n/1e6, int64(pctx*n)
			s.Costs = &result.Costs{ServerCPUS: cpu * n / 1e6, ServerUserS: user * n / 1e6, ServerSysS: (cpu - user) * n / 1e6,
				ServerCtx: int64(ctx * n), PoolerCPUS: &pc, PoolerCtx: &px}
		}
	}
}

// Issue 32's findings 1 to 5, each made again from rounds of the size the
// issue saw, and what every format says of them now (the goldens
// testdata/finding-N.*).
func TestIssue32Findings(t *testing.T) {
	type finding struct {
		name   string
		rounds int
		base   []float64 // tps per round
		cand   []float64
		cost   func(side, round int) (cpu, user, ctx, pcpu, pctx float64)
		bounds []string
		want   []string // in the text
	}
	flat := func(cpu, user, ctx, pcpu, pctx float64) func(int, int) (float64, float64, float64, float64, float64) {
		return func(int, int) (float64, float64, float64, float64, float64) { return cpu, user, ctx, pcpu, pctx }
	}
	findings := []finding{
		{
			// 1. A false alarm: pooler-ctx/txn +21.6% ± 8.2% on 3 rounds
			// against +5%, throughput -13.9% ± 89.5%: failed, exit 1.
			name: "finding-1", rounds: 3,
			base: perRound(1400, 0, 0.3, -0.3), cand: perRound(1400*0.861, 0.25, -0.4, 0.15),
			cost: func(side, r int) (float64, float64, float64, float64, float64) {
				ctx := 2.0
				if side == 1 {
					ctx *= math.Exp([]float64{0.165, 0.196, 0.227}[r-1])
				}
				return 50, 40, 3, 30, ctx
			},
			bounds: []string{"tps=-5%", "pooler-cpu/txn=+5%", "pooler-ctx/txn=+5%"},
			want:   []string{"inconclusive", "pooler-ctx/txn@c=4 +21.6%", "3 rounds are too few to fail it"},
		},
		{
			// 2. A miss called a pass: pooler-cpu/txn +4.5% ± 18.2%
			// against +5%.
			name: "finding-2", rounds: 4,
			base: perRound(1400, 0, 0.01, -0.01, 0), cand: perRound(1400, 0.01, 0, 0, -0.01),
			cost: func(side, r int) (float64, float64, float64, float64, float64) {
				p := 30.0
				if side == 1 {
					p *= math.Exp([]float64{0.16, -0.07, 0.12, -0.04}[r-1])
				}
				return 50, 40, 3, p, 2
			},
			bounds: []string{"tps=-5%", "pooler-cpu/txn=+5%"},
			want:   []string{"inconclusive: 1 of 2 bounded measures undecided: pooler-cpu/txn@c=4 +4.", "would decide it", "or a counted measure (--count instructions: pooler-instr/txn)"},
		},
		{
			// 3. Words that contradicted the rows: no bound, a significant
			// +3.057% ± 0.004% change, "All 3 measures within bounds".
			name: "finding-3", rounds: 6,
			base: perRound(733, 0, 0.01, -0.01, 0.005, -0.005, 0), cand: perRound(733*1.03057, 0, 0.01, -0.01, 0.005, -0.005, 0),
			cost: flat(50, 40, 3, 30, 2),
			want: []string{"no bounds given: 3 of 10 measures changed: tps@c=4 +3.057%", "(improved)"},
		},
		{
			// 4. The why where the user does not look: server-user/txn
			// +11.8% ± 3.5% regressed with throughput unchanged, and "No
			// step is significantly slower or faster".
			name: "finding-4", rounds: 6,
			base: perRound(1400, 0, 0.02, -0.02, 0.01, -0.01, 0), cand: perRound(1400, 0.01, -0.01, 0.02, -0.02, 0, 0),
			cost: func(side, r int) (float64, float64, float64, float64, float64) {
				u := 40.0
				if side == 1 {
					u *= math.Exp(0.1115 + []float64{0.03, -0.03, 0.02, -0.02, 0.01, -0.01}[r-1])
				}
				return 10 + u, u, 3, 30, 2
			},
			bounds: []string{"tps=-5%"},
			want:   []string{"but its costs did: ", "server-user/txn +11.8%"},
		},
		{
			// 5. Past the bound, called within it: tps -33.8% ± 11.3%
			// against -5%, and the why "the server's CPU per transaction
			// did not change significantly" beside server-cpu/txn +24.4% ±
			// 9.4%.
			name: "finding-5", rounds: 3,
			base: perRound(1000, 0, 0.05, -0.05), cand: perRound(662, 0.03, -0.02, -0.01),
			cost: func(side, r int) (float64, float64, float64, float64, float64) {
				c := 50.0
				if side == 1 {
					c *= math.Exp(0.2183 + []float64{0.04, -0.04, 0}[r-1])
				}
				return c, c * 0.8, 3, 30, 2
			},
			bounds: []string{"tps=-5%"},
			want: []string{"tps@c=4 -33.8%", "inconclusive", "Past its bound, but 3 rounds are too few to fail it",
				"though the throughput's interval excludes no change at 4 clients (tps -33.8%"},
		},
	}
	for _, f := range findings {
		t.Run(f.name, func(t *testing.T) {
			sides := []comparetest.Side{{Name: "base", TPS: map[int][]float64{4: f.base}}, {Name: "cand", TPS: map[int][]float64{4: f.cand}}}
			inputs := comparetest.Files(t, sides, []int{4}, f.rounds)
			costs(inputs, f.cost)
			rep := comparetest.Compare(t, inputs, f.bounds...)
			d := doc(nil, rep)
			text := string(write(t, "text", d))
			flat := strings.Join(strings.Fields(text), " ") // the text wraps
			for _, w := range f.want {
				if !strings.Contains(flat, w) {
					t.Errorf("the text lacks %q:\n%s", w, text)
				}
			}
			bads := []string{"within bounds", "did not change significantly (+24"}
			if f.name == "finding-4" || f.name == "finding-5" { // what the table calls a change
				bads = append(bads, "No step is significantly slower or faster. ")
			}
			for _, bad := range bads {
				if strings.Contains(flat, bad) {
					t.Errorf("the text says %q:\n%s", bad, text)
				}
			}
			golden.Check(t, f.name+".txt", []byte(text))
			golden.Check(t, f.name+".comment.md", write(t, "comment", d))
		})
	}
}
