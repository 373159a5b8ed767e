package stats_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"

	moremath "github.com/aclements/go-moremath/stats"
	"golang.org/x/sync/errgroup"

	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/testenv"
)

// The false-alarm rates of the rules a bounded measure could fail by, on
// synthetic A/A runs (both targets the same, every round's values drawn
// from one distribution, a round's drift shared by both), as
// docs/statistics.md reports them. A run is a false alarm when any of its
// bounded measures fails; a gate of several measures at 5 % each fails far
// more often than 5 %.

// shape draws one target's value in one round, around 1.
type shape struct {
	name string
	draw func(r *rand.Rand, sd float64) float64
}

var shapes = []shape{
	{"normal", func(r *rand.Rand, sd float64) float64 { return math.Exp(sd * r.NormFloat64()) }},
	// Student's t with 3 degrees of freedom: rare rounds far off.
	{"t3", func(r *rand.Rand, sd float64) float64 {
		z := r.NormFloat64()
		chi := 0.0
		for i := 0; i < 3; i++ {
			x := r.NormFloat64()
			chi += x * x
		}
		return math.Exp(sd / math.Sqrt(3) * z / math.Sqrt(chi/3))
	}},
	// Skewed: slowdowns only (another process takes the CPU from one
	// target for part of its turn), exponential in size.
	{"skewed", func(r *rand.Rand, sd float64) float64 { return math.Exp(-sd * r.ExpFloat64()) }},
	// A hog: one turn in ten loses half its speed.
	{"hog", func(r *rand.Rand, sd float64) float64 {
		x := math.Exp(sd * r.NormFloat64())
		if r.Float64() < 0.1 {
			x *= 0.5
		}
		return x
	}},
}

// aaRounds draws the per-round values of m measures over n rounds of an A/A
// run: base[j][i] and cand[j][i], a drift shared by both sides in each
// round.
func aaRounds(r *rand.Rand, sh shape, sd float64, m, n int, effect []float64) (base, cand [][]float64) {
	base, cand = make([][]float64, m), make([][]float64, m)
	for j := 0; j < m; j++ {
		base[j], cand[j] = make([]float64, n), make([]float64, n)
		for i := 0; i < n; i++ {
			drift := math.Exp(0.1 * r.NormFloat64())
			base[j][i] = drift * sh.draw(r, sd)
			cand[j][i] = drift * sh.draw(r, sd) * (1 + effect[j])
		}
	}
	return base, cand
}

// gate is a pooler-ci-like family: 20 measures, the first 6 bounded at
// 5 % (half of them higher-is-better, as tps, half lower, as cpu/txn).
const gateMeasures, gateBounded = 20, 6

func gateMeasure(j int) (stats.Measure, string) {
	m := stats.Measure{Name: fmt.Sprintf("m%d", j), Step: "c=4", Direction: stats.LowerIsBetter}
	bound := m.Name + "=+5%"
	if j%2 == 0 {
		m.Direction = stats.HigherIsBetter
		bound = m.Name + "=-5%"
	}
	return m, bound
}

// rules are the candidate failure rules, each judging one run.
type rule struct {
	name string
	fail func(cs []stats.Comparison, bounds stats.Bounds, opt stats.Options) bool
}

