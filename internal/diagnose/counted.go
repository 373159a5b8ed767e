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

// CountedChange explains one counted measure's change at one step (a
// comparison of servers run under Valgrind, --count) from the counts per
// function both sides recorded: the functions whose own count moved
// most, and the most specific function that holds most of the change
// with its callees.
type CountedChange struct {
	Clients int
	// Measure is the measure explained ("instr/txn", "est-cycles/txn",
	// "syscalls/txn", "clock-reads/txn"); Process whose functions are
	// named ("server": the client backends).
	Measure, Process string
	Change           Change
	// Delta is the change per transaction in the measure's unit: the
	// mean over the pairs of steps of candidate less baseline (NaN when
	// the files hold no counts per function).
	Delta float64
	// Self are the functions whose own count moved most, largest first;
	// Inside, when some function holds at least insideShare of the
	// change with its callees (not in its own code alone), the most
	// specific such function: the one that costs least with them.
	Self   []FunctionDelta
	Inside *FunctionDelta
	Text   string
}

// FunctionDelta is one function's part in a counted change: its count
// per transaction on each side (means over the pairs of steps), the
// difference, and that as a share of the measure's change.
type FunctionDelta struct {
	Function, Object string
	Base, Cand       float64
	Delta, Share     float64
}

// Name is the function as the why names it: its name, or for a function
// known only by its address (a stripped binary's static function) the
// address and its file.
func (f FunctionDelta) Name() string {
	if a, ok := strings.CutPrefix(f.Function, "0x"); ok {
		return "0x" + strings.TrimLeft(a, "0") + " in " + f.Object
	}
	return f.Function
}

// How many functions a counted change names, and the least share of the
// change a function must hold to be named; insideShare is the share the
// function it is inside must hold.
const (
	maxSelfFunctions = 4
	minSelfShare     = 0.05
	insideShare      = 2.0 / 3
	// rootShare is the share of the whole count from which a function
	// is a root: that a change is inside it says nothing.
	rootShare = 0.5
)

// countedKind is a counted measure the per-function counts explain: how
// to read the measure's total and one function's own and inclusive
// count from a step's evidence, and what the functions' counts are.
type countedKind struct {
	measure, what string
	total         func(*result.Instructions) (float64, bool)
	fn            func(result.FunctionCount) (self, incl float64)
}

// countedKinds are the counted measures explained function by function:
// instructions, estimated cycles (with the cache simulation), the system
// calls the server would make natively too, and the clock reads. A
// function's inclusive system calls are callgrind's, of every kind: the
// function a change in one kind is inside is named right when the other
// kind did not change there too.
var countedKinds = []countedKind{
	{"instr/txn", "own instructions",
		func(i *result.Instructions) (float64, bool) { return float64(i.ClientBackends), true },
		func(f result.FunctionCount) (float64, float64) { return float64(f.Self), float64(f.Inclusive) }},
	{"est-cycles/txn", "own estimated cycles",
		func(i *result.Instructions) (float64, bool) {
			c := i.Simulated()
			if c == nil {
				return 0, false
			}
			return float64(c.EstCycles), true
		},
		func(f result.FunctionCount) (float64, float64) {
			return float64(f.EstCycles), float64(f.EstCyclesInclusive)
		}},
	{"syscalls/txn", "system calls",
		func(i *result.Instructions) (float64, bool) {
			n := i.ClientSyscalls
			if i.ClientClockReads != nil {
				n -= min(n, *i.ClientClockReads)
			}
			return float64(n), true
		},
		func(f result.FunctionCount) (float64, float64) {
			if result.ClockFunction(f.Function) {
				return 0, 0
			}
			return float64(f.Syscalls), float64(f.SyscallsInclusive)
		}},
	{"clock-reads/txn", "clock reads",
		func(i *result.Instructions) (float64, bool) {
			if i.ClientClockReads == nil {
				return 0, false
			}
			return float64(*i.ClientClockReads), true
		},
		func(f result.FunctionCount) (float64, float64) {
			if !result.ClockFunction(f.Function) {
				return 0, float64(f.SyscallsInclusive)
			}
			return float64(f.Syscalls), float64(f.SyscallsInclusive)
		}},
}

// countedProcess is a process of a target counted under Valgrind per
// transaction: its name in the why, the prefix of its measures' names,
// and its counts in a step.
type countedProcess struct {
	name, prefix string
	counts       func(result.Step) *result.Instructions
}

// countedProcesses are the processes whose counted changes are explained:
// the server's client backends, and a pooler or proxy run under Valgrind
// in front of it (its measures prefixed "pooler-", compare.Measures).
var countedProcesses = []countedProcess{{"server", "", counts}, {"pooler", "pooler-", poolerCounts}}

