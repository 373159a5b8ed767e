package diagnose

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
)

// A counted measure is a sum over hundreds of functions: a change of a few
// instructions in one of them is below the measure's smallest change of
// interest (0.1 %), or inside the pooler's noise, and the why, which
// explains only measures that changed, never named it. So every
// function's own count per transaction is tested on its own, paired over
// the rounds (over the cluster layouts when the run made several), with
// Holm's correction over the functions of one process at one step, and a
// function that changed consistently by at least MinFunctionDelta
// instructions per transaction and MinFunctionShare of its own count, in
// most of the pairs of windows compared (not only in their layouts'
// means: inMost), is named, whatever the total did.

// Thresholds of the per-function tests: a function is named when its
// change per transaction is at least MinFunctionDelta instructions and
// MinFunctionShare of its own count (the larger side's). Measured here
// (docs/counting-instructions.md, "Functions that changed"): in A/A runs
// the functions whose counts differed consistently moved by less than 1
// instruction per transaction; settings that move shared memory moved
// memset and strlen by up to 7 instructions, under 2 % of their count; the
// pgbouncer fixture's few commit adds 11 instructions (17 %) to
// release_server.
const (
	MinFunctionDelta = 4.0
	MinFunctionShare = 0.05
)

// FunctionChange is one function whose own count per transaction changed
// consistently between the baseline and a candidate at one step.
type FunctionChange struct {
	Clients int
	// Process is "server" (the client backends) or "pooler"; Measure the
	// total its own count is part of ("instr/txn", "pooler-instr/txn").
	Process, Measure string
	Function, Object string
	// Base and Cand are its own instructions per transaction, means over
	// the pairs (the pooler's with its time-driven part taken off);
	// Delta, Lo and Hi the mean change and its interval; P the
	// Holm-adjusted p-value; Pairs the pairs (layouts) tested.
	Base, Cand, Delta, Lo, Hi, P float64
	Pairs                        int
	// OfTotal is the change as a share of the total's count per
	// transaction, Share as a share of the total's change when the
	// comparison found Measure's change significant (negative: the
	// function moved against it), else NaN; the total is the sum of the
	// functions' own counts in the same pairs.
	OfTotal, Share float64
}

// Name is the function as the why names it (FunctionDelta.Name).
func (f FunctionChange) Name() string {
	return FunctionDelta{Function: f.Function, Object: f.Object}.Name()
}

// Relative is the change as a share of the baseline's count; +Inf for a
// function the baseline did not run.
func (f FunctionChange) Relative() float64 {
	if f.Base == 0 {
		return math.Inf(1)
	}
	return f.Delta / f.Base
}

// FunctionTests is what the per-function tests of one process at one
// step found: how many functions were tested over how many pairs, and
// those that changed.
type FunctionTests struct {
	Clients int
	Process string
	Tested  int
	Pairs   int
	// TimeSeparated says the pooler's functions were compared with their
	// time-driven work taken off; Layouts that the pairs were cluster
	// layouts, not rounds.
	TimeSeparated, Layouts bool
	// Measure is the total the functions' own counts are part of, and
	// Total its change as the comparison judged it (its Known false when
	// the comparison had none).
	Measure string
	Total   Change
	Changed []FunctionChange
	Text    string
}

// testFunctions tests every function of each counted process at one step
// (the package's comment above).
func testFunctions(st DiffStep, opt stats.Options) []FunctionTests {
	var out []FunctionTests
	for _, p := range countedProcesses {
		ft, ok := testProcess(st, p, opt)
		if ok {
			out = append(out, ft)
		}
	}
	return out
}