var rules = []rule{
	// The rule before issue 32: the change past the bound, and
	// significantly different from no change after Holm's correction over
	// every measure.
	{"before: change past the bound, p(0) after Holm over all", func(cs []stats.Comparison, bounds stats.Bounds, _ stats.Options) bool {
		ps := make([]float64, len(cs))
		for i, c := range cs {
			ps[i] = c.P
		}
		h := stats.Holm(ps)
		for i, c := range cs {
			if b, ok := bounds.For(c.Measure); ok && h[i] <= 0.05 && past(c.Measure, c.Change, b.Limit()) {
				return true
			}
		}
		return false
	}},
	// The interval past the bound, each measure on its own.
	{"interval past the bound", func(cs []stats.Comparison, bounds stats.Bounds, _ stats.Options) bool {
		for _, c := range cs {
			if b, ok := bounds.For(c.Measure); ok && past(c.Measure, c.Lo, b.Limit()) && past(c.Measure, c.Hi, b.Limit()) {
				return true
			}
		}
		return false
	}},
	// The test against the bound, Holm over the bounded measures, at
	// least 6 rounds, on the t-test alone.
	{"t against the bound, Holm over the bounded, 6 rounds", func(cs []stats.Comparison, bounds stats.Bounds, _ stats.Options) bool {
		return holmFails(cs, bounds, func(c stats.Comparison, l float64) float64 { return tBound(c, l) })
	}},
	// The rule chosen (stats.FailRule): the test against the bound after
	// Holm over the bounded measures, with the sign test agreeing.
	{"chosen: t against the bound with Holm over the bounded, the signed-rank interval past it too", func(cs []stats.Comparison, bounds stats.Bounds, opt stats.Options) bool {
		v, err := stats.Evaluate(cs, bounds, opt)
		if err != nil {
			panic(err)
		}
		return v.Failed > 0
	}},
}

// holmFails applies a test against the bound to each bounded measure with
// at least 6 rounds and Holm's correction over them.
func holmFails(cs []stats.Comparison, bounds stats.Bounds, p func(stats.Comparison, float64) float64) bool {
	var ps []float64
	for _, c := range cs {
		if b, ok := bounds.For(c.Measure); ok {
			q := 1.0
			if c.N1 >= 6 && past(c.Measure, c.Change, b.Limit()) {
				q = p(c, b.Limit())
			}
			ps = append(ps, q)
		}
	}
	for _, q := range stats.Holm(ps) {
		if q <= 0.05 {
			return true
		}
	}
	return false
}

// tBound is the paired t-test of the mean log ratio against the bound's.
func tBound(c stats.Comparison, limit float64) float64 {
	d := c.PairedDetail
	if d == nil || !(d.SDLog > 0) {
		return 1
	}
	t := (d.MeanLog - math.Log1p(limit)) / (d.SDLog / math.Sqrt(float64(c.N1)))
	return 2 * (1 - tCDF(math.Abs(t), float64(c.N1-1)))
}

func tCDF(x, df float64) float64 { return moremath.TDist{V: df}.CDF(x) }

func past(m stats.Measure, x, limit float64) bool {
	if m.Direction == stats.LowerIsBetter {
		return x > limit
	}
	return x < limit
}

// falseAlarms counts the A/A runs each rule fails, out of runs.
func falseAlarms(seed uint64, sh shape, sd float64, n, runs int) []int {
	return failures(seed, sh, sd, n, runs, 0)
}

// failures counts the runs each rule fails, out of runs, when the first
// measure changes by first.
func failures(seed uint64, sh shape, sd float64, n, runs int, first float64) []int {
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	var bounds stats.Bounds
	ms := make([]stats.Measure, gateMeasures)
	for j := range ms {
		var spec string
		ms[j], spec = gateMeasure(j)
		if j < gateBounded {
			b, _ := stats.ParseBound(spec)
			bounds = append(bounds, b)
		}
	}
	count := make([]int, len(rules))
	effect := make([]float64, gateMeasures)
	effect[0] = first
	for k := 0; k < runs; k++ {
		base, cand := aaRounds(r, sh, sd, gateMeasures, n, effect)
		cs := make([]stats.Comparison, gateMeasures)
		for j := range cs {
			cs[j] = stats.ComparePaired(ms[j], base[j], cand[j], stats.Options{})
		}
		for i, ru := range rules {
			if ru.fail(cs, bounds, stats.Options{}) {
				count[i]++
			}
		}
	}
	return count
}