// explainCounted explains each counted measure of the step that changed
// significantly and by more than is negligible.
func explainCounted(st DiffStep) []CountedChange {
	var out []CountedChange
	for _, p := range countedProcesses {
		for _, k := range countedKinds {
			measure := p.prefix + k.measure
			c := st.Changes[measure]
			if !c.Known || !c.Significant || c.Negligible || c.Change == 0 {
				continue
			}
			cc, ok := countedChange(st, p, k, c)
			if !ok {
				cc = CountedChange{Clients: st.Clients, Measure: measure, Process: p.name, Change: c, Delta: math.NaN()}
				cc.Text = fmt.Sprintf("%s at %s %s: the result files hold no counts per function to say where.",
					measure, prose.Count(st.Clients, "client"), stats.FormatChange(c.Change, c.Lo, c.Hi))
			}
			out = append(out, cc)
		}
	}
	// The simulated misses are not counted per function: a change in them
	// is said, with no function named.
	for _, m := range missMeasures {
		c := st.Changes[m]
		if !c.Known || !c.Significant || c.Negligible || c.Change == 0 {
			continue
		}
		out = append(out, CountedChange{Clients: st.Clients, Measure: m, Process: "server", Change: c, Delta: math.NaN(),
			Text: fmt.Sprintf("%s at %s %s: the cache simulation counts misses per process, not per function, so no function is named; est-cycles/txn prices them.",
				m, prose.Count(st.Clients, "client"), stats.FormatChange(c.Change, c.Lo, c.Hi))})
	}
	return out
}

// missMeasures are the cache simulation's miss measures (compare.Measures).
var missMeasures = []string{"l1i-miss/txn", "l1d-miss/txn", "ll-miss/txn", "branch-miss/txn"}

// countedChange compares one process's per-function counts in the step's
// pairs for one measure; false when no pair has them on both sides.
func countedChange(st DiffStep, p countedProcess, k countedKind, c Change) (CountedChange, bool) {
	type sides struct{ base, cand, baseIncl, candIncl float64 }
	type key struct{ fn, ob string }
	fns := map[key]*sides{}
	var delta, baseTotal float64
	var timeFits map[fnKey]stats.TimeFit
	if p.name == "pooler" && k.measure == "instr/txn" && st.PoolerTime.Determined {
		timeFits = poolerFunctionTime(st.Base, st.Cand)
	}
	n := 0
	for i := 0; i < min(len(st.Base), len(st.Cand)); i++ {
		b, cd := p.counts(st.Base[i]), p.counts(st.Cand[i])
		if b == nil || cd == nil || len(b.Functions) == 0 || len(cd.Functions) == 0 {
			continue
		}
		bt, ok1 := k.total(b)
		ct, ok2 := k.total(cd)
		if !ok1 || !ok2 {
			continue
		}
		n++
		bv, cv := bt/float64(b.Transactions), ct/float64(cd.Transactions)
		if p.name == "pooler" && k.measure == "instr/txn" && st.PoolerTime.Determined {
			// The measure is the per-transaction part (PoolerTime).
			bp, ok1 := PoolerPoint(st.Base[i])
			cp, ok2 := PoolerPoint(st.Cand[i])
			if ok1 && ok2 {
				bv, cv = st.PoolerTime.PerEventPart(bp), st.PoolerTime.PerEventPart(cp)
			}
		}
		delta += cv - bv
		baseTotal += bv
		for side, in := range []*result.Instructions{b, cd} {
			tx := float64(in.Transactions)
			pt, timed := PoolerPoint([]result.Step{st.Base[i], st.Cand[i]}[side])
			for _, f := range in.Functions {
				self, incl := k.fn(f)
				if self == 0 && incl == 0 {
					continue
				}
				// A function that runs to the clock is named for its
				// work per transaction, as the per-function tests do.
				if fit, ok := timeFits[fnKey{f.Function, f.Object}]; ok && timed && fit.Clear() {
					self = tx * fit.PerEventPart(stats.TimePoint{Count: self, Events: pt.Events, Seconds: pt.Seconds})
				}
				s := fns[key{f.Function, f.Object}]
				if s == nil {
					s = &sides{}
					fns[key{f.Function, f.Object}] = s
				}
				if side == 0 {
					s.base, s.baseIncl = s.base+self/tx, s.baseIncl+incl/tx
				} else {
					s.cand, s.candIncl = s.cand+self/tx, s.candIncl+incl/tx
				}
			}
		}
	}
	if n == 0 || delta == 0 {
		return CountedChange{}, false
	}
	delta /= float64(n)
	baseTotal /= float64(n)
	cc := CountedChange{Clients: st.Clients, Measure: p.prefix + k.measure, Process: p.name, Change: c, Delta: delta}
	var self, inside []FunctionDelta
	for kk, s := range fns {
		fd := FunctionDelta{Function: kk.fn, Object: kk.ob, Base: s.base / float64(n), Cand: s.cand / float64(n)}
		fd.Delta = fd.Cand - fd.Base
		fd.Share = fd.Delta / delta
		if math.Abs(fd.Share) >= minSelfShare {
			self = append(self, fd)
		}
		in := FunctionDelta{Function: kk.fn, Object: kk.ob, Base: s.baseIncl / float64(n), Cand: s.candIncl / float64(n)}
		in.Delta = in.Cand - in.Base
		in.Share = in.Delta / delta
		// A function the change is inside holds it with its callees,
		// not in its own code alone, and is not one of the roots that
		// hold about everything (PostgresMain).
		if in.Share >= insideShare && math.Abs(in.Delta-fd.Delta) >= minSelfShare*math.Abs(delta) && math.Max(in.Base, in.Cand) < rootShare*baseTotal {
			inside = append(inside, in)
		}
	}
	sort.Slice(self, func(i, j int) bool {
		if a, b := math.Abs(self[i].Delta), math.Abs(self[j].Delta); a != b {
			return a > b
		}
		return self[i].Function < self[j].Function
	})
	cc.Self = self[:min(len(self), maxSelfFunctions)]
	// The most specific function holding most of the change: the one
	// that costs least with its callees.
	sort.Slice(inside, func(i, j int) bool {
		a, b := math.Max(inside[i].Base, inside[i].Cand), math.Max(inside[j].Base, inside[j].Cand)
		if a != b {
			return a < b
		}
		return inside[i].Function < inside[j].Function
	})
	if len(inside) > 0 {
		cc.Inside = &inside[0]
	}
	what := k.what
	if p.prefix != "" {
		what = p.name + "'s " + what
	}
	cc.Text = countedText(cc, what)
	return cc, true
}