// testProcess runs the per-function tests of one process; false when the
// step's pairs hold no counts per function for it.
func testProcess(st DiffStep, p countedProcess, opt stats.Options) (FunctionTests, bool) {
	n := min(len(st.Base), len(st.Cand))
	var base, cand []result.Step
	for i := 0; i < n; i++ {
		b, c := p.counts(st.Base[i]), p.counts(st.Cand[i])
		if b == nil || c == nil || len(b.Functions) == 0 || len(c.Functions) == 0 {
			continue
		}
		base, cand = append(base, st.Base[i]), append(cand, st.Cand[i])
	}
	if len(base) < 2 {
		return FunctionTests{}, false
	}
	// The pooler's time-driven work per function, when its windows'
	// durations are recorded and tell it: a function whose count grows
	// clearly with the window's wall time (stats.TimeFit.Clear: its
	// maintenance, do_full_maint, all of it; its event loop, the turns
	// the timers wake) is compared with that part taken off; one whose
	// fit is unclear (the event loop at 4 clients, whose turns move with
	// how packets bunch) as it is.
	var fits map[fnKey]stats.TimeFit
	if p.name == "pooler" {
		if f := PoolerTime([][]result.Step{base, cand}); f.Determined {
			fits = poolerFunctionTime(base, cand)
		}
	}
	perTxn := func(s result.Step) map[fnKey]float64 {
		in := p.counts(s)
		out := map[fnKey]float64{}
		pt, timed := PoolerPoint(s)
		for _, f := range in.Functions {
			k := fnKey{f.Function, f.Object}
			v := float64(f.Self) / float64(in.Transactions)
			if fit, ok := fits[k]; ok && timed && fit.Clear() {
				v = fit.PerEventPart(stats.TimePoint{Count: float64(f.Self), Events: pt.Events, Seconds: pt.Seconds})
			}
			out[k] += v
		}
		return out
	}
	// One pair per layout: rounds of one layout repeat one cluster's
	// values, and the clusters are what vary.
	unit := pairUnits(st, base)
	perUnit := map[int]*[2]map[fnKey]float64{}
	count := map[int]int{}
	var order []int
	keys := map[fnKey]bool{}
	windows := make([][2]map[fnKey]float64, len(base)) // each pair of windows, for the majority rule
	for i := range base {
		u := unit[i]
		if perUnit[u] == nil {
			perUnit[u] = &[2]map[fnKey]float64{{}, {}}
			order = append(order, u)
		}
		count[u]++
		for side, s := range []result.Step{base[i], cand[i]} {
			windows[i][side] = perTxn(s)
			for k, v := range windows[i][side] {
				perUnit[u][side][k] += v
				keys[k] = true
			}
		}
	}
	sortedKeys := make([]fnKey, 0, len(keys))
	for k := range keys {
		sortedKeys = append(sortedKeys, k)
	}
	sort.Slice(sortedKeys, func(i, j int) bool {
		return sortedKeys[i].fn < sortedKeys[j].fn || sortedKeys[i].fn == sortedKeys[j].fn && sortedKeys[i].ob < sortedKeys[j].ob
	})
	ft := FunctionTests{Clients: st.Clients, Process: p.name, Tested: len(sortedKeys), Pairs: len(order), TimeSeparated: fits != nil,
		Layouts: len(st.Layouts) > 0, Measure: p.prefix + "instr/txn"}
	ft.Total = st.Changes[ft.Measure]
	// The total the functions are parts of, from the same pairs: the sum
	// of their own counts, each unit's mean, averaged over the units.
	var totalBase, totalDelta float64
	for _, u := range order {
		w := float64(count[u])
		for _, k := range sortedKeys {
			totalBase += perUnit[u][0][k] / w
			totalDelta += (perUnit[u][1][k] - perUnit[u][0][k]) / w
		}
	}
	totalBase /= float64(len(order))
	totalDelta /= float64(len(order))
	var all []FunctionChange
	var ps []float64
	for _, k := range sortedKeys {
		var bs, cs []float64
		for _, u := range order {
			w := float64(count[u])
			bs, cs = append(bs, perUnit[u][0][k]/w), append(cs, perUnit[u][1][k]/w)
		}
		d := pairedFunction(bs, cs, opt)
		pv := d.P
		if math.IsNaN(pv) {
			pv = 1
		}
		fc := FunctionChange{Clients: st.Clients, Process: ft.Process, Measure: ft.Measure, Function: k.fn, Object: k.ob,
			Base: d.Base, Cand: d.Cand, Delta: d.Diff, Lo: d.Lo, Hi: d.Hi, P: pv, Pairs: d.N}
		fc.OfTotal, fc.Share = parts(fc.Delta, totalBase, totalDelta, ft.Total)
		all = append(all, fc)
		ps = append(ps, pv)
	}
	adj := stats.Holm(ps)
	alpha := 1 - confidence(opt)
	for i, fc := range all {
		fc.P = adj[i]
		if fc.P < alpha && math.Abs(fc.Delta) >= MinFunctionDelta && math.Abs(fc.Delta) >= MinFunctionShare*math.Max(fc.Base, fc.Cand) &&
			inMost(windows, fnKey{fc.Function, fc.Object}, fc.Delta) {
			ft.Changed = append(ft.Changed, fc)
		}
	}
	sort.Slice(ft.Changed, func(i, j int) bool {
		if a, b := math.Abs(ft.Changed[i].Delta), math.Abs(ft.Changed[j].Delta); a != b {
			return a > b
		}
		return ft.Changed[i].Function < ft.Changed[j].Function
	})
	ft.Text = functionsText(ft)
	return ft, true
}

