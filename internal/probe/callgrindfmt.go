package probe

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
)

// CallgrindDump is one callgrind dump of one process: what it executed
// between two dumps (or a zero and a dump), per function and per call.
type CallgrindDump struct {
	PID     int
	Trigger string // "dump HINT" for a dump asked for with that hint
	// Part is the dump's number in its process (1 for the first), when
	// callgrind says it: a process dumped more than once (--dump-before,
	// --dump-after, client requests) has one part per dump and the last
	// at its end.
	Part int
	// Totals are the dump's totals per event (Ir, and with
	// --collect-systime sysCount and sysTime).
	Totals map[string]uint64
	// Self is each function's own cost, Calls the inclusive cost of the
	// calls from one function to another, as callgrind measured them.
	Self  map[CallgrindFunc]Cost
	Calls map[[2]CallgrindFunc]Cost
	// Caches are the simulated caches as callgrind describes them, by
	// level ("I1", "D1", "LL"): "32768 B, 64 B, 8-way associative";
	// empty without the cache simulation.
	Caches map[string]string
}

// Cost is what callgrind counted of code: instructions (Ir), system
// calls (sysCount, with --collect-systime), and with the cache and branch
// simulation (--cache-sim=yes --branch-sim=yes) the accesses and misses
// it simulated (Sim).
type Cost struct {
	Ir, Syscalls uint64
	Sim          Sim
}

// Sim is what callgrind's cache and branch simulation counted, in its own
// event names: data reads and writes (Dr, Dw); L1 misses of instruction
// fetches, data reads and writes (I1mr, D1mr, D1mw) and last-level misses
// of the same (ILmr, DLmr, DLmw); conditional and indirect branches
// executed (Bc, Bi) and mispredicted (Bcm, Bim). All zero without the
// simulation.
type Sim struct {
	Dr, Dw, I1mr, D1mr, D1mw, ILmr, DLmr, DLmw, Bc, Bcm, Bi, Bim uint64
}

// numEvents is how many events a Cost holds; simEvents names them in
// vec's order after Ir and sysCount.
const numEvents = 14

var eventNames = [numEvents]string{"Ir", "sysCount", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw", "Bc", "Bcm", "Bi", "Bim"}

// vec is the cost as an array, in eventNames' order.
func (c Cost) vec() [numEvents]uint64 {
	s := c.Sim
	return [numEvents]uint64{c.Ir, c.Syscalls, s.Dr, s.Dw, s.I1mr, s.D1mr, s.D1mw, s.ILmr, s.DLmr, s.DLmw, s.Bc, s.Bcm, s.Bi, s.Bim}
}

// costOf is the cost of an array in eventNames' order.
func costOf(v [numEvents]uint64) Cost {
	return Cost{Ir: v[0], Syscalls: v[1], Sim: Sim{v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12], v[13]}}
}

// Add returns the sum of two costs.
func (c Cost) Add(o Cost) Cost { return c.add(o) }

func (c Cost) add(o Cost) Cost {
	a, b := c.vec(), o.vec()
	for i := range a {
		a[i] += b[i]
	}
	return costOf(a)
}

// sub takes o off c, never below zero.
func (c Cost) sub(o Cost) Cost {
	a, b := c.vec(), o.vec()
	for i := range a {
		a[i] -= min(a[i], b[i])
	}
	return costOf(a)
}

// L1Misses are the simulated L1 misses: instruction fetches, data reads
// and data writes.
func (s Sim) L1Misses() uint64 { return s.I1mr + s.D1mr + s.D1mw }

// LLMisses are the simulated last-level misses: what went to memory.
func (s Sim) LLMisses() uint64 { return s.ILmr + s.DLmr + s.DLmw }

// BranchMisses are the mispredicted branches, conditional and indirect.
func (s Sim) BranchMisses() uint64 { return s.Bcm + s.Bim }

// CycleModel names the cost model EstCycles applies, as the result file
// and the reports state it.
const CycleModel = "iai-callgrind's: L1 hits + 5 × LL hits + 35 × RAM hits (a model, not a measurement)"