// counts is what a step counted of the server's client backends under
// Valgrind, nil when it counted nothing.
func counts(s result.Step) *result.Instructions {
	if s.Probes == nil || s.Probes.Instructions() == nil || s.Probes.Instructions().Transactions <= 0 {
		return nil
	}
	return s.Probes.Instructions()
}

// poolerCounts are a step's pooler counts (all its processes) in the
// shape of the server's, for the same explanation; nil without them.
func poolerCounts(s result.Step) *result.Instructions {
	i := counts(s)
	if i == nil || i.Pooler == nil {
		return nil
	}
	return &result.Instructions{Transactions: i.Transactions, ClientBackends: i.Pooler.Instructions, ClientSyscalls: i.Pooler.Syscalls,
		Functions: i.PoolerFunctions, FunctionsFloor: i.PoolerFunctionsFloor}
}

// countedText is a counted change's sentence: "instr/txn at 1 client +357
// (+0.83% ± 0.10%): own instructions StrategyGetBuffer +118 (33%), ...;
// 84% of it (+300) inside ReadBufferExtended."
func countedText(cc CountedChange, what string) string {
	s := fmt.Sprintf("%s at %s %s (%s)", cc.Measure, prose.Count(cc.Clients, "client"), perTxn(cc.Delta), stats.FormatChange(cc.Change.Change, cc.Change.Lo, cc.Change.Hi))
	var parts []string
	for _, f := range cc.Self {
		// A function that moved against the change offsets part of it:
		// "+88448 (-38%)" read as a gain that was a loss.
		share := prose.Share(f.Share)
		if f.Share < 0 {
			share = "against the change: offsets " + prose.Share(-f.Share) + " of it"
		}
		parts = append(parts, fmt.Sprintf("%s %s (%s)", f.Name(), perTxn(f.Delta), share))
	}
	if len(parts) > 0 {
		s += ": " + what + " " + strings.Join(parts, ", ")
	}
	if in := cc.Inside; in != nil {
		sep := "; "
		if len(parts) == 0 {
			sep = ": "
		}
		s += fmt.Sprintf("%s%s of it (%s) inside %s", sep, prose.Share(in.Share), perTxn(in.Delta), in.Name())
	}
	if len(parts) == 0 && cc.Inside == nil {
		s += ": spread over many functions, none of which holds 5% of it"
	}
	return s + "."
}

// perTxn formats a signed count per transaction with the digits its size
// needs: +357, +6.5, +0.25.
func perTxn(x float64) string {
	switch a := math.Abs(x); {
	case a >= 10:
		return fmt.Sprintf("%+.0f", x)
	case a >= 1:
		return fmt.Sprintf("%+.1f", x)
	}
	return fmt.Sprintf("%+.2f", x)
}