// pairedFunction tests one function's own counts per transaction, one
// value per unit (layout) a side. A function the data scales (a loop over
// the rows a query reads, on layouts whose data differs by some per cent)
// changes by a ratio the code sets and a difference the data sets: its
// differences over three layouts (+63 504, +66 276, +64 512 for a loop
// made 14 % longer) leave a t-test with 2 degrees of freedom at p 1.6e-4,
// which Holm's correction over some 450 functions takes past 0.05, while
// its ratios (1.1385 in each layout) are the code's alone. So where every
// unit has counts on both sides the test is the totals' own, on the log
// ratios, its interval said in instructions at the baseline's mean; a function absent on one side in some unit is tested by its
// differences.
func pairedFunction(bs, cs []float64, opt stats.Options) stats.Difference {
	d := stats.PairedDifference(bs, cs, opt)
	lb, lc := make([]float64, len(bs)), make([]float64, len(cs))
	for i := range bs {
		if !(bs[i] > 0 && cs[i] > 0) {
			return d
		}
		lb[i], lc[i] = math.Log(bs[i]), math.Log(cs[i])
	}
	l := stats.PairedDifference(lb, lc, opt)
	if l.N < 2 || math.IsNaN(l.P) {
		return d
	}
	// The change stays the mean difference (what before → after says);
	// its interval is the ratio's at the baseline's mean, holding it.
	d.P = l.P
	if l.Lo == l.Hi {
		return d // the same ratio in every unit: no width to say
	}
	d.Lo, d.Hi = min(d.Base*math.Expm1(l.Lo), d.Diff), max(d.Base*math.Expm1(l.Hi), d.Diff)
	return d
}

// inMost says a function's change of delta per transaction shows in
// most pairs of windows compared (a strict majority), each pair's own
// change having delta's sign and at least half its size. Averaged over
// its layout's rounds, one window's one-off event (a first query planned,
// an error raised once: a thousand instructions, 50 a transaction at -t
// 20) could repeat in every layout's mean, and the test over the layouts
// call it consistent; a change the code makes shows in every window.
func inMost(windows [][2]map[fnKey]float64, k fnKey, delta float64) bool {
	n := 0
	for _, w := range windows {
		if d := w[1][k] - w[0][k]; d*delta > 0 && math.Abs(d) >= math.Abs(delta)/2 {
			n++
		}
	}
	return 2*n > len(windows)
}

// parts is a function's change of delta per transaction as a share of
// its total's count per transaction, base, and of the total's change,
// delta, when the comparison found that significant (c); NaN for what
// is not known.
func parts(d, base, delta float64, c Change) (ofTotal, ofChange float64) {
	ofTotal, ofChange = math.NaN(), math.NaN()
	if base > 0 {
		ofTotal = d / base
	}
	if c.Known && c.Significant && c.Change != 0 && delta != 0 {
		ofChange = d / delta
	}
	return
}

// confidence is the options' confidence level (0.95 by default).
func confidence(opt stats.Options) float64 {
	if opt.Confidence > 0 && opt.Confidence < 1 {
		return opt.Confidence
	}
	return 0.95
}

// pairUnits gives each pair of the step the unit it is tested in: its
// layout when the pairs ran on several (DiffStep.Layouts), else its own.
func pairUnits(st DiffStep, base []result.Step) []int {
	out := make([]int, len(base))
	for i, s := range base {
		out[i] = -i - 1
		if l, ok := st.Layouts[s.Round]; ok {
			out[i] = l
		}
	}
	return out
}

// DeltaText is the change per transaction with its interval's
// half-width: "+11 ± 0.4", "+4.0".
func (f FunctionChange) DeltaText() string {
	pm := ""
	if w := (f.Hi - f.Lo) / 2; w > 0 && !math.IsInf(w, 0) {
		pm = " ± " + strings.TrimPrefix(perTxn(w), "+")
		if w < 0.005 {
			pm = " ± <0.01" // not "± 0.00", which reads as no interval
		}
	}
	return perTxn(f.Delta) + pm
}