// The chosen rule fails at most 5 % of A/A runs of a 6-bound gate at any
// spread, shape and number of rounds (within the simulation's error),
// where the rule before it failed a run in three at 3 rounds and the
// heavy-tailed rounds of a loaded machine. The full table, logged with
// -v, is the one in docs/statistics.md.
func TestFalseAlarmRates(t *testing.T) {
	testenv.Simulation(t)
	runs, sds, ns := simRuns(2000, 800), []float64{0.02, 0.05, 0.1, 0.2}, []int{3, 4, 6, 10}
	limit := 0.05 + 3*math.Sqrt(0.05*0.95/float64(runs))
	var table strings.Builder
	fmt.Fprintf(&table, "| shape | spread per round | rounds | %s |\n|---|---|---|%s\n", ruleNames(), strings.Repeat("---|", len(rules)))
	type cell struct {
		sh     shape
		sd     float64
		n      int
		counts []int
	}
	var cells []*cell
	for _, sh := range shapes {
		for _, sd := range sds {
			for _, n := range ns {
				cells = append(cells, &cell{sh: sh, sd: sd, n: n})
			}
		}
	}
	each(len(cells), func(i int) { c := cells[i]; c.counts = falseAlarms(7, c.sh, c.sd, c.n, runs) })
	for _, c := range cells {
		fmt.Fprintf(&table, "| %s | %.0f%% | %d |", c.sh.name, 100*c.sd, c.n)
		for _, k := range c.counts {
			fmt.Fprintf(&table, " %.1f%% |", 100*float64(k)/float64(runs))
		}
		table.WriteString("\n")
		if rate := float64(c.counts[len(rules)-1]) / float64(runs); rate > limit {
			t.Errorf("%s rounds, spread %.0f%%, %d rounds: the chosen rule fails %.1f%% of A/A runs", c.sh.name, 100*c.sd, c.n, 100*rate)
		}
	}
	var power strings.Builder
	fmt.Fprintf(&power, "| shape | rounds | %s |\n|---|---|%s\n", ruleNames(), strings.Repeat("---|", len(rules)))
	power10, power3 := make([][]int, len(shapes)*3), make([][]int, len(shapes)*3)
	each(2*len(power10), func(i int) {
		k := i / 2
		sh, n := shapes[k/3], []int{6, 10, 20}[k%3]
		if i%2 == 0 {
			power10[k] = failures(7, sh, 0.05, n, runs/2, -0.10)
		} else {
			power3[k] = failures(7, sh, 0.05, n, runs/2, -0.03)
		}
	})
	for si, sh := range shapes {
		for ni, n := range []int{6, 10, 20} {
			count := power10[3*si+ni]
			fmt.Fprintf(&power, "| %s | %d |", sh.name, n)
			for _, c := range count {
				fmt.Fprintf(&power, " %.1f%% |", 100*float64(c)/float64(runs/2))
			}
			power.WriteString("\n")
		}
	}
	t.Logf("power: tps 10%% lower against -5%% (5%% spread per value), with 5 more bounded measures unchanged:\n%s", power.String())
	var inside strings.Builder
	fmt.Fprintf(&inside, "| shape | rounds | %s |\n|---|---|%s\n", ruleNames(), strings.Repeat("---|", len(rules)))
	for si, sh := range shapes {
		for ni, n := range []int{6, 10, 20} {
			count := power3[3*si+ni]
			fmt.Fprintf(&inside, "| %s | %d |", sh.name, n)
			for _, c := range count {
				fmt.Fprintf(&inside, " %.1f%% |", 100*float64(c)/float64(runs/2))
			}
			inside.WriteString("\n")
			if rate := float64(count[len(rules)-1]) / float64(runs/2); rate > limit {
				t.Errorf("%s, %d rounds: the chosen rule fails %.1f%% of runs 3%% lower against a -5%% bound", sh.name, n, 100*rate)
			}
		}
	}
	t.Logf("false alarms: tps 3%% lower, inside its -5%% bound (5%% spread per value), 5 more bounded measures unchanged:\n%s", inside.String())
	t.Logf("false alarms in %d A/A runs of %d measures, %d bounded at 5%%:\n%s", runs, gateMeasures, gateBounded, table.String())
}