// EstCycles estimates the cycles the cost took from the simulation's
// counts with iai-callgrind's model (CycleModel), which it took from
// Itamar Turner-Trauring's cachegrind benchmarking: every instruction
// fetch and data access that hit L1 costs 1, one that missed L1 and hit
// the last level 5, one that went to memory 35. Without the simulation
// it is 0.
func (c Cost) EstCycles() uint64 {
	s := c.Sim
	if s == (Sim{}) {
		return 0
	}
	l1m, llm := s.L1Misses(), s.LLMisses()
	acc := c.Ir + s.Dr + s.Dw
	l1Hits := acc - min(acc, l1m)
	llHits := l1m - min(l1m, llm)
	return l1Hits + 5*llHits + 35*llm
}

// CallgrindFunc is a function as callgrind names it, with the object file
// it is in.
type CallgrindFunc struct{ Name, Object string }

// ParseCallgrind reads a dump in callgrind's format (name compression
// "(id) name" included; positions are skipped) and keeps the events a
// Cost holds (instructions, system calls, and the cache and branch
// simulation's), per function and call.
func ParseCallgrind(r io.Reader) (*CallgrindDump, error) {
	d := &CallgrindDump{Totals: map[string]uint64{}, Self: map[CallgrindFunc]Cost{}, Calls: map[[2]CallgrindFunc]Cost{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var events []string
	npos := 1
	names := map[string]map[string]string{} // kind ("fn", "ob", "fl") -> id -> name
	resolve := func(kind, v string) string {
		if names[kind] == nil {
			names[kind] = map[string]string{}
		}
		if !strings.HasPrefix(v, "(") {
			return v
		}
		id, rest, _ := strings.Cut(v[1:], ")")
		if rest = strings.TrimSpace(rest); rest != "" {
			names[kind][id] = rest
			return rest
		}
		return names[kind][id]
	}
	var ob, cob, fn string
	var cfn string
	callPending := false
	// slot[i] is where event i of the dump's goes in a Cost's vec, -1
	// for an event pgscale does not read.
	var slot []int
	ir := -1
	line := 0
	for sc.Scan() {
		line++
		s := sc.Text()
		if s == "" || s[0] == '#' {
			continue
		}
		c := s[0]
		if c >= '0' && c <= '9' || c == '+' || c == '-' || c == '*' {
			f := strings.Fields(s)
			if len(f) < npos {
				return nil, fmt.Errorf("callgrind line %d: cost line %q has no position", line, s)
			}
			var vec [numEvents]uint64
			for i, x := range f[npos:] {
				if i >= len(slot) || slot[i] < 0 {
					continue
				}
				n, err := strconv.ParseUint(x, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("callgrind line %d: %q: %v", line, s, err)
				}
				vec[slot[i]] = n
			}
			v := costOf(vec)
			self := CallgrindFunc{fn, ob}
			if callPending {
				k := [2]CallgrindFunc{self, {cfn, cob}}
				d.Calls[k] = d.Calls[k].add(v)
				callPending = false
				// callgrind writes cob= only for a callee in another
				// object than the caller's: it holds for one call.
				cob = ob
			} else {
				d.Self[self] = d.Self[self].add(v)
			}
			continue
		}
		key, val, ok := strings.Cut(s, "=")
		if !ok || strings.Contains(key, ":") {
			// A header line, "desc: Trigger: --dump-before=FUNC" too.
			key, val, ok = strings.Cut(s, ":")
			if !ok {
				continue
			}
			val = strings.TrimSpace(val)
			switch key {
			case "events":
				events = strings.Fields(val)
				slot = make([]int, len(events))
				for i, e := range events {
					slot[i] = -1
					for j, n := range eventNames {
						if e == n {
							slot[i] = j
						}
					}
					if e == "Ir" {
						ir = i
					}
				}
			case "positions":
				npos = len(strings.Fields(val))
			case "pid":
				d.PID, _ = strconv.Atoi(val)
			case "part":
				d.Part, _ = strconv.Atoi(val)
			case "desc":
				if t, ok := strings.CutPrefix(val, "Trigger:"); ok {
					d.Trigger = strings.TrimSpace(t)
				}
				for _, c := range []string{"I1", "D1", "LL"} {
					// Without the simulation callgrind still writes the
					// lines, with nothing after the colon.
					if g, ok := strings.CutPrefix(val, c+" cache:"); ok && strings.TrimSpace(g) != "" {
						if d.Caches == nil {
							d.Caches = map[string]string{}
						}
						d.Caches[c] = strings.TrimSpace(g)
					}
				}
			case "totals":
				for i, f := range strings.Fields(val) {
					if i < len(events) {
						d.Totals[events[i]], _ = strconv.ParseUint(f, 10, 64)
					}
				}
			}
			continue
		}
		switch key {
		case "ob":
			ob = resolve("ob", val)
			cob = ob
		case "fn":
			fn = resolve("fn", val)
			cob = ob
		case "cob":
			cob = resolve("ob", val)
		case "cfn", "cfi", "cfl":
			if key == "cfn" {
				cfn = resolve("fn", val)
			} else {
				resolve("fl", val)
			}
		case "fl", "fi", "fe":
			resolve("fl", val)
		case "calls":
			callPending = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if ir < 0 {
		return nil, fmt.Errorf("callgrind dump without the Ir event (events: %v)", events)
	}
	return d, nil
}

// Inclusive returns each function's cost with that of its callees (its
// own cost plus that of the calls it made).
func (d *CallgrindDump) Inclusive() map[CallgrindFunc]Cost {
	m := map[CallgrindFunc]Cost{}
	for f, v := range d.Self {
		m[f] = m[f].add(v)
	}
	for k, v := range d.Calls {
		if k[0] != k[1] {
			m[k[0]] = m[k[0]].add(v)
		}
	}
	return m
}

// Total is the dump's cost: every function's own.
func (d *CallgrindDump) Total() Cost {
	var t Cost
	for _, v := range d.Self {
		t = t.add(v)
	}
	return t
}

// Inside is the cost of the function named (in any object, at any of
// callgrind's recursion levels: "secure_read'2") with that of everything
// it called: the part of the total that ran inside it, what Functions
// leaves out for it.
func (d *CallgrindDump) Inside(name string) Cost {
	var kept Cost
	for _, fc := range d.Functions([]string{name}) {
		kept = kept.add(fc.Self)
	}
	return d.Total().sub(kept)
}

// skipSet is the set of functions named in exclude, matched by name at any
// recursion level (skips). A backend whose counting was switched off
// while it waited in secure_read, and on again after it ran on
// uninstrumented, keeps that frame on callgrind's shadow stack: its next
// calls to secure_read are named "secure_read'2", and left in the count
// under that name, they made an A/A comparison through a pooler, where
// backends are counted again in later steps, differ by 0.14 %.
type skipSet map[string]bool

func skips(exclude []string) skipSet {
	s := skipSet{}
	for _, n := range exclude {
		s[n] = true
	}
	return s
}

func (s skipSet) has(f CallgrindFunc) bool {
	n, _ := recursionLevel(f.Name)
	return s[n]
}

// FuncCost is one function's cost in a dump: its own, and with what it
// called (callgrind's inclusive cost).
type FuncCost struct{ Self, Inclusive Cost }

// Functions returns each function's own and inclusive cost without the
// functions named in exclude and what ran inside them, as Inside takes
// them off the count: their callees' share is taken off what those
// callees cost, and what the calls to them cost is taken off the
// inclusive cost of their callers and of the callers' callers. Where a
// callee is also called from elsewhere, its cost is shared among its
// callers in proportion to what each call cost (CallgrindProfile's
// assumption). The functions excluded are assumed not to run inside one
// another. Functions whose cost is then nothing are left out.
func (d *CallgrindDump) Functions(exclude []string) map[CallgrindFunc]FuncCost {
	skip := skips(exclude)
	incl := d.Inclusive()
	callees := map[CallgrindFunc][]CallgrindFunc{}
	callers := map[CallgrindFunc][]CallgrindFunc{}
	for k := range d.Calls {
		if k[0] != k[1] {
			callees[k[0]] = append(callees[k[0]], k[1])
			callers[k[1]] = append(callers[k[1]], k[0])
		}
	}
	exSelf, exIncl := map[CallgrindFunc]Cost{}, map[CallgrindFunc]Cost{}
	onPath := map[CallgrindFunc]bool{}
	// down takes the flow w into g (a part of its inclusive cost, reached
	// from an excluded function) off g and, in proportion, off its callees.
	var down func(g CallgrindFunc, w Cost)
	down = func(g CallgrindFunc, w Cost) {
		if w.Ir == 0 && w.Syscalls == 0 {
			return
		}
		onPath[g] = true
		exIncl[g] = exIncl[g].add(w)
		r := ratio(w, incl[g])
		exSelf[g] = exSelf[g].add(mul(d.Self[g], r))
		for _, h := range callees[g] {
			if !onPath[h] && !skip.has(h) {
				down(h, mul(d.Calls[[2]CallgrindFunc{g, h}], r))
			}
		}
		onPath[g] = false
	}
	// up takes loss, a part of what c's calls to an excluded function
	// cost, off c's inclusive cost and, in proportion, off its callers'.
	var up func(c CallgrindFunc, loss Cost)
	up = func(c CallgrindFunc, loss Cost) {
		if loss.Ir == 0 && loss.Syscalls == 0 {
			return
		}
		onPath[c] = true
		exIncl[c] = exIncl[c].add(loss)
		r := ratio(loss, incl[c])
		for _, b := range callers[c] {
			if !onPath[b] && !skip.has(b) {
				up(b, mul(d.Calls[[2]CallgrindFunc{b, c}], r))
			}
		}
		onPath[c] = false
	}
	var roots []CallgrindFunc
	for f := range incl {
		if skip.has(f) {
			roots = append(roots, f)
		}
	}
	sortFuncs(roots)
	for _, e := range roots {
		onPath[e] = true
		for _, h := range callees[e] {
			if !skip.has(h) {
				down(h, d.Calls[[2]CallgrindFunc{e, h}])
			}
		}
		for _, c := range callers[e] {
			if !skip.has(c) {
				up(c, d.Calls[[2]CallgrindFunc{c, e}])
			}
		}
		onPath[e] = false
	}
	out := map[CallgrindFunc]FuncCost{}
	for f, in := range incl {
		if skip.has(f) {
			continue
		}
		fc := FuncCost{Self: d.Self[f].sub(exSelf[f]), Inclusive: in.sub(exIncl[f])}
		if fc.Inclusive.Ir > 0 || fc.Inclusive.Syscalls > 0 {
			out[f] = fc
		}
	}
	return out
}

// ratio is, event by event, the share part is of whole (0 where whole is
// 0, at most 1).
func ratio(part, whole Cost) [numEvents]float64 {
	p, w := part.vec(), whole.vec()
	var r [numEvents]float64
	for i := range r {
		if w[i] > 0 {
			r[i] = min(float64(p[i])/float64(w[i]), 1)
		}
	}
	return r
}

// mul is c scaled event by event by r, rounded to whole events.
func mul(c Cost, r [numEvents]float64) Cost {
	v := c.vec()
	for i := range v {
		v[i] = uint64(float64(v[i])*r[i] + 0.5)
	}
	return costOf(v)
}

// minStackShare is the smallest share of a dump's instructions a
// reconstructed stack is followed for; what is below it stays with the
// caller.
const minStackShare = 1e-5

// CallgrindProfile turns dumps into a pprof profile of instructions. Each
// function's own instructions are exact; the stacks are rebuilt from the
// call graph callgrind keeps (the cost of each call from one function to
// another), assuming a function costs the same per call whoever calls it,
// as gprof does: a function's cost on a path is its cost shared among its
// callers in proportion to what each call cost. Every sample carries the
// process's pid and kind (kinds names them).
//
// The functions named in exclude are left out with all they called, as
// Inside takes them off the count.
func CallgrindProfile(dumps []*CallgrindDump, kinds map[int]string, step string, exclude ...string) (*profile.Profile, error) {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "instructions", Unit: "count"}},
		PeriodType: &profile.ValueType{Type: "instructions", Unit: "count"},
		Period:     1,
		Comments:   []string{"valgrind --tool=callgrind, counted in the measured window; stacks rebuilt from callgrind's call graph by pgscale"},
	}
	mappings := map[string]*profile.Mapping{}
	locs := map[CallgrindFunc]*profile.Location{}
	funcs := map[string]*profile.Function{}
	location := func(f CallgrindFunc) *profile.Location {
		if l := locs[f]; l != nil {
			return l
		}
		m := mappings[f.Object]
		if m == nil {
			m = &profile.Mapping{ID: uint64(len(mappings) + 1), File: f.Object}
			mappings[f.Object] = m
			p.Mapping = append(p.Mapping, m)
		}
		fn := funcs[f.Name]
		if fn == nil {
			fn = &profile.Function{ID: uint64(len(funcs) + 1), Name: f.Name, SystemName: f.Name}
			funcs[f.Name] = fn
			p.Function = append(p.Function, fn)
		}
		l := &profile.Location{ID: uint64(len(locs) + 1), Mapping: m, Line: []profile.Line{{Function: fn}}}
		locs[f] = l
		p.Location = append(p.Location, l)
		return l
	}
	for _, d := range dumps {
		labels := map[string][]string{"backend_type": {kinds[d.PID]}, "step": {step}}
		for _, sc := range d.stacks(exclude) {
			if sc.v <= 0 {
				continue
			}
			s := &profile.Sample{Value: []int64{sc.v}, Label: labels, NumLabel: map[string][]int64{"pid": {int64(d.PID)}}}
			for i := len(sc.path) - 1; i >= 0; i-- { // leaf first
				s.Location = append(s.Location, location(sc.path[i]))
			}
			p.Sample = append(p.Sample, s)
		}
	}
	return p, p.CheckValid()
}

// stackCost is one rebuilt call stack, root first, and its own
// instructions.
type stackCost struct {
	path []CallgrindFunc
	v    int64
}

// stacks rebuilds the dump's call stacks (CallgrindProfile), without the
// functions named in exclude and their callees. The stacks' instructions
// add up to the dump's own less those excluded: where recursion makes the
// call graph's inclusive costs overlap, they are scaled to that sum.
func (d *CallgrindDump) stacks(exclude []string) []stackCost {
	skip := skips(exclude)
	incl := d.Inclusive()
	callees := map[CallgrindFunc][]CallgrindFunc{}
	into := map[CallgrindFunc]uint64{}
	for k, v := range d.Calls {
		if k[0] == k[1] || v.Ir == 0 {
			continue
		}
		callees[k[0]] = append(callees[k[0]], k[1])
		into[k[1]] += v.Ir
	}
	for _, cs := range callees {
		sortFuncs(cs)
	}
	var total uint64
	for _, fc := range d.Functions(exclude) {
		total += fc.Self.Ir
	}
	floor := float64(total) * minStackShare
	var out []stackCost
	var raw []float64
	var path []CallgrindFunc
	onPath := map[CallgrindFunc]bool{}
	var walk func(f CallgrindFunc, w float64)
	walk = func(f CallgrindFunc, w float64) {
		path = append(path, f)
		onPath[f] = true
		scale := w / float64(max(incl[f].Ir, 1))
		kept := float64(d.Self[f].Ir) * scale
		for _, g := range callees[f] {
			e := float64(d.Calls[[2]CallgrindFunc{f, g}].Ir) * scale
			if skip.has(g) {
				continue
			}
			if onPath[g] || e < floor {
				kept += e // recursion, or too small to follow: stays here
				continue
			}
			walk(g, e)
		}
		if kept > 0 {
			out = append(out, stackCost{path: append([]CallgrindFunc(nil), path...)})
			raw = append(raw, kept)
		}
		onPath[f] = false
		path = path[:len(path)-1]
	}
	// Roots: what no caller explains (the functions running when counting
	// began, and the program's entry).
	var roots []CallgrindFunc
	for f := range incl {
		if incl[f].Ir > into[f] && !skip.has(f) {
			roots = append(roots, f)
		}
	}
	sortFuncs(roots)
	for _, f := range roots {
		walk(f, float64(incl[f].Ir-into[f]))
	}
	var sum float64
	for _, v := range raw {
		sum += v
	}
	for i := range out {
		out[i].v = int64(raw[i]*float64(total)/max(sum, 1) + 0.5)
	}
	return out
}

func sortFuncs(fs []CallgrindFunc) {
	sort.Slice(fs, func(i, j int) bool {
		return fs[i].Name < fs[j].Name || fs[i].Name == fs[j].Name && fs[i].Object < fs[j].Object
	})
}