// RelativeText is the change as a share of the function's own baseline
// count: "+17.5%", or "new" for a function the baseline did not run.
func (f FunctionChange) RelativeText() string {
	if r := f.Relative(); !math.IsInf(r, 0) {
		return fmt.Sprintf("%+.1f%%", 100*r)
	}
	return "new"
}

// PartText says what the function's change is of its total: "85% of
// pooler-instr/txn's change", "against pooler-instr/txn's change:
// offsets 20% of it", "+0.26% of pooler-instr/txn" when the total did
// not change significantly; "" when the total is unknown.
func (f FunctionChange) PartText() string {
	switch {
	case !math.IsNaN(f.Share) && f.Share >= 0:
		return fmt.Sprintf("%s of %s's change", prose.Share(f.Share), f.Measure)
	case !math.IsNaN(f.Share):
		return fmt.Sprintf("against %s's change: offsets %s of it", f.Measure, prose.Share(-f.Share))
	case !math.IsNaN(f.OfTotal):
		return fmt.Sprintf("%s of %s", signedShare(f.OfTotal), f.Measure)
	}
	return ""
}

// signedShare writes a small signed share with the digits it needs:
// "+0.26%", "-1.4%", "+12%".
func signedShare(x float64) string {
	switch a := math.Abs(100 * x); {
	case a >= 10:
		return fmt.Sprintf("%+.0f%%", 100*x)
	case a >= 1:
		return fmt.Sprintf("%+.1f%%", 100*x)
	case a >= 0.01:
		return fmt.Sprintf("%+.2f%%", 100*x)
	}
	return fmt.Sprintf("%+.3f%%", 100*x)
}

// maxFunctionsNamed is how many changed functions a sentence names.
const maxFunctionsNamed = 6

// functionsText is the per-function tests' sentence, "" when no function
// changed: "functions that changed at 1 client (the pooler's own
// instructions per transaction, its time-driven work taken off; paired
// over 5 cluster layouts, Holm over 64 functions; from 4 instructions and
// 5 %): release_server +11.0 (63.0 → 74.0, +17.5%)."
func functionsText(ft FunctionTests) string {
	if len(ft.Changed) == 0 {
		return ""
	}
	whose := "the client backends'"
	if ft.Process != "server" {
		whose = "the " + ft.Process + "'s"
	}
	how := whose + " own instructions per transaction"
	if ft.TimeSeparated {
		how += ", its time-driven work taken off"
	}
	var parts []string
	for _, f := range ft.Changed[:min(len(ft.Changed), maxFunctionsNamed)] {
		part := ""
		if p := f.PartText(); p != "" {
			part = "; " + p
		}
		parts = append(parts, fmt.Sprintf("%s %s (%.1f → %.1f, %s%s)", f.Name(), f.DeltaText(), f.Base, f.Cand, f.RelativeText(), part))
	}
	more := ""
	if n := len(ft.Changed) - maxFunctionsNamed; n > 0 {
		more = fmt.Sprintf(", and %s more", prose.Count(n, "function"))
	}
	return fmt.Sprintf("Functions that changed at %s (%s; paired over %s, Holm over %s; named from %.0f instructions and %.0f%% of their count): %s%s.",
		prose.Count(ft.Clients, "client"), how, prose.Count(ft.Pairs, unitWord(ft)), prose.Count(ft.Tested, "function"),
		MinFunctionDelta, 100*MinFunctionShare, strings.Join(parts, ", "), more)
}

// unitWord names what the tests paired over.
func unitWord(ft FunctionTests) string {
	if ft.Layouts {
		return "cluster layout"
	}
	return "round"
}

// ChangedFunctions are the functions the per-function tests named, at
// every step and in every process, the largest change per transaction
// first (then by client count, process and name): the finding a pull
// request reads first, whatever the totals did.
func (d Differential) ChangedFunctions() []FunctionChange {
	var out []FunctionChange
	for _, ft := range d.Functions {
		out = append(out, ft.Changed...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if x, y := math.Abs(a.Delta), math.Abs(b.Delta); x != y {
			return x > y
		}
		if a.Clients != b.Clients {
			return a.Clients < b.Clients
		}
		if a.Process != b.Process {
			return a.Process < b.Process
		}
		return a.Function < b.Function
	})
	return out
}