// simRuns is how many simulated runs a cell of the full tier makes: the
// docs' tables were made with full (PGSCALE_SIM=full go test -run ... -v
// ./internal/stats); the test suite makes ci, enough to hold the limits,
// which widen with fewer runs (three standard errors of a 5 % rate: 7.3 %
// at 800 runs, 8.8 % at 300), against rates the chosen rule keeps at 1 %
// and the rules it replaced push to 6–30 %. The full size took 4–5 of
// CI's minutes on 2 cores.
func simRuns(full, ci int) int {
	if os.Getenv("PGSCALE_SIM") == "full" {
		return full
	}
	return ci
}

// each calls f(0) … f(n-1) on as many goroutines as the machine has
// CPUs: the simulation's cells are independent (each seeds its own
// generator), so the tables come out the same as one at a time.
func each(n int, f func(i int)) {
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i := range n {
		g.Go(func() error { f(i); return nil })
	}
	g.Wait()
}

func ruleNames() string {
	var ns []string
	for _, r := range rules {
		ns = append(ns, r.name)
	}
	return strings.Join(ns, " | ")
}

// sequentialRun looks after every round from stats.FirstLook up to max
// and stops once every bounded measure is decided; it returns the final
// verdict and the rounds it took. naive decides every look at the full
// alpha, as looking without spending would.
func sequentialRun(r *rand.Rand, sh shape, sd float64, effect []float64, max int, naive bool) (stats.Verdict, int) {
	m := len(effect)
	base, cand := aaRounds(r, sh, sd, m, max, effect)
	var bounds stats.Bounds
	ms := make([]stats.Measure, m)
	for j := range ms {
		var spec string
		ms[j], spec = gateMeasure(j)
		b, _ := stats.ParseBound(spec)
		bounds = append(bounds, b)
	}
	var v stats.Verdict
	for n := stats.FirstLook; n <= max; n++ {
		opt := stats.Options{Sequential: &stats.Sequential{Look: n, Max: max, Interim: true}}
		if naive {
			opt = stats.Options{}
		}
		cs := make([]stats.Comparison, m)
		for j := range cs {
			cs[j] = stats.ComparePaired(ms[j], base[j][:n], cand[j][:n], stats.Options{})
		}
		var err error
		if v, err = stats.Evaluate(cs, bounds, opt); err != nil {
			panic(err)
		}
		if v.Decided() || (naive && v.Failed > 0) {
			return v, n
		}
	}
	return v, max
}

// Rounds until decided: looking after every round and stopping once
// decided keeps the A/A false-failure rate at or below alpha, for every
// shape of round and with a measure exactly at its bound (the hardest
// case: the least favourable null), where looking at the full alpha every
// round does not. It also logs how often and how soon a real change is
// decided.
func TestSequentialFalseAlarms(t *testing.T) {
	testenv.Simulation(t)
	runs, maxes, shs := simRuns(1000, 300), []int{12, 30}, shapes
	limit := 0.05 + 3*math.Sqrt(0.05*0.95/float64(runs))
	var table strings.Builder
	table.WriteString("| shape | spread | true changes | max rounds | looks spent | fail | pass | inconclusive | mean rounds |\n|---|---|---|---|---|---|---|---|---|\n")
	cases := []struct {
		name   string
		effect []float64
		sd     float64
		null   bool
	}{
		{"A/A", []float64{0, 0, 0, 0, 0, 0}, 0.05, true},
		{"A/A", []float64{0, 0, 0, 0, 0, 0}, 0.2, true},
		{"one measure, at its bound", []float64{-0.05}, 0.05, true},
		{"tps -10%", []float64{-0.10, 0, 0, 0, 0, 0}, 0.05, false},
		{"tps -3%, bound -1%", nil, 0.02, false},
	}
	type cell struct {
		sh                      shape
		ci, max                 int
		naive                   bool
		fail, pass, inc, rounds int
	}
	var cells []*cell
	for _, sh := range shs {
		for ci, c := range cases {
			for _, max := range maxes {
				for _, naive := range []bool{false, true} {
					if naive && !c.null {
						continue
					}
					cells = append(cells, &cell{sh: sh, ci: ci, max: max, naive: naive})
				}
			}
		}
	}
	each(len(cells), func(i int) {
		e := cells[i]
		c := cases[e.ci]
		r := rand.New(rand.NewPCG(11, uint64(e.max)))
		for k := 0; k < runs; k++ {
			var v stats.Verdict
			var n int
			if c.effect == nil {
				v, n = powerRun(r, e.sh, c.sd, e.max)
			} else {
				v, n = sequentialRun(r, e.sh, c.sd, c.effect, e.max, e.naive)
			}
			e.rounds += n
			switch v.Outcome {
			case stats.Fail:
				e.fail++
			case stats.Pass:
				e.pass++
			default:
				e.inc++
			}
		}
	})
	for _, e := range cells {
		c := cases[e.ci]
		how := "spent"
		if e.naive {
			how = "naive (full alpha each)"
		}
		pct := func(k int) float64 { return 100 * float64(k) / float64(runs) }
		fmt.Fprintf(&table, "| %s | %.0f%% | %s | %d | %s | %.1f%% | %.1f%% | %.1f%% | %.1f |\n", e.sh.name, 100*c.sd, c.name, e.max, how,
			pct(e.fail), pct(e.pass), pct(e.inc), float64(e.rounds)/float64(runs))
		if c.null && !e.naive && float64(e.fail)/float64(runs) > limit {
			t.Errorf("%s, %s, spread %.0f%%, up to %d rounds: %d of %d runs failed", e.sh.name, c.name, 100*c.sd, e.max, e.fail, runs)
		}
	}
	t.Logf("rounds until decided, %d runs each:\n%s", runs, table.String())
}

// powerRun is one run of a throughput measure 3 % lower against a bound
// of -1 %, looked at after every round.
func powerRun(r *rand.Rand, sh shape, sd float64, max int) (stats.Verdict, int) {
	m := stats.Measure{Name: "tps", Step: "c=4", Direction: stats.HigherIsBetter}
	bounds, _ := stats.ParseBounds([]string{"tps=-1%"})
	base, cand := aaRounds(r, sh, sd, 1, max, []float64{-0.03})
	var v stats.Verdict
	for n := stats.FirstLook; n <= max; n++ {
		c := stats.ComparePaired(m, base[0][:n], cand[0][:n], stats.Options{})
		v, _ = stats.Evaluate([]stats.Comparison{c}, bounds, stats.Options{Sequential: &stats.Sequential{Look: n, Max: max, Interim: true}})
		if v.Decided() {
			return v, n
		}
	}
	return v, max
}

// The parts of alpha the looks spend add up to alpha, none is negative,
// and looks before FirstLook or past Max spend nothing.
func TestSpendAddsUp(t *testing.T) {
	for _, max := range []int{3, 12, 30, 100} {
		sum := 0.0
		for n := 0; n <= max+2; n++ {
			a := stats.Sequential{Look: n, Max: max}.Spend(0.05)
			if a < 0 || (n < stats.FirstLook || n > max) && a != 0 {
				t.Errorf("max %d, look %d: spends %v", max, n, a)
			}
			sum += a
		}
		near(t, fmt.Sprintf("max %d: sum", max), sum, 0.05, 1e-12)
	}
}

func TestMinFailRounds(t *testing.T) {
	for _, c := range []struct {
		conf float64
		want int
	}{{0.95, 6}, {0.99, 8}, {0.9, 5}, {0.998, 10}} {
		if got := stats.MinFailRounds(c.conf); got != c.want {
			t.Errorf("MinFailRounds(%v) = %d, want %d", c.conf, got, c.want)
		}
	}
}
